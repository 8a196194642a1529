package exposition

import "unsafe"

// A gzip view lives in one slice its pieces point into (one write, one copy); a build reuses
// the last view's slice once retire finds no scrape pinned it (acquire) and none can start to.

func (v *view) acquire() bool {
	v.readers.Add(1)
	if v.retired.Load() {
		v.readers.Add(-1)
		return false
	}
	return true
}

func (v *view) release() { v.readers.Add(-1) }

func (v *view) retire() bool {
	v.retired.Store(true)
	return v.readers.Load() == 0
}

func (e *Handler) acquireView(f int) *view {
	for {
		if v := e.view(f); v.acquire() {
			return v
		}
	}
}

// flatten is called with renderMu held. Above flatView, a second slice while a scrape
// holds the last would cost more memory than the copies cost time.
func (e *Handler) flatten(v *view, f int) {
	last := e.lastFlat[f]
	e.lastFlat[f] = nil
	if !formGzip(f) || v.size > e.flatView {
		return // Pieces may point into last's slice: it is never reused.
	}
	var flat []byte
	headroom := v.size / 32
	e.steadyBuilds[f]++
	if last != nil {
		switch old := last.parts[0]; {
		case v.size > cap(old):
			headroom = v.size / 4 // growing, as while the first reads fill the data plane
			e.steadyBuilds[f] = 0
		case e.steadyBuilds[f] == flatSteadyBuilds && cap(old)-v.size > v.size/16:
			// Grown no more: the room goes with the last slice.
		case last.retire():
			flat = e.render.moveInPlace(old, f, v.size)
		}
	}
	if flat == nil {
		flat = make([]byte, v.size, v.size+headroom)
	}
	e.render.place(flat, f)
	v.parts = [][]byte{flat}
	e.lastFlat[f] = v
}

// flatSteadyBuilds without growth (a minute of a read's publishes) end a growth.
const flatSteadyBuilds = 12

// moveInPlace returns nil if old cannot hold a layout of size bytes. Pieces keep their order,
// so moving the leftward ones from the left, then the rightward from the right, overwrites none.
func (r *renderer) moveInPlace(old []byte, f, size int) []byte {
	if cap(old) < size || cap(old) > 2*size {
		return nil
	}
	flat := old[:size]
	end, ordered := 0, true
	r.walk(f, func(pc *piece, _ int) {
		if from := offsetIn(pc.b, flat); from >= 0 {
			ordered = ordered && from >= end
			end = from + len(pc.b)
		}
	})
	if !ordered {
		return nil // Not reached while chunks keep their order.
	}
	r.walk(f, func(pc *piece, off int) {
		if from := offsetIn(pc.b, flat); from >= 0 && off < from {
			copy(flat[off:], pc.b)
		}
	})
	r.walkBack(f, size, func(pc *piece, off int) {
		if from := offsetIn(pc.b, flat); from >= 0 && off > from {
			copy(flat[off:], pc.b)
		}
	})
	return flat
}

func (r *renderer) place(flat []byte, f int) {
	copy(flat, gzipHeader)
	off := len(gzipHeader)
	for fam, pieces := range r.byFamily {
		if len(pieces) == 0 {
			continue
		}
		off += copy(flat[off:], familyHeader(fam, f).b)
		for _, pc := range pieces {
			n := len(pc.b)
			if offsetIn(pc.b, flat) < 0 {
				copy(flat[off:], pc.b)
			}
			pc.b = flat[off : off+n : off+n]
			off += n
		}
	}
}

func (r *renderer) walk(f int, fn func(pc *piece, off int)) {
	off := len(gzipHeader)
	for fam, pieces := range r.byFamily {
		if len(pieces) == 0 {
			continue
		}
		off += len(familyHeader(fam, f).b)
		for _, pc := range pieces {
			fn(pc, off)
			off += len(pc.b)
		}
	}
}

func (r *renderer) walkBack(f, size int, fn func(pc *piece, off int)) {
	off := size
	for fam := len(r.byFamily) - 1; fam >= 0; fam-- {
		pieces := r.byFamily[fam]
		if len(pieces) == 0 {
			continue
		}
		for i := len(pieces) - 1; i >= 0; i-- {
			off -= len(pieces[i].b)
			fn(pieces[i], off)
		}
		off -= len(familyHeader(fam, f).b)
	}
}

// offsetIn returns where b lies in the memory of s (to its capacity), or -1.
func offsetIn(b, s []byte) int {
	if len(b) == 0 || cap(s) == 0 {
		return -1
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(s)))
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	if p < base || p >= base+uintptr(cap(s)) {
		return -1
	}
	return int(p - base)
}
