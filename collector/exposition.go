package collector

import (
	"bufio"
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc32"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/clouddb/clouddb_exporter/fleet"
)

// Formats the resource exposition is rendered in, as indexes of per-format
// arrays.
const (
	formatText = iota
	formatOpenMetrics
	numFormats
)

// A form is a format with or without gzip: what one scrape asks for, and
// the unit in which renderings are kept. Prometheus asks for OpenMetrics
// with gzip; the other forms are rendered only when some client asks.
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
// it, the next change drops it (a one-off curl of the uncompressed text
// must not double the memory for good).
const formIdle = 10 * time.Minute

// Exposition is the /metrics handler. It serves the resource metrics of
// every project from renderings kept between snapshot changes, followed by
// the live self-metrics. Rendering runs the collect functions of the
// FleetCollector with a sink that writes exposition lines, so the exposition
// holds what a registry with the collector would serve (series in snapshot
// order rather than sorted). It is safe for concurrent use.
//
// SetSnapshot only records the snapshot: rendering happens on the first
// scrape after it, in the form that scrape asks for, and only for the
// chunks of resources that changed (chunks.go). So the poller never waits
// for rendering, a form nobody asks for is never rendered, and an
// unchanged poll costs a comparison.
type Exposition struct {
	// self gathers the live self-metrics; api, when self came from
	// SelfGatherer, serves the API metrics from their cached encoding, and
	// others then holds the rest of the self-metrics, gathered on a
	// schedule (self.go).
	self   prometheus.Gatherer
	api    *APIMetrics
	others *scheduledGatherer
	logger *slog.Logger

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

// NewExposition returns an Exposition with no project yet. self gathers the
// live self-metrics appended to every scrape (API metrics, build info,
// process and Go metrics: whatever the caller registers); it may be nil. It
// must not hold the resource metrics, which would then appear twice. Pass
// SelfGatherer(api, reg) rather than reg to spare each scrape the gathering
// of the API metrics, Go and process metrics (see SelfGatherer); call Close
// when done with it.
func NewExposition(self prometheus.Gatherer, logger *slog.Logger) *Exposition {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	e := &Exposition{
		self:     self,
		logger:   logger,
		projects: map[string]*projectChunks{},
		seqs:     map[string]uint64{},
		now:      time.Now,
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
func (e *Exposition) Close() {
	if e.others != nil {
		e.others.stop()
	}
}

// SetSnapshot replaces the snapshot of s.ProjectID. It only records it:
// the next scrape renders what changed, so SetSnapshot costs the copy of
// a map of projects, whatever the size of the fleet. A numbered snapshot
// (Seq > 0) older than the one installed is dropped: publishers run outside
// the poller's lock, and an older snapshot must never replace a newer one.
func (e *Exposition) SetSnapshot(s *fleet.Snapshot) {
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
func (e *Exposition) RemoveProject(projectID string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.latest.Load().byProject[projectID]; !ok {
		return
	}
	delete(e.seqs, projectID)
	e.install(func(m map[string]*fleet.Snapshot) { delete(m, projectID) })
}

// install replaces the snapshots with a changed copy. Called with mu held.
func (e *Exposition) install(change func(map[string]*fleet.Snapshot)) {
	cur := e.latest.Load()
	next := &snapshots{generation: cur.generation + 1, byProject: maps.Clone(cur.byProject)}
	change(next.byProject)
	e.latest.Store(next)
}

// view returns the view of the latest snapshots in form f, rendering what
// changed since the last view in that form.
func (e *Exposition) view(f int) *view {
	e.asked[f].Store(e.now().UnixNano())
	latest := e.latest.Load()
	if v := e.views[f].Load(); v != nil && v.generation == latest.generation {
		return v
	}
	e.renderMu.Lock()
	defer e.renderMu.Unlock()
	latest = e.latest.Load()
	if v := e.views[f].Load(); v != nil && v.generation == latest.generation {
		return v // Rendered by the scrape we waited for.
	}
	if e.applied != latest.generation {
		e.apply(latest)
		e.dropIdleForms(f)
	}
	v := e.build(f, latest.generation)
	e.views[f].Store(v)
	return v
}

// apply brings the chunks of every project in line with the latest
// snapshots, keeping the renderings of the chunks that did not change.
// Called with renderMu held.
func (e *Exposition) apply(latest *snapshots) {
	for id := range e.projects {
		if _, ok := latest.byProject[id]; !ok {
			delete(e.projects, id)
		}
	}
	for id, s := range latest.byProject {
		p := e.projects[id]
		if p == nil {
			p = &projectChunks{groups: make([][]*chunk, len(groups))}
			e.projects[id] = p
		}
		if p.snap == s {
			continue
		}
		p.snap = s
		for g := range groups {
			var changed int
			p.groups[g], changed = rechunk(&groups[g], s, p.groups[g])
			e.stats.changed += changed
		}
	}
	e.applied = latest.generation
}

// dropIdleForms forgets the renderings of the forms nobody asked for
// within formIdle, but f's. Called with renderMu held.
func (e *Exposition) dropIdleForms(f int) {
	cutoff := e.now().Add(-formIdle).UnixNano()
	for g := range numForms {
		if g == f || e.asked[g].Load() >= cutoff || e.views[g].Load() == nil {
			continue
		}
		e.views[g].Store(nil)
		for _, p := range e.projects {
			for _, chunks := range p.groups {
				for _, c := range chunks {
					c.forms[g] = nil
				}
			}
		}
	}
}

// view is the resource exposition of every project in one form, as served
// by scrapes until the next change: the pieces in the order they are
// written. It is immutable; its pieces are never modified.
type view struct {
	generation uint64
	parts      [][]byte // for gzip, the member's header first
	size       int      // of parts together
	raw        int      // length of the uncompressed exposition
	crc        uint32   // CRC-32 of the uncompressed exposition, for gzip
}

// build renders in form f whatever chunk lacks it and lays the pieces out
// in one exposition: families sorted by name, each with its HELP and TYPE
// once and then the samples of every project in project order. Called with
// renderMu held.
func (e *Exposition) build(f int, generation uint64) *view {
	ids := slices.Sorted(maps.Keys(e.projects))
	r := &e.render
	for i := range r.byFamily {
		r.byFamily[i] = r.byFamily[i][:0]
	}
	var errs []error
	for _, id := range ids {
		p := e.projects[id]
		for g := range groups {
			for _, c := range p.groups[g] {
				if c.forms[f] == nil {
					var err error
					c.forms[f], err = r.renderChunk(&groups[g], &c.src, f)
					if err != nil {
						errs = append(errs, fmt.Errorf("project %s: %w", id, err))
					}
					e.stats.rendered[f]++
				}
				for _, pc := range c.forms[f].pieces {
					r.byFamily[pc.family] = append(r.byFamily[pc.family], pc)
				}
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		e.logger.Error("Some metrics of the snapshot could not be rendered.", "err", err)
	}

	n := 1
	for _, pieces := range r.byFamily {
		n += len(pieces) + 1
	}
	gzip := formGzip(f)
	v := &view{generation: generation, parts: make([][]byte, 0, n)}
	add := func(pc piece) {
		v.parts = append(v.parts, pc.b)
		v.size += len(pc.b)
		if gzip {
			v.crc = crc32Combine(v.crc, pc.crc, int64(pc.raw))
		}
		v.raw += pc.raw
	}
	if gzip {
		v.parts = append(v.parts, []byte(gzipHeader))
		v.size = len(gzipHeader)
	}
	for fam, pieces := range r.byFamily {
		if len(pieces) == 0 {
			continue
		}
		add(familyHeader(fam, f))
		for _, pc := range pieces {
			add(pc)
		}
	}
	r.shrink()
	return v
}

// familyHeader returns the HELP and TYPE lines of a family in form f.
func familyHeader(family, f int) piece {
	if formGzip(f) {
		return deflatedHeaders()[formFormat(f)][family]
	}
	h := familyDescs[family].header[formFormat(f)]
	return piece{family: family, b: h, raw: len(h)}
}

// deflatedHeaders holds every family's header compressed, by format.
var deflatedHeaders = sync.OnceValue(func() (h [numFormats][]piece) {
	fw, _ := flate.NewWriter(nil, cachedDeflateLevel) // The level is valid.
	var out bytes.Buffer
	for f := range numFormats {
		for i, d := range familyDescs {
			out.Reset()
			fw.Reset(&out)
			_, _ = fw.Write(d.header[f])
			_ = fw.Flush()
			h[f] = append(h[f], piece{family: i, b: bytes.Clone(out.Bytes()), crc: crc32.ChecksumIEEE(d.header[f]), raw: len(d.header[f])})
		}
	}
	return h
})

// renderer holds the scratch buffers of rendering, reused from one chunk
// to the next.
type renderer struct {
	w        *lineWriter
	out      bytes.Buffer
	fw       *flate.Writer
	spans    [][2]int // of each piece in out
	byFamily [][]piece
}

// scratchLimit bounds the scratch buffers kept between renderings: after
// a spike (a service with tens of thousands of replica sets), larger ones
// are let go rather than held for good.
const scratchLimit = 1 << 20

// renderChunk renders the resources of src, a part of a snapshot, in form
// f: all families in one allocation. A series that cannot be written is
// left out; the error says which.
func (r *renderer) renderChunk(g *group, src *fleet.Snapshot, f int) (*chunkForm, error) {
	if r.w == nil {
		r.w = newLineWriter()
		r.byFamily = make([][]piece, len(familyDescs))
	}
	w := r.w
	for i := range w.samples {
		for ff := range numFormats {
			w.samples[i][ff] = w.samples[i][ff][:0]
		}
	}
	w.errs = w.errs[:0]
	g.collect(&sink{w: w}, src)

	format := formFormat(f)
	cf := &chunkForm{}
	r.out.Reset()
	r.spans = r.spans[:0]
	for i := range w.samples {
		raw := w.samples[i][format]
		if len(raw) == 0 {
			continue
		}
		start := r.out.Len()
		pc := piece{family: i, raw: len(raw)}
		if formGzip(f) {
			if r.fw == nil {
				r.fw, _ = flate.NewWriter(nil, cachedDeflateLevel) // The level is valid.
			}
			r.fw.Reset(&r.out)
			// Writes to a bytes.Buffer do not fail.
			_, _ = r.fw.Write(raw)
			_ = r.fw.Flush()
			pc.crc = crc32.ChecksumIEEE(raw)
		} else {
			r.out.Write(raw)
		}
		cf.pieces = append(cf.pieces, pc)
		r.spans = append(r.spans, [2]int{start, r.out.Len()})
	}
	slab := bytes.Clone(r.out.Bytes())
	for i, sp := range r.spans {
		cf.pieces[i].b = slab[sp[0]:sp[1]:sp[1]]
	}
	return cf, errors.Join(w.errs...)
}

// shrink forgets the pieces listed by the last build and lets go of
// scratch buffers grown past scratchLimit.
func (r *renderer) shrink() {
	if r.out.Cap() > scratchLimit {
		r.out = bytes.Buffer{}
	}
	if r.w == nil {
		return
	}
	for i := range r.w.samples {
		for f := range numFormats {
			if cap(r.w.samples[i][f]) > scratchLimit {
				r.w.samples[i][f] = nil
			}
		}
	}
	for i := range r.byFamily {
		// The pieces listed must not keep renderings alive once their
		// chunks are gone.
		clear(r.byFamily[i])
		r.byFamily[i] = r.byFamily[i][:0]
		if cap(r.byFamily[i]) > scratchLimit/32 {
			r.byFamily[i] = nil
		}
	}
}

// ServeHTTP serves the resource metrics and the live self-metrics in the
// negotiated format, gzip-compressed when the client accepts it. Protocol
// buffers are not offered: a client asking only for them gets the text
// format, which every Prometheus reads.
func (e *Exposition) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := e.negotiate(r.Header)
	format, contentType, gzip := n.format, n.contentType, n.gzip
	v := e.view(formOf(format, gzip))
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
		h.Set("Content-Length", strconv.Itoa(v.size+len(self.raw)))
		if writeAll(bw, v.parts) {
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
func (e *Exposition) negotiate(h http.Header) *negotiation {
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

// selfPart is the self-metrics of a scrape in one format, closed by "# EOF"
// for OpenMetrics: raw, and for gzip as a sync-flushed deflate piece.
type selfPart struct {
	// The sources it was encoded from, for a cached part: the API
	// metrics' generation and removals, and the scheduled gather.
	apiGeneration uint64
	apiRemovals   uint64
	others        *selfEncoding

	raw      []byte
	deflated []byte
	crc      uint32
}

// selfPart returns the self-metrics in format. When they all come from
// caches (SelfGatherer), so does the part, made again only when one of its
// sources changed, and for the API metrics at most every
// selfGatherInterval; else it is encoded for this scrape.
func (e *Exposition) selfPart(format int, gzip bool) *selfPart {
	if e.self != nil {
		p := &selfPart{}
		var buf bytes.Buffer
		e.encodeSelf(&buf, format, nil)
		p.raw = buf.Bytes()
		if gzip {
			e.deflateSelf(p)
		}
		return p
	}
	var generation, removals uint64
	if e.api != nil {
		removals = e.api.removals.Load()
		generation = e.api.generation.Load()
	}
	var others *selfEncoding
	if e.others != nil {
		others = e.others.current()
	}
	now := e.now()
	// The API metrics change with every API call, so during a poll cycle
	// with every scrape: they are encoded again at most every
	// selfGatherInterval, like the Go and process metrics, rather than at
	// a cost of over a thousand allocations per scrape.
	fresh := func(p *cachedSelfPart) bool {
		return p != nil && p.others == others && p.apiRemovals == removals &&
			(p.apiGeneration == generation || now.Sub(p.made) < selfGatherInterval)
	}
	if p := e.selfCache[format].Load(); fresh(p) {
		e.reportSelf(p.err)
		return &p.selfPart
	}
	e.selfMu.Lock()
	defer e.selfMu.Unlock()
	if p := e.selfCache[format].Load(); fresh(p) {
		e.reportSelf(p.err)
		return &p.selfPart
	}
	var buf bytes.Buffer
	p := &cachedSelfPart{selfPart: selfPart{apiGeneration: generation, apiRemovals: removals, others: others}, made: now}
	p.err = e.encodeSelf(&buf, format, others)
	p.raw = buf.Bytes()
	e.deflateSelf(&p.selfPart)
	e.selfCache[format].Store(p)
	return &p.selfPart
}

// cachedSelfPart is a selfPart and the error of its encoding, reported
// again by every scrape that serves it.
type cachedSelfPart struct {
	selfPart
	made time.Time
	err  error
}

// deflateSelf compresses p.raw as a sync-flushed piece.
func (e *Exposition) deflateSelf(p *selfPart) {
	var out bytes.Buffer
	fw := e.flateWriters.Get().(*flate.Writer)
	fw.Reset(&out)
	_, _ = fw.Write(p.raw)
	_ = fw.Flush()
	e.flateWriters.Put(fw)
	p.deflated = out.Bytes()
	p.crc = crc32.ChecksumIEEE(p.raw)
}

// encodeSelf appends the self-metrics to buf in format, closed by "# EOF"
// for OpenMetrics, and reports a failure. A failing gatherer or family
// costs only its own series: what was gathered is still encoded, and the
// resource part is served in any case. others is the scheduled gather to
// serve, if any.
func (e *Exposition) encodeSelf(buf *bytes.Buffer, format int, others *selfEncoding) error {
	var errs []error
	if e.api != nil {
		b, err := e.api.encoded(format)
		if err != nil {
			errs = append(errs, err)
		}
		buf.Write(b)
	}
	if others != nil {
		buf.Write(others.bytes[format])
		if others.err != nil {
			errs = append(errs, others.err)
		}
	}
	if e.self != nil {
		mfs, err := e.self.Gather()
		if err != nil {
			errs = append(errs, err)
		}
		errs = append(errs, encodeFamilies(buf, mfs, format, false)...)
	}
	if format == formatOpenMetrics {
		buf.WriteString("# EOF\n")
	}
	err := errors.Join(errs...)
	e.reportSelf(err)
	return err
}

// reportSelf logs a self-metrics failure once until it recovers.
func (e *Exposition) reportSelf(err error) {
	if err == nil {
		e.selfFailing.Store(false)
		return
	}
	if e.selfFailing.CompareAndSwap(false, true) {
		e.logger.Error("Self-metrics could not be gathered completely; serving the rest until this recovers.", "err", err)
	}
}
