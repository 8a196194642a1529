package exposition

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/apimetrics"
	"github.com/clouddb/clouddb_exporter/internal/dataplanetest"
	"github.com/clouddb/clouddb_exporter/internal/fleettest"
)

func TestSelfGatherer(t *testing.T) {
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{Name: "clouddb_exporter_build_info", Help: "Build."})
	buildInfo.Set(1)
	for _, tc := range []struct {
		name string
		// registerTwice also registers the API metrics with others, the
		// mistake SelfGatherer must absorb.
		registerTwice bool
	}{{"separate", false}, {"registered twice", true}} {
		t.Run(tc.name, func(t *testing.T) {
			others := prometheus.NewRegistry()
			others.MustRegister(buildInfo)
			var api *apimetrics.Metrics
			if tc.registerTwice {
				api = apimetrics.New(others)
			} else {
				api = apimetrics.New(nil)
			}
			self := SelfGatherer(api, others)
			e := New(self, nil)
			defer e.Close()
			now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
			e.now = func() time.Time { return now }
			e.SetSnapshot(dataplanetest.Snapshots()[1])
			o := api.Observer("proj-b")

			// Each change must show in the first scrape selfGatherInterval
			// after the last encoding, in both formats, and not before:
			// the API metrics are served from a cache.
			for i := 1; i <= 3; i++ {
				o.ObserveRequest(apiclient.OpListServices, "200", time.Second)
				want := `clouddb_exporter_api_requests_total{code="200",operation="listServices",project_id="proj-b"} ` + strconv.Itoa(i)
				if i > 1 {
					now = now.Add(selfGatherInterval - time.Millisecond)
					if body := scrapeText(t, e); strings.Contains(body, want) {
						t.Errorf("scrape %d: encoded again before %s", i, selfGatherInterval)
					}
					now = now.Add(time.Millisecond)
				}
				for _, accept := range []string{acceptText, acceptPrometheus3} {
					body := string(readBody(t, scrape(t, e, accept, "")))
					if !strings.Contains(body, want) {
						t.Fatalf("scrape %d (%s): no %s in\n%s", i, accept[:10], want, body)
					}
					if n := strings.Count(body, "# TYPE clouddb_exporter_api_retries"); n != 1 {
						t.Errorf("%d TYPE lines for clouddb_exporter_api_retries_total", n)
					}
					for _, other := range []string{"clouddb_exporter_build_info 1", `clouddb_service_info{`} {
						if !strings.Contains(body, other) {
							t.Errorf("no %s", other)
						}
					}
					if accept == acceptText {
						parseText(t, []byte(body))
					}
				}
			}
			api.RemoveProject("proj-b")
			if body := scrapeText(t, e); strings.Contains(body, "clouddb_exporter_api_") {
				t.Errorf("API metrics of a removed project still served:\n%s", body)
			}

			// Outside the Exposition it is a plain Gatherer of both.
			api.Observer("proj-c")
			if n, err := testutil.GatherAndCount(self, "clouddb_exporter_api_retries_total", "clouddb_exporter_build_info"); err != nil || n != len(apiclient.Operations)+1 {
				t.Errorf("SelfGatherer gathers %d series (err %v), want %d", n, err, len(apiclient.Operations)+1)
			}
		})
	}
}

// TestScrapesShareOneDeflater: the self-metrics of a gzip scrape are
// compressed with the handler's one writer; a pool of writers was emptied
// by the collections, so most scrapes made a new one (about 1 MB).
func TestScrapesShareOneDeflater(t *testing.T) {
	e := New(prometheus.NewRegistry(), nil)
	e.SetSnapshot(fleettest.Synthetic("p", 10))
	scrapePrometheus(t, e)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const scrapes = 5
	for range scrapes {
		runtime.GC()
		runtime.GC() // a pool keeps its items through one collection
		scrapePrometheus(t, e)
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / scrapes; per > 1<<20 {
		t.Errorf("a gzip scrape allocated %d B (with its reading here), want under 1 MiB", per)
	}
}
