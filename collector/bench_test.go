package collector

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

var benchSizes = []int{100, 1000, 10000}

// syntheticSnapshot returns a project with n services, each with one
// resource and two replica sets, and one VPC per ten services with two
// peerings each.
func syntheticSnapshot(projectID string, n int) *fleet.Snapshot {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	s := &fleet.Snapshot{ProjectID: projectID, Taken: now}
	for i := range n {
		id := fmt.Sprintf("svc-%06d", i)
		s.Services = append(s.Services, fleet.Service{
			Service: apiclient.Service{
				ServiceID: id, ProjectID: projectID, Name: "service-" + strconv.Itoa(i), RegionCode: "eu-central-1",
				ServiceType: apiclient.ServiceTypeTimeSeries, Status: apiclient.ServiceStatuses[i%len(apiclient.ServiceStatuses)],
				Created:   apiclient.Time{Time: now.Add(-time.Duration(i) * time.Hour)},
				Resources: []apiclient.Resource{{ID: "res-" + id, Spec: &apiclient.ResourceSpec{CPUMillis: 2000, MemoryGBs: 8, VolumeType: "gp3"}}},
				Metadata:  &apiclient.Metadata{Environment: apiclient.EnvironmentProd},
				Endpoint:  &apiclient.Endpoint{Host: id + ".example.net", Port: 5432},
			},
			StatusSince: now.Add(-time.Minute),
		})
		for r := range 2 {
			s.ReplicaSets = append(s.ReplicaSets, fleet.ReplicaSet{
				ServiceID: id,
				ReplicaSet: apiclient.ReplicaSet{
					ID: fmt.Sprintf("rs-%06d-%d", i, r), Name: "replica-" + strconv.Itoa(r), Status: apiclient.ReplicaSetActive,
					Nodes: 2, CPUMillis: 1000, MemoryGBs: 4,
					Endpoint: &apiclient.Endpoint{Host: id + "-rs.example.net", Port: 5433},
				},
				StatusSince: now.Add(-time.Hour),
			})
		}
		if i%10 == 0 {
			vpc := fmt.Sprintf("vpc-%06d", i/10)
			s.VPCs = append(s.VPCs, apiclient.VPC{ID: vpc, Name: "net-" + vpc, CIDR: "10.0.0.0/16", RegionCode: "eu-central-1"})
			for p := range 2 {
				s.Peerings = append(s.Peerings, fleet.Peering{
					VPCID: vpc,
					Peering: apiclient.Peering{
						ID: fmt.Sprintf("peer-%s-%d", vpc, p), PeerAccountID: "123456789012", PeerRegionCode: "us-east-1",
						PeerVPCID: "vpc-peer", ProvisionedID: "pcx-" + vpc, Status: apiclient.PeeringActive,
					},
					StatusSince: now.Add(-time.Hour),
				})
			}
		}
	}
	for _, part := range fleet.Parts {
		s.Parts = append(s.Parts, fleet.PartHealth{Name: part, Success: true, Duration: time.Second, LastSuccess: now})
	}
	return s
}

// benchSelf returns what main registers besides the resources, less the
// Go and process collectors, whose cost does not grow with the fleet:
// APIMetrics (one project, every operation observed once) and build info,
// both in one registry (reg) and as SelfGatherer wires them (self, where the
// registry holds the build info only).
func benchSelf() (reg *prometheus.Registry, self prometheus.Gatherer) {
	reg = prometheus.NewRegistry()
	api := NewAPIMetrics(reg)
	o := api.Observer("bench")
	for _, op := range apiclient.Operations {
		o.ObserveRequest(op, "200", 150*time.Millisecond)
		o.ObserveRetry(op)
	}
	o.ObserveRateLimitWait(apiclient.OpListServices, time.Second)
	reg.MustRegister(version.NewCollector("clouddb_exporter"))
	others := prometheus.NewRegistry()
	others.MustRegister(version.NewCollector("clouddb_exporter"))
	return reg, SelfGatherer(api, others)
}

// discardResponse is a ResponseWriter that copies what it is given into a
// fixed buffer, as a write to a socket copies into the kernel, so that the
// benchmark measures the handler and the bytes it moves rather than a
// recorder's growing buffer.
type discardResponse struct {
	header http.Header
	n      int64
	sink   [32 << 10]byte
}

func (d *discardResponse) Header() http.Header { return d.header }
func (d *discardResponse) Write(p []byte) (int, error) {
	for rest := p; len(rest) > 0; {
		rest = rest[copy(d.sink[:], rest):]
	}
	d.n += int64(len(p))
	return len(p), nil
}
func (d *discardResponse) WriteHeader(int) {}

func benchHandler(b *testing.B, h http.Handler, req *http.Request) {
	w := &discardResponse{header: http.Header{}}
	h.ServeHTTP(w, req)
	b.SetBytes(w.n)
	b.ReportAllocs()
	for b.Loop() {
		clear(w.header)
		w.n = 0
		h.ServeHTTP(w, req)
	}
}

func BenchmarkScrape(b *testing.B) {
	for _, n := range benchSizes {
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			snap := syntheticSnapshot("bench", n)
			reg, self := benchSelf()
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			req.Header.Set("Accept", acceptText)

			cached := NewExposition(self, nil)
			cached.SetSnapshot(snap)
			// The same with the registry as self: the API metrics are
			// gathered and encoded on every scrape.
			cachedRegistrySelf := NewExposition(reg, nil)
			cachedRegistrySelf.SetSnapshot(snap)
			rec := httptest.NewRecorder()
			cached.ServeHTTP(rec, req)
			body := rec.Body.Bytes()

			constReg := prometheus.NewRegistry()
			constReg.MustRegister(NewFleetCollectorOf(snap))
			constHandler := promhttp.HandlerFor(prometheus.Gatherers{constReg, reg}, promhttp.HandlerOpts{})

			bytesHandler := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
				_, _ = w.Write(body)
			})

			b.Run("cached", func(b *testing.B) { benchHandler(b, cached, req) })
			b.Run("cached_registry_self", func(b *testing.B) { benchHandler(b, cachedRegistrySelf, req) })
			b.Run("const_registry", func(b *testing.B) { benchHandler(b, constHandler, req) })
			b.Run("bytes", func(b *testing.B) { benchHandler(b, bytesHandler, req) })
		})
	}
}

// BenchmarkRender measures what a poll costs the exposition: rendering a
// changed snapshot in both formats, and with the first gzip scrape after
// it, which compresses the cached part once.
func BenchmarkRender(b *testing.B) {
	for _, n := range benchSizes {
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			snap := syntheticSnapshot("bench", n)
			e := NewExposition(nil, nil)
			b.Run("set_snapshot", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					e.SetSnapshot(snap)
				}
			})
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			req.Header.Set("Accept", acceptPrometheus3)
			req.Header.Set("Accept-Encoding", "gzip")
			b.Run("set_snapshot+first_gzip_scrape", func(b *testing.B) {
				b.ReportAllocs()
				w := &discardResponse{header: http.Header{}}
				for b.Loop() {
					e.SetSnapshot(snap)
					e.ServeHTTP(w, req)
				}
			})
		})
	}
}
