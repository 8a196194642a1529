package exposition

import (
	"cmp"
	"hash/maphash"
	"reflect"
	"sync"

	"github.com/clouddb/clouddb_exporter/collector"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// A project's exposition is kept in chunks of one collector.Group; only
// changed chunks are rendered again. Boundaries depend on content (a key
// hashing to 0), so adding a service moves only its own chunk's boundaries.

// chunkTarget trades re-rendering per change against pieces per scrape
// (each piece is compressed on its own).
const chunkTarget = 256

// chunkSeed: boundaries only need to be stable within one process.
var chunkSeed = maphash.MakeSeed()

type chunkKey = collector.Key

func compareKeys(a, b chunkKey) int {
	if c := cmp.Compare(a[0], b[0]); c != 0 {
		return c
	}
	return cmp.Compare(a[1], b[1])
}

var groups []collector.Group

var collectorRead sync.Once

// loadCollector reads the collector's groups and families when the first
// Handler is made: data-plane readers register from their package's init,
// which may run after this package's.
func loadCollector() {
	collectorRead.Do(func() {
		groups = collector.Groups()
		families = newFamilies(collector.Families())
	})
}

type chunk struct {
	first chunkKey
	// src is the part last rendered (or found equal to it).
	src fleet.Snapshot
	// forms is nil for a form nobody asked for since src changed.
	forms [numForms]*chunkForm
	// prev is the chunk of the same first key that this one replaced, until
	// this one is rendered: its pieces of the families that did not change
	// are taken as they are (a usage read's first publishes change the
	// nodes' totals alone).
	prev *chunk
}

type chunkForm struct {
	pieces []piece
}

type piece struct {
	b      []byte // raw, or deflated for a gzip form
	raw    int32  // length of the raw bytes (a chunk's family: kilobytes)
	family int32
	// For a gzip form: crc is the CRC-32 of the raw bytes; shift is
	// crcX8n(raw), since every view combines every piece's CRC, and the
	// shift was most of that; samples is the sum of the samples written
	// (lineWriter.writeAll), 0 for none: a chunk rendered again takes the
	// piece of the one it replaces whose samples have the same sum, without
	// writing its lines.
	crc, shift uint32
	samples    uint64
}

// isBoundary: an item that stands for weight resources ends a chunk weight
// times as often, so that chunks hold about chunkTarget resources each.
func isBoundary(k chunkKey, weight int) bool {
	var h maphash.Hash
	h.SetSeed(chunkSeed)
	h.WriteString(k[0])
	h.WriteByte(0)
	h.WriteString(k[1])
	return h.Sum64()%chunkTarget < uint64(max(weight, 0))
}

func weight(g *collector.Group, s *fleet.Snapshot, i int) int {
	if g.Weight == nil {
		return 1
	}
	return g.Weight(s, i)
}

// equalParts reports whether two parts of group g are the same.
func equalParts(g *collector.Group, a, b *fleet.Snapshot) bool {
	if g.Equal != nil {
		return g.Equal(a, b)
	}
	return reflect.DeepEqual(a, b)
}

// rechunk reuses the renderings of unchanged chunks; both lists are sorted
// by key, so they are walked side by side. With keep, a changed chunk
// keeps the one of the same first key it replaces (prev).
func rechunk(g *collector.Group, s *fleet.Snapshot, old []*chunk, keep bool) (chunks []*chunk, changed int) {
	n := g.Len(s)
	o := 0
	// One for the call, not one a chunk: equalParts takes its address.
	var part fleet.Snapshot
	for start := 0; start < n; {
		first := g.Key(s, start)
		for o < len(old) && compareKeys(old[o].first, first) < 0 {
			o++
		}
		var prev *chunk
		if o < len(old) && old[o].first == first {
			prev = old[o]
		}
		end, same := sameEnd(g, s, n, start, prev, &part)
		if !same {
			tried := end
			end = nextEnd(g, s, n, start)
			part = g.Part(s, start, end)
			same = prev != nil && end != tried && equalParts(g, &prev.src, &part)
		}
		start = end
		if same {
			// Point at the new snapshot so that the old one can be freed.
			prev.src = part
			chunks = append(chunks, prev)
			o++
			continue
		}
		c := &chunk{first: first, src: part}
		if keep {
			c.prev = prev
		}
		chunks = append(chunks, c)
		changed++
	}
	return chunks, changed
}

// sameEnd returns where prev ends if it starts at start of s's n resources,
// and whether its part (then in *part) is unchanged; -1 if it cannot end
// there. An unchanged chunk ends where it ended, since its boundaries are
// its resources': only the changed runs of a list are hashed again.
func sameEnd(g *collector.Group, s *fleet.Snapshot, n, start int, prev *chunk, part *fleet.Snapshot) (end int, same bool) {
	if prev == nil {
		return -1, false
	}
	end = start + g.Len(&prev.src)
	if end > n || end < n && !isBoundary(g.Key(s, end-1), weight(g, s, end-1)) {
		return -1, false
	}
	*part = g.Part(s, start, end)
	return end, equalParts(g, &prev.src, part)
}

// nextEnd returns the end of the chunk starting at start of s's n resources.
func nextEnd(g *collector.Group, s *fleet.Snapshot, n, start int) int {
	end := start + 1
	for end < n && !isBoundary(g.Key(s, end-1), weight(g, s, end-1)) {
		end++
	}
	return end
}
