package exposition

import (
	"bytes"
	"compress/flate"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/clouddb/clouddb_exporter/collector"
	"github.com/clouddb/clouddb_exporter/fleet"
)

func (e *Handler) view(f int) *view {
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
	e.prepare(f, latest)
	v := e.build(f, latest.generation)
	e.views[f].Store(v)
	return v
}

// prepare drops the stale view of f before rendering: it holds the only
// reference to the changed chunks' old renderings, which would otherwise
// stay live beside their replacements. A flat view's pieces are all in
// its slice, which lastFlat keeps for the next: then a changed chunk
// keeps the one it replaces, whose pieces cost nothing more, to take
// those that render the same again. Called with renderMu held.
func (e *Handler) prepare(f int, latest *snapshots) {
	if e.applied != latest.generation {
		e.apply(latest, e.lastFlat[f] != nil)
		e.dropIdleForms(f)
	}
	e.views[f].Store(nil)
}

// apply is called with renderMu held; keep is rechunk's.
func (e *Handler) apply(latest *snapshots, keep bool) {
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
			p.groups[g], changed = rechunk(&groups[g], s, p.groups[g], keep)
			e.stats.changed += changed
		}
	}
	e.applied = latest.generation
}

// dropIdleForms forgets forms unasked within formIdle, but f. Called with renderMu held.
func (e *Handler) dropIdleForms(f int) {
	cutoff := e.now().Add(-formIdle).UnixNano()
	for g := range numForms {
		if g == f || e.asked[g].Load() >= cutoff || e.views[g].Load() == nil {
			continue
		}
		e.views[g].Store(nil)
		e.lastFlat[g] = nil
		for _, p := range e.projects {
			for _, chunks := range p.groups {
				for _, c := range chunks {
					c.forms[g] = nil
				}
			}
		}
	}
}

// view is immutable: scrapes may still be writing it after it is replaced.
type view struct {
	generation uint64
	parts      [][]byte // for gzip, the member's header first
	size       int      // of parts together
	raw        int
	crc        uint32 // of the uncompressed exposition, for gzip
	// readers counts the scrapes writing it: a build reuses a flat view's
	// slice once none does, and retired says it has.
	readers atomic.Int32
	retired atomic.Bool
}

// build lays pieces out by family, each family's HELP and TYPE once, then
// every project's samples in project order. Called with renderMu held.
func (e *Handler) build(f int, generation uint64) *view {
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
					var prev *chunkForm
					if c.prev != nil {
						prev = c.prev.forms[f]
					}
					var err error
					c.forms[f], err = r.renderChunk(&groups[g], &c.src, f, prev)
					if err != nil {
						errs = append(errs, fmt.Errorf("project %s: %w", id, err))
					}
					c.prev = nil // Its renderings can go.
					e.stats.rendered[f]++
				}
				for j := range c.forms[f].pieces {
					pc := &c.forms[f].pieces[j]
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
			v.crc = crc32Combine(v.crc, pc.crc, pc.shift)
		}
		v.raw += int(pc.raw)
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
			add(*pc)
		}
	}
	e.flatten(v, f)
	r.shrink()
	return v
}

func familyHeader(family, f int) piece {
	if formGzip(f) {
		return deflatedHeaders()[formFormat(f)][family]
	}
	h := families[family].header[formFormat(f)]
	return piece{family: int32(family), b: h, raw: int32(len(h))}
}

var deflatedHeaders = sync.OnceValue(func() (h [numFormats][]piece) {
	fw, _ := flate.NewWriter(nil, cachedDeflateLevel) // The level is valid.
	var out bytes.Buffer
	for f := range numFormats {
		for i := range families {
			header := families[i].header[f]
			out.Reset()
			fw.Reset(&out)
			_, _ = fw.Write(header)
			_ = fw.Flush()
			h[f] = append(h[f], piece{family: int32(i), b: bytes.Clone(out.Bytes()), crc: crc32.ChecksumIEEE(header), shift: crcX8n(int64(len(header))), raw: int32(len(header))})
		}
	}
	return h
})

// maxFlatView (16 MiB) is about 35,000 services.
const maxFlatView = 16 << 20

type renderer struct {
	samples  collector.Samples
	w        *lineWriter
	out      bytes.Buffer
	deflater *deflater
	spans    [][2]int // of each piece in out, -1 for one taken from the last rendering
	use      scratchPeaks
	byFamily [][]*piece // into the chunks' forms, while building a view
	deflated int        // pieces deflated, for tests and benchmarks
}

// scratchLimit bounds each scratch buffer kept between builds, and twice it all of them.
const scratchLimit = 1 << 20

// renderChunk leaves out a series that cannot be written; the error says
// which. A gzip form takes the pieces of prev (the last rendering of the
// chunk it replaces, nil for none) of the same samples without writing
// their lines.
func (r *renderer) renderChunk(g *collector.Group, src *fleet.Snapshot, f int, prev *chunkForm) (*chunkForm, error) {
	if r.w == nil {
		r.w = newLineWriter()
		r.byFamily = make([][]*piece, len(families))
	}
	w := r.w
	w.errs = w.errs[:0]
	w.format = formFormat(f)
	if prev != nil && formGzip(f) {
		for i := range prev.pieces {
			w.last[prev.pieces[i].family] = &prev.pieces[i]
		}
	}
	g.Collect(r.samples.Sink(), src)
	w.writeAll(&r.samples)
	samples := r.samples.Size()
	r.samples.Reset()
	cf := r.pieces(f)
	clear(w.last) // The pieces taken are copied: prev's can go.
	r.use.note(scratchUse{lines: len(w.buf), order: len(w.order), samples: samples, out: r.out.Len()})
	return cf, errors.Join(w.errs...)
}

// pieces makes a chunk's form f of what the line writer holds.
func (r *renderer) pieces(f int) *chunkForm {
	cf := &chunkForm{}
	r.out.Reset()
	r.spans = r.spans[:0]
	for i, n := range r.w.counts {
		if n == 0 {
			continue
		}
		if n < 0 { // Its samples are its last piece's.
			cf.pieces = append(cf.pieces, *r.w.last[i])
			r.spans = append(r.spans, [2]int{-1, -1})
			continue
		}
		raw := r.w.lines(i)
		if len(raw) == 0 {
			continue
		}
		start := r.out.Len()
		pc := piece{family: int32(i), raw: int32(len(raw))}
		if formGzip(f) {
			pc.crc, pc.shift, pc.samples = crc32.ChecksumIEEE(raw), crcX8n(int64(len(raw))), r.w.sums[i]
			if r.deflater == nil {
				r.deflater = &deflater{}
			}
			r.deflater.deflate(&r.out, raw)
			r.deflated++
		} else {
			r.out.Write(raw)
		}
		cf.pieces = append(cf.pieces, pc)
		r.spans = append(r.spans, [2]int{start, r.out.Len()})
	}
	slab := bytes.Clone(r.out.Bytes())
	for i, sp := range r.spans {
		if sp[0] >= 0 {
			cf.pieces[i].b = slab[sp[0]:sp[1]:sp[1]]
		}
	}
	return cf
}

// scratchUse is what renderings used of each scratch buffer, in bytes
// (order's in indices).
type scratchUse struct{ lines, order, samples, out int }

// scratchWindow builds (at one a scrape, 5 min at Prometheus's 5 s): the
// scratch kept is what the renderings of the last one or two windows used,
// so that a usage read's publishes, one chunk after another, render into
// the same buffers, and a spike's are let go after two windows.
const scratchWindow = 64

type scratchPeaks struct {
	cur, last scratchUse
	builds    int
}

func (p *scratchPeaks) note(u scratchUse) {
	p.cur = scratchUse{max(p.cur.lines, u.lines), max(p.cur.order, u.order), max(p.cur.samples, u.samples), max(p.cur.out, u.out)}
}

// need is the most used in the window, and ends a window after scratchWindow builds.
func (p *scratchPeaks) need() scratchUse {
	n := scratchUse{max(p.cur.lines, p.last.lines), max(p.cur.order, p.last.order), max(p.cur.samples, p.last.samples), max(p.cur.out, p.last.out)}
	if p.builds++; p.builds == scratchWindow {
		p.last, p.cur, p.builds = p.cur, scratchUse{}, 0
	}
	return n
}

// shrink lets go of a scratch buffer over twice what the window's renderings
// used of it (append at most doubles), over scratchLimit, or past
// 2*scratchLimit for all together.
func (r *renderer) shrink() {
	need := r.use.need()
	kept := 0
	keep := func(c, used int) bool {
		if c > 2*used || c > scratchLimit || kept+c > 2*scratchLimit {
			return false
		}
		kept += c
		return true
	}
	if !keep(r.out.Cap(), need.out) {
		r.out = bytes.Buffer{}
	}
	kept += r.samples.Trim(min(2*need.samples, scratchLimit, 2*scratchLimit-kept))
	if w := r.w; w != nil {
		if !keep(cap(w.buf), need.lines) {
			w.buf = nil
		}
		if !keep(cap(w.order)*4, need.order*4) {
			w.order = nil
		}
	}
	for i := range r.byFamily {
		// Listed pieces must not keep gone chunks' renderings alive.
		clear(r.byFamily[i])
		r.byFamily[i] = r.byFamily[i][:0]
		if cap(r.byFamily[i]) > scratchLimit/32 {
			r.byFamily[i] = nil
		}
	}
}
