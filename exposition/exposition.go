package exposition

import (
	"bufio"
	"compress/flate"
	"log/slog"
	"maps"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/clouddb/clouddb_exporter/apimetrics"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// Formats the resource exposition is rendered in, as indexes of per-format
// arrays.
const (
	formatText = iota
	formatOpenMetrics
	numFormats
)

// A form is a format with or without gzip, the unit in which renderings
// are kept. Scrapes only ask for gzip forms (see ServeHTTP): Prometheus
// asks for OpenMetrics with gzip; the text format's is rendered only when
// some client asks for text.
const numForms = 2 * numFormats

func formOf(format int, gzip bool) int {
	if gzip {
		return 2*format + 1
	}
	return 2 * format
}

func formFormat(form int) int { return form / 2 }
func formGzip(form int) bool  { return form%2 == 1 }

// formIdle is how long a form nobody asks for keeps its rendering: past
// it, the next change drops it (a one-off curl of the text format must
// not cost memory for good).
const formIdle = 10 * time.Minute

// Handler is the /metrics handler. It serves the resource metrics of
// every project from renderings kept between snapshot changes, followed by
// the live self-metrics. Rendering runs the collect functions of the
// collector's groups with a sink that records their samples, and writes
// them as exposition lines (lines.go), so the exposition holds what a
// registry with a collector.FleetCollector would serve (series in snapshot
// order rather than sorted). It is safe for concurrent use.
//
// SetSnapshot only records the snapshot: rendering happens on the first
// scrape after it, in the form that scrape asks for, and only for the
// chunks of resources that changed (chunks.go). So the poller never waits
// for rendering, a form nobody asks for is never rendered, and an
// unchanged poll costs a comparison.
type Handler struct {
	// self gathers the live self-metrics; api, when self came from
	// SelfGatherer, serves the API metrics from their cached encoding, and
	// others then holds the rest of the self-metrics, gathered on a
	// schedule (self.go).
	self     prometheus.Gatherer
	api      *apimetrics.Metrics
	apiCache apiCache
	others   *scheduledGatherer
	logger   *slog.Logger
	// flatView is maxFlatView, smaller in tests.
	flatView int

	// mu serialises SetSnapshot and RemoveProject; the snapshots they
	// install are read without it.
	mu     sync.Mutex
	latest atomic.Pointer[snapshots]
	// seqs is the Seq of each project's installed snapshot; guarded by mu.
	seqs map[string]uint64

	// renderMu serialises bringing the renderings up to date with latest.
	// Only scrapes take it, never a publisher.
	renderMu sync.Mutex
	projects map[string]*projectChunks // guarded by renderMu
	applied  uint64                    // generation of projects, guarded by renderMu
	render   renderer                  // guarded by renderMu
	// stats counts the work done, for tests and benchmarks.
	stats renderStats // guarded by renderMu

	// views are what scrapes serve, one per form; a view of an older
	// generation is rebuilt on the next scrape of its form.
	views [numForms]atomic.Pointer[view]
	// asked is when each form was last asked for, in Unix nanoseconds.
	asked [numForms]atomic.Int64
	now   func() time.Time

	lastNegotiation atomic.Pointer[negotiation]

	// selfFailing remembers that the last self-metrics gather failed, so
	// that a lasting failure is logged once rather than on every scrape.
	selfFailing atomic.Bool

	// selfCache holds the self-metrics by format when they all come from
	// caches; selfMu serialises making them.
	selfMu    sync.Mutex
	selfCache [numFormats]atomic.Pointer[cachedSelfPart]

	flateWriters sync.Pool // of *flate.Writer at selfDeflateLevel
	flateReaders sync.Pool // of io.ReadCloser from flate.NewReader, for inflate
	writers      sync.Pool // of *bufio.Writer of scrapeWriteBuffer bytes
}

// snapshots is the latest snapshot of every project, replaced as a whole.
type snapshots struct {
	generation uint64
	byProject  map[string]*fleet.Snapshot
}

// projectChunks is the rendering state of one project.
type projectChunks struct {
	snap   *fleet.Snapshot
	groups [][]*chunk // by index in groups
}

// renderStats counts chunk renderings.
type renderStats struct {
	// rendered counts chunk renderings by form.
	rendered [numForms]int
	// changed counts chunks found changed by a new snapshot.
	changed int
}

// New returns a Handler with no project yet. self gathers the
// live self-metrics appended to every scrape (API metrics, build info,
// process and Go metrics: whatever the caller registers); it may be nil. It
// must not hold the resource metrics, which would then appear twice. Pass
// SelfGatherer(api, reg) rather than reg to spare each scrape the gathering
// of the API metrics, Go and process metrics (see SelfGatherer); call Close
// when done with it.
func New(self prometheus.Gatherer, logger *slog.Logger) *Handler {
	loadCollector()
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	e := &Handler{
		self:     self,
		logger:   logger,
		projects: map[string]*projectChunks{},
		seqs:     map[string]uint64{},
		now:      time.Now,
		flatView: maxFlatView,
		writers:  sync.Pool{New: func() any { return bufio.NewWriterSize(nil, scrapeWriteBuffer) }},
		flateWriters: sync.Pool{New: func() any {
			fw, _ := flate.NewWriter(nil, selfDeflateLevel) // The level is valid.
			return fw
		}},
	}
	if sg, ok := self.(*selfGatherer); ok {
		e.api, e.self = sg.api, nil
		if sg.others != nil {
			e.others = newScheduledGatherer(sg.others, selfGatherInterval)
		}
	}
	e.latest.Store(&snapshots{byProject: map[string]*fleet.Snapshot{}})
	return e
}

// Close stops the scheduled gathering of the self-metrics, if any. Scrapes
// after Close gather them on each scrape.
func (e *Handler) Close() {
	if e.others != nil {
		e.others.stop()
	}
}

// SetSnapshot replaces the snapshot of s.ProjectID. It only records it:
// the next scrape renders what changed, so SetSnapshot costs the copy of
// a map of projects, whatever the size of the fleet. A numbered snapshot
// (Seq > 0) older than the one installed is dropped: publishers run outside
// the poller's lock, and an older snapshot must never replace a newer one.
func (e *Handler) SetSnapshot(s *fleet.Snapshot) {
	if s == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if s.Seq != 0 {
		if s.Seq <= e.seqs[s.ProjectID] {
			return
		}
		e.seqs[s.ProjectID] = s.Seq
	}
	e.install(func(m map[string]*fleet.Snapshot) { m[s.ProjectID] = s })
}

// RemoveProject drops a project's series from the exposition, for a project
// dropped by a configuration reload.
func (e *Handler) RemoveProject(projectID string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.latest.Load().byProject[projectID]; !ok {
		return
	}
	delete(e.seqs, projectID)
	e.install(func(m map[string]*fleet.Snapshot) { delete(m, projectID) })
}

// install replaces the snapshots with a changed copy. Called with mu held.
func (e *Handler) install(change func(map[string]*fleet.Snapshot)) {
	cur := e.latest.Load()
	next := &snapshots{generation: cur.generation + 1, byProject: maps.Clone(cur.byProject)}
	change(next.byProject)
	e.latest.Store(next)
}

// ServeHTTP serves the resource metrics and the live self-metrics in the
// negotiated format, gzip-compressed when the client accepts it. Protocol
// buffers are not offered: a client asking only for them gets the text
// format, which every Prometheus reads.
func (e *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := e.negotiate(r.Header)
	format, contentType, gzip := n.format, n.contentType, n.gzip
	// Only compressed forms are kept: an uncompressed one is some ten
	// times larger, and a client that does not accept gzip (a person with
	// curl) is rare enough to pay for the inflating.
	v := e.view(formOf(format, true))
	self := e.selfPart(format, gzip)

	h := w.Header()
	h.Set("Content-Type", string(contentType))
	h.Add("Vary", "Accept-Encoding")
	// The pieces are some kilobytes each: written one by one, each would
	// be a system call of its own.
	bw := e.writers.Get().(*bufio.Writer)
	bw.Reset(w)
	defer func() {
		bw.Reset(nil)
		e.writers.Put(bw)
	}()
	if gzip {
		h.Set("Content-Encoding", "gzip")
		h.Set("Content-Length", strconv.Itoa(v.size+len(self.deflated)+len(finalBlock)+gzipTrailerSize))
		if writeAll(bw, v.parts) {
			writeGzipEnd(bw, v, self)
		}
	} else {
		h.Set("Content-Length", strconv.Itoa(v.raw+len(self.raw)))
		if e.inflate(bw, v) {
			_, _ = bw.Write(self.raw)
		}
	}
	_ = bw.Flush() // A failure means the client went away; nothing left to tell it.
}

// writeAll writes parts to w, and reports whether it could.
func writeAll(w *bufio.Writer, parts [][]byte) bool {
	for _, part := range parts {
		if _, err := w.Write(part); err != nil {
			return false
		}
	}
	return true
}

// scrapeWriteBuffer is the size of the buffer scrapes write through, one
// per scrape in flight. Over loopback HTTP (BenchmarkScrape/*/
// gzip_vs_bytes_http), writing the pieces one by one made a gzip scrape
// 2.6x (1k services) and 2.0x (10k) the time of writing the same bytes from
// one slice; through 64 KB about 1.1x and 0.95x, through 256 KB 1.05x and
// 0.9x. In process, with no system call to save, the copy costs instead.
// A gzip view is one slice (see renderer.flatten), which the buffer
// passes through without a copy; an inflated plain answer is written into it.
const scrapeWriteBuffer = 256 << 10

// negotiation is the outcome of content negotiation for one pair of
// Accept and Accept-Encoding headers.
type negotiation struct {
	accept, acceptEncoding string
	format                 int
	contentType            expfmt.Format
	gzip                   bool
}

// negotiate returns the format and encoding to serve. A Prometheus server
// sends the same headers on every scrape: the last outcome is kept, so
// that scrapes do not parse them again.
func (e *Handler) negotiate(h http.Header) *negotiation {
	accept, acceptEncoding := h.Get("Accept"), h.Get("Accept-Encoding")
	if n := e.lastNegotiation.Load(); n != nil && n.accept == accept && n.acceptEncoding == acceptEncoding {
		return n
	}
	// NegotiateAccept with the formats served is what the deprecated
	// NegotiateIncludingOpenMetrics became; offering no protobuf format
	// makes a client that asks only for protobuf fall back to text.
	contentType := expfmt.NegotiateAccept(h, expfmt.FmtOpenMetrics_1_0_0, expfmt.FmtOpenMetrics_0_0_1, expfmt.FmtText)
	n := &negotiation{accept: accept, acceptEncoding: acceptEncoding, contentType: contentType, format: formatText, gzip: acceptsGzip(acceptEncoding)}
	if contentType.FormatType() == expfmt.TypeOpenMetrics {
		// OpenMetrics 0.0.1 and 1.0.0 encode these families alike.
		n.format = formatOpenMetrics
	}
	e.lastNegotiation.Store(n)
	return n
}
