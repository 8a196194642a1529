package exposition

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/clouddb/clouddb_exporter/dataplane"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/dataplanetest"
	"github.com/clouddb/clouddb_exporter/internal/fleettest"
)

// BenchmarkUsagePublish is a publish of the usage during a read (every 5 s)
// and the scrape after it: a run of services in id order (a read's order),
// a twentieth of the fleet, has new values, and the chunks that hold them
// are rendered again (chunks_changed/op).
func BenchmarkUsagePublish(b *testing.B) {
	for _, n := range []int{2000, 10000} {
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			snaps := []*fleet.Snapshot{dataplanetest.WithDataPlane(fleettest.Synthetic("bench", n)), dataplanetest.WithDataPlane(fleettest.Synthetic("bench", n))}
			bumpUsage(snaps[1], n/3, n/3+n/20)
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			req.Header.Set("Accept", acceptPrometheus3)
			req.Header.Set("Accept-Encoding", "gzip")
			w := &discardResponse{header: http.Header{}}
			e := New(nil, nil)
			e.SetSnapshot(snaps[0])
			e.ServeHTTP(w, req)
			before := e.statsNow()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++
				e.SetSnapshot(snaps[i%2])
				e.ServeHTTP(w, req)
			}
			b.ReportMetric(float64(e.statsNow().changed-before.changed)/float64(i), "chunks_changed/op")
		})
	}
}

// bumpUsage gives services [from, to) of s new usage values.
func bumpUsage(s *fleet.Snapshot, from, to int) {
	for _, svc := range fleet.DataOf[dataplane.Usage](s, dataplane.PartUsage).Services[from:to] {
		for i := range svc.Points {
			svc.Points[i].Value++
		}
	}
}
