package exposition

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
	"weak"

	dto "github.com/prometheus/client_model/go"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/apimetrics"
	"github.com/clouddb/clouddb_exporter/dataplane"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/dataplanetest"
	"github.com/clouddb/clouddb_exporter/internal/fleettest"
)

// stats returns the render counters of e.
func (e *Handler) statsNow() renderStats {
	e.renderMu.Lock()
	defer e.renderMu.Unlock()
	return e.stats
}

// rendered sums the chunk renderings of every form.
func (s renderStats) total() int {
	n := 0
	for _, r := range s.rendered {
		n += r
	}
	return n
}

// retainedBytes sums the capacity of every buffer e keeps between scrapes:
// the chunks' renderings and the renderer's scratch.
func (e *Handler) retainedBytes() int {
	e.renderMu.Lock()
	defer e.renderMu.Unlock()
	n := e.render.out.Cap()
	if w := e.render.w; w != nil {
		n += cap(w.buf) + 4*cap(w.order)
	}
	for _, p := range e.projects {
		for _, chunks := range p.groups {
			for _, c := range chunks {
				for _, cf := range c.forms {
					if cf == nil {
						continue
					}
					for _, pc := range cf.pieces {
						n += cap(pc.b)
					}
				}
			}
		}
	}
	return n
}

// scrapePrometheus scrapes e as Prometheus does (OpenMetrics, gzip) and
// returns the uncompressed body.
func scrapePrometheus(t *testing.T, e *Handler) string {
	t.Helper()
	return string(gunzip(t, readBody(t, scrape(t, e, acceptPrometheus3, "gzip"))))
}

// A snapshot equal to the last one, but built anew as every poll builds it,
// renders nothing; publishing never renders.
func TestExpositionUnchangedSnapshotRendersNothing(t *testing.T) {
	t.Parallel() // CPU-bound under -race: the package's tail, on both cores
	e := New(nil, nil)
	e.SetSnapshot(fleettest.Synthetic("p", 2000))
	if s := e.statsNow(); s.total() != 0 {
		t.Fatalf("SetSnapshot rendered %d chunks before any scrape", s.total())
	}
	first := scrapePrometheus(t, e)
	before := e.statsNow()
	if before.total() < 2000/chunkTarget {
		t.Fatalf("only %d chunks rendered for 2000 services", before.total())
	}
	e.SetSnapshot(fleettest.Synthetic("p", 2000))
	again := scrapePrometheus(t, e)
	after := e.statsNow()
	if n := after.total() - before.total(); n != 0 {
		t.Errorf("an unchanged snapshot rendered %d chunks, want 0", n)
	}
	if n := after.changed - before.changed; n != 0 {
		t.Errorf("an unchanged snapshot changed %d chunks, want 0", n)
	}
	if first != again {
		t.Error("the exposition differs after an unchanged snapshot")
	}
}

// TestExpositionRendersDataPlaneInChunks: the usage samples and log counts
// are chunked like the resource lists, so that a read that changes one
// service's usage or logs renders one chunk, and a fleet's usage is never
// one rendering of tens of megabytes.
func TestExpositionRendersDataPlaneInChunks(t *testing.T) {
	t.Parallel()
	const n = 2000
	snap := func() *fleet.Snapshot { return dataplanetest.WithDataPlane(fleettest.Synthetic("p", n)) }
	e := New(nil, nil)
	first := snap()
	e.SetSnapshot(first)
	scrapePrometheus(t, e)
	// Every long list, the usage samples and log counts included, is in
	// several chunks. Boundaries fall by a seeded hash, one in chunkTarget
	// resources: a list of 2,000 has none with a chance of e^-7.8, so the
	// test asks for two chunks, not for sizes that the seed decides.
	e.renderMu.Lock()
	for g, chunks := range e.projects["p"].groups {
		if n := groups[g].Len(first); n >= 2000 && len(chunks) < 2 {
			t.Errorf("group %d: %d resources in %d chunk: rendered in one piece", g, n, len(chunks))
		}
	}
	e.renderMu.Unlock()

	before := e.statsNow()
	changed := snap()
	u := fleet.DataOf[dataplane.Usage](changed, dataplane.PartUsage)
	for _, svc := range u.Services {
		points := svc.Series(slices.Index(u.Suffixes, apiclient.SeriesQPS))
		for i, smp := range points {
			if svc.ID == "svc-001234" && smp.Labels.Role() == "primary" {
				points[i].Value = 4321
			}
		}
	}
	for i, c := range fleet.DataOf[dataplane.Logs](changed, dataplane.PartLogs).Counts {
		if c.ServiceID() == "svc-000042" {
			fleet.DataOf[dataplane.Logs](changed, dataplane.PartLogs).Counts[i] = c.Clone()
			fleet.DataOf[dataplane.Logs](changed, dataplane.PartLogs).Counts[i].Set(dataplane.LogSeverityIndex("ERROR"), 99)
		}
	}
	e.SetSnapshot(changed)
	body := scrapePrometheus(t, e)
	after := e.statsNow()
	for _, want := range []string{
		`clouddb_service_database_queries_per_second{ordinal="0",project_id="p",role="primary",service_id="svc-001234"} 4321.0`,
		`clouddb_service_log_entries_total{project_id="p",service_id="svc-000042",severity="ERROR"} 99.0`,
		`clouddb_exporter_usage_refresh_period_seconds{project_id="p"} 600.0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %s after the change", want)
		}
	}
	if c := after.changed - before.changed; c != 2 {
		t.Errorf("%d chunks changed, want 2 (one service's usage, another's logs)", c)
	}
}

// A change to one service renders its chunk only, in the form asked for.
func TestExpositionRendersChangedChunkOnly(t *testing.T) {
	t.Parallel() // CPU-bound under -race: the package's tail, on both cores
	e := New(nil, nil)
	e.SetSnapshot(fleettest.Synthetic("p", 2000))
	scrapePrometheus(t, e)
	for _, tc := range []struct {
		name   string
		change func(s *fleet.Snapshot) *fleet.Snapshot
		want   string
		chunks int
	}{
		{"status", func(s *fleet.Snapshot) *fleet.Snapshot {
			s.Services[1234].Status = apiclient.ServiceDeleting
			return s
		}, `clouddb_service_status{project_id="p",service_id="svc-001234",status="DELETING"} 1.0`, 1},
		{"added", func(s *fleet.Snapshot) *fleet.Snapshot {
			svc := *s.Services[1234].Service
			svc.ServiceID = "svc-001234a"
			extra := fleet.Service{Service: &svc, StatusSince: s.Services[1234].StatusSince}
			s.Services = append(s.Services[:1235], append([]fleet.Service{extra}, s.Services[1235:]...)...)
			return s
		}, `clouddb_service_paused{project_id="p",service_id="svc-001234a"} 0.0`, 1},
		{"replica set removed", func(s *fleet.Snapshot) *fleet.Snapshot {
			s.ReplicaSets = append(s.ReplicaSets[:10], s.ReplicaSets[11:]...)
			return s
		}, `clouddb_replica_set_nodes{project_id="p",replica_set_id="rs-000005-1",service_id="svc-000005"} 2.0`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Back to the base fleet, then the one change.
			e.SetSnapshot(fleettest.Synthetic("p", 2000))
			scrapePrometheus(t, e)
			before := e.statsNow()
			e.SetSnapshot(tc.change(fleettest.Synthetic("p", 2000)))
			body := scrapePrometheus(t, e)
			after := e.statsNow()
			if !strings.Contains(body, tc.want) {
				t.Errorf("no %s after the change", tc.want)
			}
			if n := after.changed - before.changed; n != tc.chunks {
				t.Errorf("%d chunks changed, want %d", n, tc.chunks)
			}
			om := formOf(formatOpenMetrics, true)
			if n := after.rendered[om] - before.rendered[om]; n != tc.chunks {
				t.Errorf("%d chunks rendered, want %d", n, tc.chunks)
			}
			if n := after.total() - before.total(); n != after.rendered[om]-before.rendered[om] {
				t.Errorf("%d chunks rendered in forms nobody asked for", n-(after.rendered[om]-before.rendered[om]))
			}
		})
	}
}

// Only the forms asked for are rendered, and one not asked for within
// formIdle is dropped at the next change.
func TestExpositionRendersAskedFormsOnly(t *testing.T) {
	e := New(nil, nil)
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	e.now = func() time.Time { return now }
	e.SetSnapshot(fleettest.Synthetic("p", 500))
	scrapePrometheus(t, e)
	formsHeld := e.formsHeld
	// A plain text scrape is served from the text format's gzip form.
	om, text := formOf(formatOpenMetrics, true), formOf(formatText, true)
	held := formsHeld()
	for f, n := range held {
		if f != om && n != 0 {
			t.Errorf("form %d: %d chunks rendered, nobody asked for it", f, n)
		}
	}
	if held[om] == 0 {
		t.Fatal("nothing rendered in the form asked for")
	}

	scrapeText(t, e)
	if formsHeld()[text] != held[om] {
		t.Errorf("text form: %d chunks held after a text scrape, want %d", formsHeld()[text], held[om])
	}
	now = now.Add(formIdle + time.Second)
	changed := fleettest.Synthetic("p", 500)
	changed.Services[0].Name = "renamed"
	e.SetSnapshot(changed)
	if body := scrapePrometheus(t, e); !strings.Contains(body, `name="renamed"`) {
		t.Error("the change is not served")
	}
	if n := formsHeld()[text]; n != 0 {
		t.Errorf("text form still held in %d chunks after %s unasked", n, formIdle)
	}
	if body := scrapeText(t, e); !strings.Contains(body, `name="renamed"`) {
		t.Error("the dropped form is not rendered again when asked")
	}
}

// formsHeld counts the chunks holding a rendering, by form.
func (e *Handler) formsHeld() (held [numForms]int) {
	e.renderMu.Lock()
	defer e.renderMu.Unlock()
	for _, p := range e.projects {
		for _, chunks := range p.groups {
			for _, c := range chunks {
				for f, cf := range c.forms {
					if cf != nil {
						held[f]++
					}
				}
			}
		}
	}
	return held
}

// A client that does not accept gzip is served the compressed form of its
// format, decompressed as it is written: an uncompressed form, about ten
// times the size of its gzip form, is never kept (at 10k services, one
// curl of each format kept some 90 MB for ten minutes).
func TestPlainScrapeKeepsOnlyCompressedForms(t *testing.T) {
	e := New(nil, nil)
	e.SetSnapshot(fleettest.Synthetic("p", 2000))
	scrapePrometheus(t, e)
	before := e.retainedBytes()
	var plainSize int
	for _, accept := range []string{acceptText, acceptPrometheus3} {
		for range 2 {
			plain := readBody(t, scrape(t, e, accept, ""))
			checkGzip(t, readBody(t, scrape(t, e, accept, "gzip")), plain)
			plainSize = len(plain)
		}
	}
	for f, n := range e.formsHeld() {
		if !formGzip(f) && n != 0 {
			t.Errorf("form %d (uncompressed): %d chunks hold a rendering", f, n)
		}
	}
	// The text format's gzip form is the only new rendering kept.
	if grown := e.retainedBytes() - before; grown > plainSize/4 {
		t.Errorf("plain scrapes keep %d bytes more, for a %d-byte exposition", grown, plainSize)
	}
}

// Memory taken by a spike (one service with 60,000 replica sets) is given
// back once the spike is over.
func TestExpositionShrinksAfterSpike(t *testing.T) {
	if testing.Short() {
		t.Skip("renders 60,000 replica sets")
	}
	e := New(nil, nil)
	spike := fleettest.Synthetic("p", 1)
	base := spike.ReplicaSets[0]
	spike.ReplicaSets = nil
	for i := range 60_000 {
		rs := base
		rs.ID = fmt.Sprintf("rs-%06d", i)
		spike.ReplicaSets = append(spike.ReplicaSets, rs)
	}
	small := fleettest.Synthetic("p", 1)
	small.ReplicaSets = spike.ReplicaSets[:3:3]
	small.ReplicaSets = append([]fleet.ReplicaSet(nil), small.ReplicaSets...)

	e.SetSnapshot(small)
	scrapePrometheus(t, e)
	scrapeText(t, e)
	baseline := e.retainedBytes()
	heapBefore := liveHeap()

	e.SetSnapshot(spike)
	scrapePrometheus(t, e)
	scrapeText(t, e)
	peak := e.retainedBytes()
	// Only gzip forms are kept: 60,000 replica sets are about 2 MB of them.
	if peak < baseline+1<<20 {
		t.Fatalf("the spike retains %d bytes only: not a spike", peak)
	}
	spike = nil // Let the GC have it.

	e.SetSnapshot(small)
	scrapePrometheus(t, e)
	if body := scrapeText(t, e); strings.Count(body, "clouddb_replica_set_nodes{") != 3 {
		t.Error("not back to 3 replica sets")
	}
	after := e.retainedBytes()
	if after > baseline+scratchLimit*4 {
		t.Errorf("%d bytes retained after the spike (%d at its peak), %d before it", after, peak, baseline)
	}
	if grown := liveHeap() - heapBefore; grown > 8<<20 {
		t.Errorf("live heap %d bytes larger after the spike than before", grown)
	}
	// Measured with e alive: a dead Exposition would free everything.
	runtime.KeepAlive(e)
}

func liveHeap() int64 {
	// Twice: sync.Pool keeps what it held until the second collection.
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// The Go and process metrics come through SelfGatherer from a scheduled
// gather, not from a gather per scrape.
func TestExpositionScheduledSelfGather(t *testing.T) {
	g := &countingGatherer{}
	e := New(SelfGatherer(apimetrics.New(nil), g), nil)
	defer e.Close()
	e.SetSnapshot(dataplanetest.Snapshots()[0])
	for range 5 {
		if body := scrapeText(t, e); !strings.Contains(body, "clouddb_exporter_build_info 1") {
			t.Fatal("no build info")
		}
	}
	if n := g.calls.Load(); n != 1 {
		t.Errorf("%d gathers for 5 scrapes within %s, want 1", n, selfGatherInterval)
	}
	e.Close()
	scrapeText(t, e)
	if n := g.calls.Load(); n != 2 {
		t.Errorf("%d gathers after Close and one more scrape, want 2", n)
	}
}

// countingGatherer counts its gathers of a build info gauge.
type countingGatherer struct {
	failingGatherer
	calls atomic.Int32
}

func (g *countingGatherer) Gather() ([]*dto.MetricFamily, error) {
	g.calls.Add(1)
	return g.failingGatherer.Gather()
}

// A change in one project renders that project only.
func TestExpositionRendersChangedProjectOnly(t *testing.T) {
	e := New(nil, nil)
	snaps := dataplanetest.Snapshots()
	for _, s := range snaps {
		e.SetSnapshot(s)
	}
	scrapePrometheus(t, e)
	held := func(id string) (forms []*chunkForm) {
		e.renderMu.Lock()
		defer e.renderMu.Unlock()
		for _, chunks := range e.projects[id].groups {
			for _, c := range chunks {
				forms = append(forms, c.forms[formOf(formatOpenMetrics, true)])
			}
		}
		return forms
	}
	a := held("proj-a")
	before := e.statsNow()
	changed := dataplanetest.Snapshots()[1]
	changed.Services[0].Name = "changed"
	e.SetSnapshot(changed)
	if body := scrapePrometheus(t, e); !strings.Contains(body, `name="changed"`) {
		t.Error("the change is not served")
	}
	if after := held("proj-a"); !slices.Equal(a, after) {
		t.Error("proj-a was rendered again for a change in proj-b")
	}
	if n := e.statsNow().changed - before.changed; n != 1 {
		t.Errorf("%d chunks changed, want 1", n)
	}
}

// A view being written to a slow client keeps its bytes while snapshots
// change: renderings are replaced, never modified.
func TestExpositionViewImmutable(t *testing.T) {
	e := New(nil, nil)
	e.SetSnapshot(fleettest.Synthetic("p", 300))
	for _, gzip := range []bool{false, true} {
		f := formOf(formatText, gzip)
		v := e.acquireView(f)
		defer v.release()
		want := bytes.Join(v.parts, nil)
		for i := range 3 {
			changed := fleettest.Synthetic("p", 300)
			for j := range changed.Services {
				changed.Services[j].Name = fmt.Sprint("changed-", i)
			}
			e.SetSnapshot(changed)
			e.view(f)
		}
		if !bytes.Equal(bytes.Join(v.parts, nil), want) {
			t.Errorf("gzip %t: the bytes of a view changed under it", gzip)
		}
	}
}

// TestGzipViewIsOneSlice: a gzip scrape writes the cached part as one
// slice (BenchmarkScrapeVsBytes in e2e/: the pieces copied one by one made
// a scrape about 1.2x a server writing one slice), and that slice is the
// only copy: every chunk's pieces point into it. After one service
// changes, the next view is one slice again, with the change.
func TestGzipViewIsOneSlice(t *testing.T) {
	e := New(nil, nil)
	snap := fleettest.Synthetic("p", 2000)
	e.SetSnapshot(snap)
	check := func(want string) {
		t.Helper()
		got := scrapePrometheus(t, e)
		if !strings.Contains(got, want) {
			t.Fatalf("the exposition lacks %q", want)
		}
		f := formOf(formatOpenMetrics, true)
		v := e.views[f].Load()
		if len(v.parts) != 1 || len(v.parts[0]) != v.size {
			t.Fatalf("the gzip view is %d parts, want one of %d bytes", len(v.parts), v.size)
		}
		flat := v.parts[0]
		e.renderMu.Lock()
		defer e.renderMu.Unlock()
		pieces, outside := 0, 0
		for _, p := range e.projects {
			for g := range groups {
				for _, c := range p.groups[g] {
					for _, pc := range c.forms[f].pieces {
						pieces++
						if len(pc.b) > 0 && !within(pc.b, flat) {
							outside++
						}
					}
				}
			}
		}
		if pieces == 0 || outside != 0 {
			t.Errorf("%d of %d pieces are copies of their own beside the view", outside, pieces)
		}
	}
	check(`service_id="` + snap.Services[7].ServiceID + `"`)
	changed := fleettest.Synthetic("p", 2000)
	changed.Services[7].Status = apiclient.ServiceUnstable
	e.SetSnapshot(changed)
	check(`status="UNSTABLE"`)
}

// TestLargeGzipViewKeepsItsPieces: a gzip view above the bound is not
// laid out in one slice, which each build would allocate again whole;
// the exposition is the same.
func TestLargeGzipViewKeepsItsPieces(t *testing.T) {
	small, large := New(nil, nil), New(nil, nil)
	large.flatView = 1 << 10
	for _, e := range []*Handler{small, large} {
		e.SetSnapshot(fleettest.Synthetic("p", 500))
	}
	if scrapePrometheus(t, small) != scrapePrometheus(t, large) {
		t.Fatal("the exposition depends on the layout")
	}
	f := formOf(formatOpenMetrics, true)
	if n := len(large.views[f].Load().parts); n < 10 {
		t.Errorf("a view above the bound is %d parts, want its pieces", n)
	}
	if n := len(small.views[f].Load().parts); n != 1 {
		t.Errorf("a view under the bound is %d parts, want 1", n)
	}
}

// within reports whether b lies inside the memory of s.
func within(b, s []byte) bool {
	start, end := uintptr(unsafe.Pointer(unsafe.SliceData(s))), uintptr(unsafe.Pointer(unsafe.SliceData(s)))+uintptr(len(s))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p >= start && p+uintptr(len(b)) <= end
}

// TestReplacedRenderingsFreedBeforeRendering: when a snapshot changes
// every service, the renderings it replaces are garbage by the time the
// new ones are rendered, not held by the stale view beside them until the
// build ends (the live heap's peak at 100k services).
func TestReplacedRenderingsFreedBeforeRendering(t *testing.T) {
	e := New(nil, nil)
	e.flatView = 1 << 10 // pieces, as at 100k services
	e.SetSnapshot(fleettest.Synthetic("p", 500))
	scrapePrometheus(t, e)
	f := formOf(formatOpenMetrics, true)

	// Every piece of the services' chunks, as the view serves them.
	e.renderMu.Lock()
	var old []weak.Pointer[byte]
	for _, c := range e.projects["p"].groups[0] {
		for _, pc := range c.forms[f].pieces {
			old = append(old, weak.Make(unsafe.SliceData(pc.b)))
		}
	}
	e.renderMu.Unlock()
	if len(old) == 0 {
		t.Fatal("no service piece rendered")
	}

	next := fleettest.Synthetic("p", 500)
	next.Taken = next.Taken.Add(time.Minute)
	for i := range next.Services {
		next.Services[i].Name += "-renamed"
	}
	e.SetSnapshot(next)

	e.renderMu.Lock()
	e.prepare(f, e.latest.Load())
	e.renderMu.Unlock()
	runtime.GC()
	live := 0
	for _, w := range old {
		if w.Value() != nil {
			live++
		}
	}
	if live > 0 {
		t.Errorf("%d of %d replaced pieces still live when rendering starts", live, len(old))
	}
	if !strings.Contains(scrapePrometheus(t, e), "-renamed") {
		t.Error("the new snapshot is not served")
	}
}
