package exposition

import (
	"cmp"
	"hash/maphash"
	"reflect"

	"github.com/clouddb/clouddb_exporter/collector"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// A project's exposition is kept in chunks: runs of consecutive resources
// of one list of its snapshot (a collector.Group: services, replica sets,
// VPCs, peerings), each rendered on its
// own. A new snapshot is compared with the last one chunk by chunk, and
// only the chunks whose resources differ are rendered again: a poll in
// which nothing changed renders nothing, and a change to one service
// renders the few dozen resources of its chunk.
//
// Chunk boundaries are chosen by content, after every resource whose id
// hashes to 0 modulo chunkTarget, so that a service added or removed moves
// the boundaries of its own chunk only, not of every chunk after it.

// chunkTarget is the mean number of resources per chunk. Smaller chunks
// re-render less per change but make more pieces for each scrape to write
// and compress worse (each piece is compressed on its own). At 256, a
// change re-renders about a millisecond's worth, and a 10k-service project
// is some 1,000 pieces.
const chunkTarget = 256

// chunkSeed keys the boundary hash. Boundaries only need to be stable
// within one process.
var chunkSeed = maphash.MakeSeed()

// chunkKey is the id of a chunk's first resource (collector.Key). Lists
// in a snapshot are sorted by it.
type chunkKey = collector.Key

func compareKeys(a, b chunkKey) int {
	if c := cmp.Compare(a[0], b[0]); c != 0 {
		return c
	}
	return cmp.Compare(a[1], b[1])
}

// groups are the resource lists of a snapshot (collector.Groups): each
// project keeps the chunks of each group, by index.
var groups = collector.Groups()

// chunk is a run of resources of one group of a project and its renderings.
type chunk struct {
	first chunkKey
	// src is the part of the snapshot last rendered (or found equal to
	// what was), compared with the next snapshot's.
	src fleet.Snapshot
	// forms holds the rendering in each form asked for since src last
	// changed; nil for a form nobody asked for.
	forms [numForms]*chunkForm
}

// chunkForm is a chunk's rendering in one form: the samples of each of its
// families, raw or as a sync-flushed deflate piece.
type chunkForm struct {
	pieces []piece
}

// piece is a chunk's samples of one family in one form.
type piece struct {
	family int
	b      []byte // raw, or deflated for a gzip form
	crc    uint32 // CRC-32 of the raw bytes, for a gzip form
	raw    int    // length of the raw bytes
}

// isBoundary reports whether a chunk ends after a resource with key k.
func isBoundary(k chunkKey) bool {
	var h maphash.Hash
	h.SetSeed(chunkSeed)
	h.WriteString(k[0])
	h.WriteByte(0)
	h.WriteString(k[1])
	return h.Sum64()%chunkTarget == 0
}

// equalParts reports whether two parts of group g are the same.
func equalParts(g *collector.Group, a, b *fleet.Snapshot) bool {
	if g.Equal != nil {
		return g.Equal(a, b)
	}
	return reflect.DeepEqual(a, b)
}

// rechunk splits the list of group g in s into chunks, reusing the
// renderings of the old chunks whose resources are unchanged. Both lists
// are sorted by key, so the old chunk starting at the same key is found by
// walking them side by side. It returns the chunks and how many of them
// changed.
func rechunk(g *collector.Group, s *fleet.Snapshot, old []*chunk) (chunks []*chunk, changed int) {
	n := g.Len(s)
	o := 0
	start := 0
	// One for the call, not one a chunk: equalParts takes its address.
	var part fleet.Snapshot
	for i := range n {
		k := g.Key(s, i)
		if i+1 < n && !isBoundary(k) {
			continue
		}
		first := g.Key(s, start)
		part = g.Part(s, start, i+1)
		start = i + 1
		for o < len(old) && compareKeys(old[o].first, first) < 0 {
			o++
		}
		if o < len(old) && old[o].first == first && equalParts(g, &old[o].src, &part) {
			c := old[o]
			o++
			// Point at the new snapshot so that the old one can be freed.
			c.src = part
			chunks = append(chunks, c)
			continue
		}
		chunks = append(chunks, &chunk{first: first, src: part})
		changed++
	}
	return chunks, changed
}
