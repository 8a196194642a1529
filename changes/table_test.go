package changes

import (
	"fmt"
	"testing"
	"time"
	"unsafe"
)

// The table finds every entry it holds, and none it does not, as it grows
// and after entries are taken out; an id under two parents is two entries.
func TestTableFindsWhatItHolds(t *testing.T) {
	var tab table[rsFields, key]
	k := func(i int) key { return key{parent: fmt.Sprint("svc-", i%7), id: fmt.Sprint("rs-", i/2)} }
	const n = 3000
	for i := range n {
		if tab.find(k(i)) >= 0 {
			t.Fatalf("%v found before it was added", k(i))
		}
		tab.add(entry[rsFields, key]{k: k(i), f: rsFields{Name: fmt.Sprint(i)}})
	}
	tab.remove(func(en *entry[rsFields, key]) bool { return en.f.Name[len(en.f.Name)-1] == '3' })
	for i := range n {
		pos, removed := tab.find(k(i)), i%10 == 3
		switch {
		case removed && pos >= 0:
			t.Errorf("%v found after it was taken out", k(i))
		case !removed && (pos < 0 || tab.ents[pos].f.Name != fmt.Sprint(i)):
			t.Errorf("%v at %d", k(i), pos)
		}
	}
	if len(tab.ents) != n-n/10 || len(tab.pos) != len(tab.ents) || cap(tab.ents) > len(tab.ents)+len(tab.ents)/16 {
		t.Errorf("%d entries (capacity %d), %d positions", len(tab.ents), cap(tab.ents), len(tab.pos))
	}
}

// An entry fits the 128 B size class (BenchmarkDiffMemory measures what
// the differ keeps); a time out of the range of Unix nanoseconds is held
// as the nearest they can.
func TestEntrySize(t *testing.T) {
	if s, r := unsafe.Sizeof(entry[svcFields, idKey]{}), unsafe.Sizeof(entry[rsFields, key]{}); s > 128 || r > 128 {
		t.Errorf("a service's entry is %d B, a replica set's %d B; want at most 128", s, r)
	}
	for _, at := range []time.Time{{}, t0, time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC), time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)} {
		got, want := timeOf(nanos(at)), at
		switch {
		case at.IsZero():
		case at.Year() == 1:
			want = minNanos
		case at.Year() == 3000:
			want = maxNanos
		}
		if !got.Equal(want) || got.IsZero() != at.IsZero() {
			t.Errorf("%v held as %v, want %v", at, got, want)
		}
	}
}

// A complete read that adds objects leaves no unused quarter in the slice
// of entries (an append's growth would).
func TestCompleteReadSizesTheEntries(t *testing.T) {
	d := newDiffer("p1")
	s := fleetSnapshot(1000, 0)
	d.observe(s)
	more := fleetSnapshot(1001, 1)
	d.observe(more)
	for _, tr := range []struct{ len, cap int }{{len(d.services.ents), cap(d.services.ents)}, {len(d.replicaSets.ents), cap(d.replicaSets.ents)}} {
		if tr.len != 1001 || tr.cap != tr.len {
			t.Errorf("%d entries in a slice of %d; want 1001 in 1001", tr.len, tr.cap)
		}
	}
}
