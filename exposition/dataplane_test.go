package exposition

import (
	"slices"
	"testing"

	"github.com/clouddb/clouddb_exporter/collector"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/fleettest"
)

// TestDataPlaneChunksComparedWithoutGarbage: a publish of the usage or
// the log counts (every 5 s of a read) makes a new list of the same
// series and counts; comparing its chunks with the last ones allocates
// nothing per chunk (reflect.DeepEqual made a map of the pointers it
// followed in every chunk, some 1 MB/s of garbage at 10,000 services).
func TestDataPlaneChunksComparedWithoutGarbage(t *testing.T) {
	snap := fleettest.WithDataPlane(fleettest.Synthetic("p", 2000))
	next := *snap
	next.Data = nil
	u := snap.Usage()
	next.SetData(fleet.PartUsage, &fleet.Usage{Suffixes: slices.Clone(u.Suffixes), Services: slices.Clone(u.Services), RefreshPeriod: u.RefreshPeriod})
	next.SetData(fleet.PartLogs, &fleet.Logs{Counts: slices.Clone(snap.Logs().Counts)})
	for name, n := range map[string]int{fleet.PartUsage: len(u.Services), fleet.PartLogs: len(snap.Logs().Counts)} {
		g := dataPlaneGroup(t, snap, name, n)
		old, _ := rechunk(g, snap, nil)
		if len(old) < 10 {
			t.Fatalf("%s: %d chunks", name, len(old))
		}
		var changed int
		allocs := testing.AllocsPerRun(5, func() { _, changed = rechunk(g, &next, old) })
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

// dataPlaneGroup returns the group of data part name whose list in s has n
// items (the usage's services or the log counts).
func dataPlaneGroup(t *testing.T, s *fleet.Snapshot, name string, n int) *collector.Group {
	t.Helper()
	for i := range groups {
		if groups[i].Len(s) == n && groups[i].Part(s, 0, 1).Data[name] != nil {
			return &groups[i]
		}
	}
	t.Fatalf("no group of %d items", n)
	return nil
}
