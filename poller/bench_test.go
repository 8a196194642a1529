package poller_test

import (
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/cloudsim"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/poller"
)

// BenchmarkPollCycle runs full poll cycles against the simulator with an
// injected latency on every request. It reports the API calls of a cycle
// next to the least the API allows (2 + services + VPCs, plus the auth
// info, in the first revision; 2 + VPCs + 1 in revision 2026, whose
// services carry their replica sets), and the cycle time as a multiple of
// the bound that latency, concurrency and the rate limit set: x_bound close
// to 1 means the poller wastes neither calls nor parallelism (the bound
// leaves out decoding, which the large answers of revision 2026 make
// visible).
func BenchmarkPollCycle(b *testing.B) {
	const latency = 5 * time.Millisecond
	for _, tc := range []struct {
		services, vpcs, concurrency int
		rate                        float64
		rev                         string
	}{
		// The first revision: one replica-set list per service.
		{100, 10, 4, 1000, cloudsim.Revision2024},
		{100, 10, 8, 1000, cloudsim.Revision2024},
		{1000, 100, 8, 1000, cloudsim.Revision2024},
		{1000, 100, 8, 400, cloudsim.Revision2024}, // rate limit bound
		// Revision 2026: replica sets come inline with the services.
		{1000, 100, 8, 1000, cloudsim.Revision2026},
	} {
		name := fmt.Sprintf("N=%d/concurrency=%d/rate=%g/revision=%s", tc.services, tc.concurrency, tc.rate, tc.rev)
		b.Run(name, func(b *testing.B) {
			creds := cloudsim.Credential{AccessKey: "ak", SecretKey: "sk", APIKey: "key", ProjectID: "bench"}
			sim := cloudsim.New(cloudsim.Options{Credentials: []cloudsim.Credential{creds}, Seed: 1, Revision: tc.rev})
			sim.LoadFleet("bench", cloudsim.Fleet{Services: tc.services, ReplicaSetsPerService: 2, VPCs: tc.vpcs, PeeringsPerVPC: 2})
			sim.AddFault(cloudsim.Fault{Latency: latency})
			srv := httptest.NewServer(sim)
			defer srv.Close()

			const burst = 10
			client, err := apiclient.New(apiclient.Config{
				BaseURL: srv.URL + "/v1", ProjectID: "bench",
				AccessKey: "ak", SecretKey: "sk", APIKey: "key",
				RateLimit: tc.rate, Burst: burst,
			})
			if err != nil {
				b.Fatal(err)
			}
			p := poller.New(client, poller.Options{Collect: config.Collect{Concurrency: tc.concurrency}})

			children := tc.vpcs
			if tc.rev == cloudsim.Revision2024 {
				children += tc.services
			}
			calls := 3 + children
			latencyBound := latency * time.Duration(1+int(math.Ceil(float64(children)/float64(tc.concurrency))))
			rateBound := time.Duration(float64(calls-burst) / tc.rate * float64(time.Second))
			bound := max(latencyBound, rateBound)

			sim.ResetRequestCounts()
			b.ResetTimer()
			start := time.Now()
			for range b.N {
				snap := p.Poll(context.Background())
				if len(snap.Services) != tc.services {
					b.Fatalf("got %d services", len(snap.Services))
				}
			}
			elapsed := time.Since(start)
			b.StopTimer()

			total := 0
			for _, n := range sim.RequestCounts() {
				total += n
			}
			b.ReportMetric(float64(total)/float64(b.N), "calls/cycle")
			b.ReportMetric(float64(calls), "min_calls")
			b.ReportMetric(float64(elapsed)/float64(b.N)/float64(bound), "x_bound")
		})
	}
}
