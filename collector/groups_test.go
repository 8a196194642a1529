package collector

import (
	"cmp"
	"fmt"
	"slices"
	"testing"

	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/fleettest"
)

// record returns the samples collect emits for s, one line each.
func record(collect func(*Sink, *fleet.Snapshot), s *fleet.Snapshot) []string {
	var rec Samples
	collect(rec.Sink(), s)
	lines := make([]string, rec.Len())
	for i := range lines {
		d, v, lv := rec.At(i)
		lines[i] = fmt.Sprint(d.Name(), lv, v)
	}
	return lines
}

// Every family comes from exactly one group, and the groups together emit
// every family: an encoder can render group by group.
func TestGroupsEmitEachFamilyOnce(t *testing.T) {
	groups := Groups()
	from := map[string]int{}
	for g := range groups {
		for _, s := range fleettest.Snapshots() {
			var rec Samples
			groups[g].Collect(rec.Sink(), s)
			for i := range rec.Len() {
				d, _, _ := rec.At(i)
				if prev, seen := from[d.Name()]; seen && prev != g {
					t.Errorf("%s comes from groups %d and %d", d.Name(), prev, g)
				}
				from[d.Name()] = g
			}
		}
	}
	for _, d := range Families() {
		if _, ok := from[d.Name()]; !ok {
			t.Errorf("no group emits %s (add its collect function to a group in groups.go)", d.Name())
		}
	}
}

// A group's parts, collected one after another, emit what the whole list
// emits: the exposition renders a list in parts (its chunks).
func TestGroupParts(t *testing.T) {
	groups := Groups()
	for _, s := range fleettest.Snapshots() {
		for g := range groups {
			grp := &groups[g]
			whole := record(grp.Collect, s)
			n := grp.Len(s)
			for cut := range n + 1 {
				var parts []string
				for _, r := range [][2]int{{0, cut}, {cut, n}} {
					if r[0] == r[1] {
						continue
					}
					part := grp.Part(s, r[0], r[1])
					parts = append(parts, record(grp.Collect, &part)...)
				}
				if !slices.Equal(parts, whole) {
					t.Errorf("%s group %d cut at %d:\n%q\nwant\n%q", s.ProjectID, g, cut, parts, whole)
				}
			}
			for i := 1; i < n; i++ {
				if compareKey(grp.Key(s, i-1), grp.Key(s, i)) >= 0 {
					t.Errorf("%s group %d: key %d not after key %d", s.ProjectID, g, i, i-1)
				}
			}
		}
	}
}

func compareKey(a, b Key) int {
	return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
}

func TestFamiliesSortedAndIndexed(t *testing.T) {
	fams := Families()
	if len(fams) != len(allDescs()) {
		t.Fatalf("%d families, %d descriptors", len(fams), len(allDescs()))
	}
	for i, d := range fams {
		if d.Family() != i {
			t.Errorf("%s: Family() = %d, want its index %d", d.Name(), d.Family(), i)
		}
		if i > 0 && fams[i-1].Name() >= d.Name() {
			t.Errorf("%s after %s: not sorted by name", d.Name(), fams[i-1].Name())
		}
	}
}

func TestSamples(t *testing.T) {
	var rec Samples
	out := rec.Sink()
	out.gauge(vpcInfoDesc, 1, "p", "v", "n", "c", "r")
	out.gauge(serviceResourcesDesc, 2.5, "p", "s")
	if rec.Len() != 2 {
		t.Fatalf("Len = %d, want 2", rec.Len())
	}
	d, v, lv := rec.At(1)
	if d != serviceResourcesDesc || v != 2.5 || !slices.Equal(lv, []string{"p", "s"}) {
		t.Errorf("At(1) = %s %g %q", d.Name(), v, lv)
	}
	if _, _, lv := rec.At(0); !slices.Equal(lv, []string{"p", "v", "n", "c", "r"}) {
		t.Errorf("At(0) label values %q", lv)
	}
	rec.Reset()
	if rec.Len() != 0 {
		t.Errorf("Len after Reset = %d", rec.Len())
	}
	out.gauge(vpcInfoDesc, 1, "q", "v", "n", "c", "r")
	if _, _, lv := rec.At(0); lv[0] != "q" {
		t.Errorf("after Reset, At(0) label values %q", lv)
	}
	if kept := rec.Trim(0); kept != 0 {
		t.Errorf("Trim(0) kept %d bytes", kept)
	}
}
