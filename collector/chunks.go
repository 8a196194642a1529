package collector

import (
	"cmp"
	"hash/maphash"
	"reflect"

	"github.com/clouddb/clouddb_exporter/fleet"
)

// A project's exposition is kept in chunks: runs of consecutive services
// (or replica sets, VPCs, peerings) of its snapshot, each rendered on its
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

// chunkKey is the id of a chunk's first resource: (service id, replica
// set id), (VPC id, peering id), or (id, "") for services and VPCs. Lists
// in a snapshot are sorted by it.
type chunkKey [2]string

func compareKeys(a, b chunkKey) int {
	if c := cmp.Compare(a[0], b[0]); c != 0 {
		return c
	}
	return cmp.Compare(a[1], b[1])
}

// group is one list of a snapshot and the collect function that emits its
// metrics.
type group struct {
	len func(s *fleet.Snapshot) int
	key func(s *fleet.Snapshot, i int) chunkKey
	// part returns a snapshot that holds resources [i, j) of the list only,
	// sharing the snapshot's memory.
	part    func(s *fleet.Snapshot, i, j int) fleet.Snapshot
	collect func(out *sink, s *fleet.Snapshot)
}

// groups cover every metric of collectSnapshot, in its order; each family
// comes from one group only.
var groups = []group{
	{
		len: func(s *fleet.Snapshot) int { return len(s.Services) },
		key: func(s *fleet.Snapshot, i int) chunkKey { return chunkKey{s.Services[i].ServiceID} },
		part: func(s *fleet.Snapshot, i, j int) fleet.Snapshot {
			return fleet.Snapshot{ProjectID: s.ProjectID, Services: s.Services[i:j:j]}
		},
		collect: collectServices,
	},
	{
		len: func(s *fleet.Snapshot) int { return len(s.ReplicaSets) },
		key: func(s *fleet.Snapshot, i int) chunkKey {
			return chunkKey{s.ReplicaSets[i].ServiceID, s.ReplicaSets[i].ID}
		},
		part: func(s *fleet.Snapshot, i, j int) fleet.Snapshot {
			return fleet.Snapshot{ProjectID: s.ProjectID, ReplicaSets: s.ReplicaSets[i:j:j]}
		},
		collect: collectReplicaSets,
	},
	{
		len: func(s *fleet.Snapshot) int { return len(s.VPCs) },
		key: func(s *fleet.Snapshot, i int) chunkKey { return chunkKey{s.VPCs[i].ID} },
		part: func(s *fleet.Snapshot, i, j int) fleet.Snapshot {
			return fleet.Snapshot{ProjectID: s.ProjectID, VPCs: s.VPCs[i:j:j]}
		},
		collect: collectVPCs,
	},
	{
		len: func(s *fleet.Snapshot) int { return len(s.Peerings) },
		key: func(s *fleet.Snapshot, i int) chunkKey { return chunkKey{s.Peerings[i].VPCID, s.Peerings[i].ID} },
		part: func(s *fleet.Snapshot, i, j int) fleet.Snapshot {
			return fleet.Snapshot{ProjectID: s.ProjectID, Peerings: s.Peerings[i:j:j]}
		},
		collect: collectPeerings,
	},
	{
		// The credentials and the collection health: a few series, one
		// chunk, rendered again after every poll (durations and the
		// snapshot's time change each time).
		len: func(*fleet.Snapshot) int { return 1 },
		key: func(*fleet.Snapshot, int) chunkKey { return chunkKey{} },
		part: func(s *fleet.Snapshot, _, _ int) fleet.Snapshot {
			return fleet.Snapshot{ProjectID: s.ProjectID, ProjectName: s.ProjectName, Taken: s.Taken, Auth: s.Auth, Parts: s.Parts}
		},
		collect: func(out *sink, s *fleet.Snapshot) {
			collectAuth(out, s)
			collectHealth(out, s)
		},
	},
}

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

// rechunk splits the list of group g in s into chunks, reusing the
// renderings of the old chunks whose resources are unchanged. Both lists
// are sorted by key, so the old chunk starting at the same key is found by
// walking them side by side. It returns the chunks and how many of them
// changed.
func rechunk(g *group, s *fleet.Snapshot, old []*chunk) (chunks []*chunk, changed int) {
	n := g.len(s)
	o := 0
	start := 0
	for i := range n {
		k := g.key(s, i)
		if i+1 < n && !isBoundary(k) {
			continue
		}
		first := g.key(s, start)
		part := g.part(s, start, i+1)
		start = i + 1
		for o < len(old) && compareKeys(old[o].first, first) < 0 {
			o++
		}
		if o < len(old) && old[o].first == first && reflect.DeepEqual(&old[o].src, &part) {
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
