package changes

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// savedNames is each saved entry's id, name and fields' name, sorted.
func savedNames(l savedList[svcFields]) []string {
	var out []string
	for _, e := range l.Entries {
		out = append(out, e.ID+"="+e.Name+"/"+e.Fields.Name)
	}
	slices.Sort(out)
	return out
}

// A name that did not decode is no rename; the object goes on being named
// as it was last read (""), while the fields keep the last name that decoded.
func TestNameThatDidNotDecode(t *testing.T) {
	d := newDiffer("p1")
	nameless := func() *apiclient.Service {
		s := svc("a", "", 1000, 4)
		s.Dropped = []apiclient.FieldError{{Field: "name", Err: "not a string"}}
		return s
	}
	d.observe(snapAt(0, false, svc("a", "orders", 1000, 4), svc("b", "billing", 1000, 4)))
	expectKinds(t, d.observe(snapAt(1, false, nameless(), svc("b", "billing", 1000, 4))))
	if got := savedNames(d.save().Services); strings.Join(got, " ") != "a=/orders b=billing/billing" {
		t.Errorf("saved %v; want a's name blank, its fields' name kept", got)
	}
	expectKinds(t, d.observe(snapAt(2, false, svc("a", "orders", 1000, 4), svc("b", "billing", 1000, 4))))
	if got := savedNames(d.save().Services); strings.Join(got, " ") != "a=orders/orders b=billing/billing" {
		t.Errorf("saved %v; want a named again", got)
	}
	// Deleted while its name does not decode: named as last read.
	d.observe(snapAt(3, false, nameless()))
	got := d.observe(snapAt(4, false, nameless()))
	expectKinds(t, got, "service/b/deleted")
	if got[0].ObjectName != "billing" || got[0].Before["name"] != "billing" {
		t.Errorf("b deleted as %q, %v", got[0].ObjectName, got[0].Before)
	}
	d.observe(snapAt(5, false))
	got = d.observe(snapAt(6, false))
	expectKinds(t, got, "service/a/deleted")
	if got[0].ObjectName != "" || got[0].Before["name"] != "" {
		t.Errorf("a deleted as %q, %v; want the name it was last read with", got[0].ObjectName, got[0].Before)
	}
}

// A peering's peer VPC is its name, not one of the fields it compares: a new
// one alone is no event and leaves the last read as it was.
func TestPeeringPeerIsItsName(t *testing.T) {
	d := newDiffer("p1")
	mk := func(m int, complete bool, peer, status string) *fleet.Snapshot {
		s := snapAt(m, false)
		s.Peerings = []fleet.Peering{{VPCID: "v", Peering: &apiclient.Peering{ID: "pe", PeerVPCID: peer, Status: status}}}
		last := t0
		if complete {
			last = s.Taken
		}
		s.Parts = append(s.Parts, fleet.PartHealth{Name: fleet.PartVPCs, Success: true, LastSuccess: t0},
			fleet.PartHealth{Name: fleet.PartPeerings, Success: true, LastSuccess: last})
		return s
	}
	d.observe(mk(0, true, "vpc-x", "active"))
	expectKinds(t, d.observe(mk(1, false, "vpc-y", "active")))
	l := d.peerings.save()
	if len(l.Entries) != 1 || l.Entries[0].Name != "vpc-y" || !l.Entries[0].Read.Equal(t0) {
		t.Fatalf("saved %+v; want named vpc-y, read at %v", l.Entries, t0)
	}
	got := d.observe(mk(2, false, "", "failed"))
	expectKinds(t, got, "peering/pe/status_changed")
	if got[0].ObjectName != "" || !got[0].WindowStart.Equal(t0) {
		t.Errorf("named %q, window_start %v; want the name as read and %v", got[0].ObjectName, got[0].WindowStart, t0)
	}
	if l := d.peerings.save(); l.Entries[0].Name != "" || !l.Entries[0].Read.Equal(t0.Add(2*time.Minute)) {
		t.Errorf("saved %+v; want no name, read at the change", l.Entries)
	}
}

// What a state file restores is what it holds: saved again, it is the same.
func TestStateRoundTrip(t *testing.T) {
	d := newDiffer("p1")
	d.observe(rsSnap(0, 10, 10, false, rs("r1", 1), rs("r2", 3)))
	v := svc("a", "", 1000, 4)
	v.Dropped = []apiclient.FieldError{{Field: "name", Err: "not a string"}}
	s := rsSnap(1, 10, 10, false, rs("r2", 3))
	s.Services = []fleet.Service{{Service: v}}
	d.observe(s) // r1 missed once, a's name blank
	want := marshalSorted(t, d.save())
	var restored *differ
	st, err := decodeState(strings.NewReader(`{"version":1,"projects":{"p1":` + string(want) + `}}`))
	if err == nil {
		restored = st.differs["p1"]
	}
	if restored == nil {
		t.Fatalf("decode: %v", err)
	}
	if got := marshalSorted(t, restored.save()); !bytes.Equal(got, want) {
		t.Errorf("saved again:\n%s\nwant\n%s", got, want)
	}
	// r1 is deleted by the next complete read that lacks it, as it would have been.
	expectKinds(t, restored.observe(rsSnap(2, 10, 10, false, rs("r2", 3))), "replica_set/r1/deleted")
}

// marshalSorted is a project's state with each list's entries in id order.
func marshalSorted(t *testing.T, p *savedProject) []byte {
	t.Helper()
	byID := func(a, b savedEntry[rsFields]) int { return strings.Compare(a.ID, b.ID) }
	slices.SortFunc(p.ReplicaSets.Entries, byID)
	slices.SortFunc(p.Services.Entries, func(a, b savedEntry[svcFields]) int { return strings.Compare(a.ID, b.ID) })
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A size beyond 32 bits in a state file (none the API could mean) is read,
// not taken for a damaged file, and is no change when read again.
func TestStateSizeBeyond32Bits(t *testing.T) {
	const file = `{"version":1,"projects":{"p1":{"services":{"baselined":true,"last_complete_read":"2026-03-01T03:00:00Z",
		"entries":[{"id":"a","name":"a","read":"2026-03-01T03:00:00Z","fields":{"Name":"a","Status":"READY","Env":"","VPC":"",
		"CPU":1000,"Mem":17179869184,"Replicas":-1,"Sync":-1,"Pooler":false}}]}}}}`
	st, err := decodeState(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	d := st.differs["p1"]
	expectKinds(t, d.observe(snapAt(1, false, svc("a", "a", 1000, 17179869184))))
	expectKinds(t, d.observe(snapAt(2, false, svc("a", "a", 1000, 4))), "service/a/resized")
}
