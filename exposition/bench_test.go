package exposition

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/apimetrics"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/collectortest"
	"github.com/clouddb/clouddb_exporter/internal/fleettest"
)

var benchSizes = []int{100, 1000, 10000}

// benchSelf returns what main serves besides the resources, wired as main
// wires it: APIMetrics (one project, every operation observed once) through
// SelfGatherer, with build info, Go and process collectors in a registry
// (self), and the same in one registry gathered on every scrape (reg).
func benchSelf() (reg *prometheus.Registry, self prometheus.Gatherer) {
	reg = prometheus.NewRegistry()
	api := apimetrics.New(reg)
	o := api.Observer("bench")
	for _, op := range apiclient.Operations {
		o.ObserveRequest(op, "200", 150*time.Millisecond)
		o.ObserveRetry(op)
	}
	o.ObserveRateLimitWait(apiclient.OpListServices, time.Second)
	others := prometheus.NewRegistry()
	for _, r := range []*prometheus.Registry{reg, others} {
		r.MustRegister(
			version.NewCollector("clouddb_exporter"),
			collectors.NewGoCollector(),
			collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		)
	}
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

// benchInterleaved serves h and its baseline in turn, one scrape each per
// iteration, so that both see the same machine: on a shared, noisy host,
// two benchmarks run one after the other compare two different loads. It
// reports the median over iterations of h's time divided by the
// baseline's (x_baseline), which a burst of load on the machine moves
// little, and the allocations of both scrapes together per iteration (the
// baseline makes none of its own).
func benchInterleaved(b *testing.B, h, baseline http.Handler, req *http.Request) {
	w := &discardResponse{header: http.Header{}}
	h.ServeHTTP(w, req)
	b.SetBytes(w.n)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	ratios := interleave(b, func() {
		clear(w.header)
		h.ServeHTTP(w, req)
	}, func() {
		clear(w.header)
		baseline.ServeHTTP(w, req)
	})
	runtime.ReadMemStats(&after)
	b.ReportMetric(median(ratios), "x_baseline")
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(len(ratios)), "allocs/scrape")
}

// interleave runs a then baseline once per iteration and returns the
// ratio of their times in each.
func interleave(b *testing.B, a, baseline func()) []float64 {
	var ratios []float64
	for b.Loop() {
		start := time.Now()
		a()
		mid := time.Now()
		baseline()
		ratios = append(ratios, float64(mid.Sub(start))/float64(time.Since(mid)))
	}
	return ratios
}

func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}

// benchInterleavedHTTP is benchInterleaved through a loopback HTTP server
// and client, reading the (still compressed) body to the end.
func benchInterleavedHTTP(b *testing.B, h, baseline http.Handler, req *http.Request) {
	srvH, srvBase := httptest.NewServer(h), httptest.NewServer(baseline)
	defer srvH.Close()
	defer srvBase.Close()
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	get := func(url string) int64 {
		r, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			b.Fatal(err)
		}
		r.Header = req.Header
		resp, err := client.Do(r)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		n, err := io.Copy(io.Discard, resp.Body)
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	b.SetBytes(get(srvH.URL))
	get(srvBase.URL)
	ratios := interleave(b, func() { get(srvH.URL) }, func() { get(srvBase.URL) })
	b.ReportMetric(median(ratios), "x_baseline")
}

func BenchmarkScrape(b *testing.B) {
	for _, n := range benchSizes {
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			snap := fleettest.Synthetic("bench", n)
			reg, self := benchSelf()
			text := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			text.Header.Set("Accept", acceptText)
			prom := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			prom.Header.Set("Accept", acceptPrometheus3)
			prom.Header.Set("Accept-Encoding", "gzip")

			cached := New(self, nil)
			defer cached.Close()
			cached.SetSnapshot(snap)
			// The same with the registry as self: the API, Go and process
			// metrics are gathered and encoded on every scrape.
			cachedRegistrySelf := New(reg, nil)
			cachedRegistrySelf.SetSnapshot(snap)

			// The baselines: the same bodies prepared in one byte slice
			// each, as a server with nothing to do but write them.
			rec := httptest.NewRecorder()
			cached.ServeHTTP(rec, text)
			body := rec.Body.Bytes()
			rec = httptest.NewRecorder()
			cached.ServeHTTP(rec, prom)
			gzBody := rec.Body.Bytes()
			bytesHandler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Accept-Encoding") != "" {
					w.Header().Set("Content-Encoding", "gzip")
					_, _ = w.Write(gzBody)
					return
				}
				w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
				_, _ = w.Write(body)
			})

			constReg := prometheus.NewRegistry()
			constReg.MustRegister(collectortest.NewFleetCollectorOf(snap))
			constHandler := promhttp.HandlerFor(prometheus.Gatherers{constReg, reg}, promhttp.HandlerOpts{})

			b.Run("cached", func(b *testing.B) { benchHandler(b, cached, text) })
			b.Run("cached_gzip", func(b *testing.B) { benchHandler(b, cached, prom) })
			b.Run("cached_registry_self", func(b *testing.B) { benchHandler(b, cachedRegistrySelf, text) })
			b.Run("const_registry", func(b *testing.B) { benchHandler(b, constHandler, text) })
			b.Run("bytes", func(b *testing.B) { benchHandler(b, bytesHandler, text) })
			b.Run("bytes_gzip", func(b *testing.B) { benchHandler(b, bytesHandler, prom) })
			// The goals: against the byte slice of the same bytes, in
			// one run.
			b.Run("gzip_vs_bytes", func(b *testing.B) { benchInterleaved(b, cached, bytesHandler, prom) })
			b.Run("text_vs_bytes", func(b *testing.B) { benchInterleaved(b, cached, bytesHandler, text) })
			// The same over loopback HTTP, where every write the handler
			// makes can cost a system call.
			b.Run("gzip_vs_bytes_http", func(b *testing.B) { benchInterleavedHTTP(b, cached, bytesHandler, prom) })
		})
	}
}

// BenchmarkPlainScrape measures the rare client that does not accept gzip
// (curl): a plain text scrape, inflated from the kept gzip form of its
// format, against the gzip scrape Prometheus makes (x_gzip, interleaved),
// and what plain scrapes of both formats keep beyond Prometheus's form
// (kept_bytes/service: only the text format's gzip form).
func BenchmarkPlainScrape(b *testing.B) {
	for _, n := range benchSizes {
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			_, self := benchSelf()
			e := New(self, nil)
			defer e.Close()
			e.SetSnapshot(fleettest.Synthetic("bench", n))
			prom := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			prom.Header.Set("Accept", acceptPrometheus3)
			prom.Header.Set("Accept-Encoding", "gzip")
			text := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			text.Header.Set("Accept", acceptText)
			om := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			om.Header.Set("Accept", acceptPrometheus3)
			w := &discardResponse{header: http.Header{}}
			e.ServeHTTP(w, prom)
			before := e.retainedBytes()
			e.ServeHTTP(w, om)
			w.n = 0
			e.ServeHTTP(w, text)
			kept := e.retainedBytes() - before
			b.SetBytes(w.n)
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			allocs := ms.Mallocs
			ratios := interleave(b, func() {
				clear(w.header)
				e.ServeHTTP(w, text)
			}, func() {
				clear(w.header)
				e.ServeHTTP(w, prom)
			})
			runtime.ReadMemStats(&ms)
			b.ReportMetric(median(ratios), "x_gzip")
			b.ReportMetric(float64(ms.Mallocs-allocs)/float64(len(ratios)), "allocs/scrape")
			b.ReportMetric(float64(kept)/float64(n), "kept_bytes/service")
		})
	}
}

// BenchmarkRender measures what a poll costs the exposition, with the
// scrape after it as Prometheus asks (OpenMetrics, gzip), which renders
// what changed: a first rendering, a poll in which nothing changed (a new
// but equal snapshot, as every poll builds), and one in which one service
// changed.
func BenchmarkRender(b *testing.B) {
	for _, n := range benchSizes {
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			snaps := []*fleet.Snapshot{fleettest.Synthetic("bench", n), fleettest.Synthetic("bench", n)}
			changed := fleettest.Synthetic("bench", n)
			changed.Services[n/2].Status = apiclient.ServiceUnstable
			resources := float64(len(snaps[0].Services) + len(snaps[0].ReplicaSets) + len(snaps[0].VPCs) + len(snaps[0].Peerings))
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			req.Header.Set("Accept", acceptPrometheus3)
			req.Header.Set("Accept-Encoding", "gzip")
			w := &discardResponse{header: http.Header{}}
			b.Run("first", func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					e := New(nil, nil)
					e.SetSnapshot(snaps[0])
					e.ServeHTTP(w, req)
				}
			})
			run := func(b *testing.B, next func(i int) *fleet.Snapshot) {
				e := New(nil, nil)
				e.SetSnapshot(snaps[0])
				e.ServeHTTP(w, req)
				b.ReportAllocs()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				i := 0
				for b.Loop() {
					i++
					e.SetSnapshot(next(i))
					e.ServeHTTP(w, req)
				}
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(i)/resources, "allocs/resource")
				s := e.statsNow()
				b.ReportMetric(float64(s.total()-s.rendered[formOf(formatOpenMetrics, true)]), "other_forms_rendered")
			}
			b.Run("unchanged", func(b *testing.B) {
				run(b, func(i int) *fleet.Snapshot { return snaps[i%2] })
			})
			b.Run("one_change", func(b *testing.B) {
				run(b, func(i int) *fleet.Snapshot {
					if i%2 == 0 {
						return snaps[0]
					}
					return changed
				})
			})
		})
	}
}

// BenchmarkMemory measures the live heap a project's snapshot and its
// exposition take, per service, once Prometheus scraped it, next to the
// size of the exposition per service (the text format, uncompressed).
// Goal: heap per service <= 2x exposition per service.
func BenchmarkMemory(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run("N="+strconv.Itoa(n), func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			req.Header.Set("Accept", acceptPrometheus3)
			req.Header.Set("Accept-Encoding", "gzip")
			text := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			text.Header.Set("Accept", acceptText)
			var heap, expo float64
			for b.Loop() {
				before := liveHeap()
				snap := fleettest.Synthetic("bench", n)
				e := New(nil, nil)
				e.SetSnapshot(snap)
				e.ServeHTTP(&discardResponse{header: http.Header{}}, req)
				heap = float64(liveHeap() - before)
				w := &discardResponse{header: http.Header{}}
				e.ServeHTTP(w, text)
				expo = float64(w.n)
				runtime.KeepAlive(e)
			}
			b.ReportMetric(heap/float64(n), "heap_bytes/service")
			b.ReportMetric(expo/float64(n), "expo_bytes/service")
			b.ReportMetric(heap/expo, "heap/expo")
		})
	}
}

// BenchmarkRenderChunk measures the rendering of one list of 1,000
// services (or their 2,000 replica sets) as text, without the chunking
// and compression around it: the collect functions, the recording of
// their samples and the writing of the lines.
func BenchmarkRenderChunk(b *testing.B) {
	s := fleettest.Synthetic("p", 1000)
	var r renderer
	for g, name := range []string{"services", "replica_sets"} {
		part := groups[g].Part(s, 0, groups[g].Len(s))
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.renderChunk(&groups[g], &part, formOf(formatText, false), nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
