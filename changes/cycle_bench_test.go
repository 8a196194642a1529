package changes

import (
	"context"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/cloudsim"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/poller"
)

// BenchmarkDiffVsPollCycle runs full poll cycles of an unchanged fleet of N
// services (a replica set each, a VPC per 10 with two peerings) against the
// in-process simulator, the differ comparing every snapshot the poller
// publishes, as the exporter wires it. diff_share is the differ's time over
// the cycle's (the goal: at most 0.10); diff_ns the differ's per cycle.
func BenchmarkDiffVsPollCycle(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			creds := cloudsim.Credential{AccessKey: "bench-access", SecretKey: "bench-secret", APIKey: "bench-api-key", ProjectID: "bench"}
			sim := cloudsim.New(cloudsim.Options{Credentials: []cloudsim.Credential{creds}, Seed: 1})
			sim.LoadFleet("bench", cloudsim.Fleet{Services: n, ReplicaSetsPerService: 1, VPCs: n / 10, PeeringsPerVPC: 2})
			srv := httptest.NewServer(sim)
			defer srv.Close()
			client, err := apiclient.New(apiclient.Config{
				BaseURL: srv.URL + "/v1", ProjectID: "bench",
				AccessKey: apiclient.Secret(creds.AccessKey), SecretKey: apiclient.Secret(creds.SecretKey), APIKey: apiclient.Secret(creds.APIKey),
				RateLimit: 1e6, Burst: 1000,
			})
			if err != nil {
				b.Fatal(err)
			}
			d := newDiffer("bench")
			var diff time.Duration
			events := 0
			p := poller.New(client, poller.Options{Collect: config.Collect{Concurrency: 8}, Publish: func(s *fleet.Snapshot) {
				start := time.Now()
				events += len(d.observe(s))
				diff += time.Since(start)
			}})
			for range 2 { // the baseline, and the values shared from then on
				p.Poll(context.Background())
			}
			diff, events = 0, 0
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				p.Poll(context.Background())
			}
			elapsed := time.Since(start)
			b.StopTimer()
			if events != 0 {
				b.Fatalf("%d events from an unchanged fleet", events)
			}
			b.ReportMetric(float64(diff)/float64(elapsed), "diff_share")
			b.ReportMetric(float64(diff.Nanoseconds())/float64(b.N), "diff_ns/cycle")
		})
	}
}
