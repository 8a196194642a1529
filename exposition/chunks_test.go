package exposition

import (
	"slices"
	"testing"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/collector"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/fleettest"
)

// chunkLayout lists each chunk's first key and length.
func chunkLayout(g *collector.Group, chunks []*chunk) (out []chunkSpan) {
	for _, c := range chunks {
		out = append(out, chunkSpan{c.first, g.Len(&c.src)})
	}
	return out
}

type chunkSpan struct {
	first chunkKey
	n     int
}

// TestRechunkRemembersBoundaries: a list chunked again after a change
// has the chunks of a list chunked from scratch, whatever changed, and
// an unchanged chunk costs a key or two, not one a resource.
func TestRechunkRemembersBoundaries(t *testing.T) {
	base := fleettest.Synthetic("p", 3000)
	g := &groups[0] // the services
	old, _ := rechunk(g, base, nil, false)
	if len(old) < 3 {
		t.Fatalf("%d chunks of %d services", len(old), len(base.Services))
	}
	// The last service of a chunk: removing it joins two chunks.
	boundary := g.Len(&old[0].src) - 1
	changed := func(i int) []fleet.Service {
		out := slices.Clone(base.Services)
		svc := *out[i].Service
		svc.Status = apiclient.ServiceUnstable
		out[i].Service = &svc
		return out
	}
	extra := fleet.Service{Service: &apiclient.Service{ServiceID: "svc-001500a", ProjectID: "p"}}
	for name, services := range map[string][]fleet.Service{
		"unchanged":       slices.Clone(base.Services),
		"one changed":     changed(1500),
		"boundary change": changed(boundary),
		"one added":       slices.Insert(slices.Clone(base.Services), 1501, extra),
		"boundary gone":   slices.Delete(slices.Clone(base.Services), boundary, boundary+1),
		"last gone":       base.Services[:len(base.Services)-1],
		"one appended": append(slices.Clone(base.Services),
			fleet.Service{Service: &apiclient.Service{ServiceID: "svc-999999", ProjectID: "p"}}),
		"first gone": base.Services[1:],
	} {
		next := *base
		next.Services = services
		fresh, _ := rechunk(g, &next, nil, false)
		keys := 0
		counting := *g
		counting.Key = func(s *fleet.Snapshot, i int) chunkKey { keys++; return g.Key(s, i) }
		again, _ := rechunk(&counting, &next, old, false)
		if got, want := chunkLayout(g, again), chunkLayout(g, fresh); !slices.Equal(got, want) {
			t.Errorf("%s: chunks %v, want %v", name, got, want)
		}
		if name == "unchanged" && keys > 2*len(old) {
			t.Errorf("%s: %d keys read for %d chunks of %d services", name, keys, len(old), len(services))
		}
	}
}
