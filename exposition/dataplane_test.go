package exposition

import (
	"slices"
	"testing"

	"github.com/clouddb/clouddb_exporter/collector"
	"github.com/clouddb/clouddb_exporter/dataplane"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/dataplanetest"
	"github.com/clouddb/clouddb_exporter/internal/fleettest"
)

// TestDataPlaneChunksComparedWithoutGarbage: a publish of the usage or
// the log counts (every 5 s of a read) makes a new list of the same
// series and counts; comparing its chunks with the last ones allocates
// nothing per chunk (reflect.DeepEqual made a map of the pointers it
// followed in every chunk, some 1 MB/s of garbage at 10,000 services).
func TestDataPlaneChunksComparedWithoutGarbage(t *testing.T) {
	// Chunk boundaries hash with a seed of each process: 8,000 services make
	// about 31 boundaries in each list, fewer than 5 once in a billion runs.
	snap := dataplanetest.WithDataPlane(fleettest.Synthetic("p", 8000))
	next := *snap
	next.Data = nil
	u := fleet.DataOf[dataplane.Usage](snap, dataplane.PartUsage)
	next.SetData(dataplane.PartUsage, &dataplane.Usage{Suffixes: slices.Clone(u.Suffixes), Services: slices.Clone(u.Services), RefreshPeriod: u.RefreshPeriod})
	counts := make([]*dataplane.ServiceLogs, 0, len(fleet.DataOf[dataplane.Logs](snap, dataplane.PartLogs).Counts))
	for _, c := range fleet.DataOf[dataplane.Logs](snap, dataplane.PartLogs).Counts {
		counts = append(counts, c.Clone()) // compared by value, not by pointer
	}
	next.SetData(dataplane.PartLogs, &dataplane.Logs{Counts: counts})
	for _, name := range []string{dataplane.PartUsage, dataplane.PartLogs} {
		g := dataPlaneGroup(t, snap, name)
		old, _ := rechunk(g, snap, nil, false)
		if len(old) < 5 {
			t.Fatalf("%s: %d chunks", name, len(old))
		}
		var changed int
		allocs := testing.AllocsPerRun(5, func() { _, changed = rechunk(g, &next, old, false) })
		if changed != 0 {
			t.Errorf("%s: %d chunks changed, want none", name, changed)
		}
		// Each part's own header (a Usage or Logs) in its one-entry data
		// map, and the list of chunks: nothing that grows with a chunk.
		if allocs > float64(len(old))*3.1+10 {
			t.Errorf("%s: comparing %d chunks made %.0f allocations", name, len(old), allocs)
		}
	}
}

// dataPlaneGroup returns the group of part's list in s (its other group
// has one item).
func dataPlaneGroup(t *testing.T, s *fleet.Snapshot, part string) *collector.Group {
	t.Helper()
	only := &fleet.Snapshot{ProjectID: s.ProjectID, Data: map[string]any{part: s.Data[part]}}
	for i := range groups {
		if groups[i].Len(only) > 1 {
			return &groups[i]
		}
	}
	t.Fatalf("no list of %s", part)
	return nil
}
