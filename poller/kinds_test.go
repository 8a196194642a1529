package poller

import (
	"slices"
	"testing"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// TestChildListsAreKnown keeps each entry of newChildLists tied to a part
// the snapshot reports and to operations of the catalog: a typo would
// otherwise show only as a part that never reports or an unmetered call.
func TestChildListsAreKnown(t *testing.T) {
	seen := map[string]bool{}
	for _, l := range newChildLists() {
		if seen[l.part()] || !slices.Contains(fleet.Parts, l.part()) || !slices.Contains(fleet.Parts, l.parentPart()) {
			t.Errorf("list %q (parent %q): want a part of fleet.Parts, once", l.part(), l.parentPart())
		}
		seen[l.part()] = true
		if !slices.ContainsFunc(apiclient.Catalog(), func(o apiclient.Operation) bool { return o.Name == l.listOp() && !o.Write }) {
			t.Errorf("list %q: operation %q is not a read of the catalog", l.part(), l.listOp())
		}
	}
}
