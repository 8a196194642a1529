package exposition

import (
	"bufio"
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

const (
	formatText = iota
	formatOpenMetrics
	numFormats
)

// A form is a format with or without gzip, the unit in which renderings are kept.
const numForms = 2 * numFormats

func formOf(format int, gzip bool) int {
	if gzip {
		return 2*format + 1
	}
	return 2 * format
}

func formFormat(form int) int { return form / 2 }
func formGzip(form int) bool  { return form%2 == 1 }

// formIdle: a one-off curl of the text format must not cost memory for good.
const formIdle = 10 * time.Minute

// Handler is the /metrics handler. SetSnapshot only records a snapshot; the
// next scrape renders the chunks that changed, in the form it asks for.
type Handler struct {
	// With SelfGatherer, self is nil and api and others serve from caches.
	self     prometheus.Gatherer
	api      *apimetrics.Metrics
	apiCache apiCache
	others   *scheduledGatherer
	logger   *slog.Logger
	flatView int

	// mu serialises publishers; latest is read without it.
	mu     sync.Mutex
	latest atomic.Pointer[snapshots]
	seqs   map[string]uint64

	// renderMu is taken only by scrapes, never by a publisher.
	renderMu sync.Mutex
	projects map[string]*projectChunks // guarded by renderMu
	applied  uint64                    // generation of projects, guarded by renderMu
	render   renderer                  // guarded by renderMu
	// stats counts the work done, for tests and benchmarks.
	stats renderStats // guarded by renderMu

	// views are what scrapes serve, one per form, rebuilt when stale.
	views [numForms]atomic.Pointer[view]
	// lastFlat is the last flat view built of each form, guarded by renderMu.
	lastFlat [numForms]*view
	// steadyBuilds counts the builds of each form since its view last grew.
	steadyBuilds [numForms]int
	asked        [numForms]atomic.Int64
	now          func() time.Time

	lastNegotiation atomic.Pointer[negotiation]

	// selfFailing logs a lasting self-metrics failure once.
	selfFailing atomic.Bool

	selfMu    sync.Mutex
	selfCache [numFormats]atomic.Pointer[cachedSelfPart]

	deflater     *deflater // shared with render
	flateReaders sync.Pool // of io.ReadCloser from flate.NewReader, for inflate
	writers      sync.Pool // of *bufio.Writer of scrapeWriteBuffer bytes
}

type snapshots struct {
	generation uint64
	byProject  map[string]*fleet.Snapshot
}

type projectChunks struct {
	snap   *fleet.Snapshot
	groups [][]*chunk // by index in groups
}

type renderStats struct {
	rendered [numForms]int
	changed  int
}

// New returns a Handler with no project yet. self gathers the self-metrics
// appended to every scrape and must not hold the resource metrics.
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
		deflater: &deflater{},
	}
	e.render.deflater = e.deflater
	if sg, ok := self.(*selfGatherer); ok {
		e.api, e.self = sg.api, nil
		if sg.others != nil {
			e.others = newScheduledGatherer(sg.others, selfGatherInterval)
		}
	}
	e.latest.Store(&snapshots{byProject: map[string]*fleet.Snapshot{}})
	return e
}

// Close stops the scheduled gathering of the self-metrics, if any.
func (e *Handler) Close() {
	if e.others != nil {
		e.others.stop()
	}
}

// SetSnapshot records the snapshot of s.ProjectID for the next scrape. An
// older numbered snapshot is dropped: publishers run outside the poller's lock.
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

// RemoveProject drops a project's series, for a reload that removed it.
func (e *Handler) RemoveProject(projectID string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.latest.Load().byProject[projectID]; !ok {
		return
	}
	delete(e.seqs, projectID)
	e.install(func(m map[string]*fleet.Snapshot) { delete(m, projectID) })
	if e.others != nil {
		// The self-metrics gathered on a schedule hold the project's series
		// of the parts outside the snapshots (the change counters): a removed
		// project's series go at once, not at the next scheduled gather.
		e.others.refresh()
	}
}

// install is called with mu held.
func (e *Handler) install(change func(map[string]*fleet.Snapshot)) {
	cur := e.latest.Load()
	next := &snapshots{generation: cur.generation + 1, byProject: maps.Clone(cur.byProject)}
	change(next.byProject)
	e.latest.Store(next)
}

// ServeHTTP serves the resource metrics and the self-metrics. Protocol buffers
// are not offered: a client asking only for them gets text.
func (e *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := e.negotiate(r.Header)
	format, contentType, gzip := n.format, n.contentType, n.gzip
	// Only gzip forms are kept: a plain one is ten times larger, and a plain
	// client (curl) is rare enough to pay for inflating.
	v := e.acquireView(formOf(format, true))
	defer v.release()
	self := e.selfPart(format, gzip)

	h := w.Header()
	h.Set("Content-Type", string(contentType))
	h.Add("Vary", "Accept-Encoding")
	// Pieces are a few kilobytes: unbuffered, each would be a system call.
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

func writeAll(w *bufio.Writer, parts [][]byte) bool {
	for _, part := range parts {
		if _, err := w.Write(part); err != nil {
			return false
		}
	}
	return true
}

// scrapeWriteBuffer: a flat gzip view passes through it without a copy.
const scrapeWriteBuffer = 256 << 10

type negotiation struct {
	accept, acceptEncoding string
	format                 int
	contentType            expfmt.Format
	gzip                   bool
}

// negotiate keeps the last outcome: Prometheus repeats its headers.
func (e *Handler) negotiate(h http.Header) *negotiation {
	accept, acceptEncoding := h.Get("Accept"), h.Get("Accept-Encoding")
	if n := e.lastNegotiation.Load(); n != nil && n.accept == accept && n.acceptEncoding == acceptEncoding {
		return n
	}
	contentType := expfmt.NegotiateAccept(h, expfmt.FmtOpenMetrics_1_0_0, expfmt.FmtOpenMetrics_0_0_1, expfmt.FmtText)
	n := &negotiation{accept: accept, acceptEncoding: acceptEncoding, contentType: contentType, format: formatText, gzip: acceptsGzip(acceptEncoding)}
	if contentType.FormatType() == expfmt.TypeOpenMetrics {
		n.format = formatOpenMetrics
	}
	e.lastNegotiation.Store(n)
	return n
}
