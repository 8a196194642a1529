package changes

import (
	"math"
	"time"
	"unsafe"
)

// objKey names an object in its project: idKey where the id alone does,
// key where its parent is part of the name (replica sets, peerings).
type objKey[K any] interface {
	comparable
	ids() (parent, id string)
	of(parent, id string) K
}

// idKey names an object by its id alone (services, VPCs): half a key.
type idKey string

func (k idKey) ids() (parent, id string) { return "", string(k) }
func (idKey) of(_, id string) idKey      { return idKey(id) }

func (k key) ids() (parent, id string) { return k.parent, k.id }
func (key) of(parent, id string) key   { return key{parent: parent, id: id} }

// entry is what the differ knows of one object, kept small: a fleet of
// 10,000 services holds 20,000 of them.
type entry[F comparable, K objKey[K]] struct {
	// ptr is the value last compared (snapshots share an unchanged value),
	// nil after a restart until it is read again.
	ptr unsafe.Pointer
	k   K
	// f holds the object's name too (see kindOf.named).
	f F
	// read is the last complete read that held the object (Unix ns, 0 for
	// none): a change happened after it.
	read int64
	// listed is the generation of the last complete read that held it.
	listed uint32
	// missed counts complete reads in a row that lacked it.
	missed int16
	flags  uint8
}

const (
	// gone: it left a list between complete reads (a 404 on its get).
	gone = 1 << iota
	// blank: its name did not decode; f keeps the last one that did.
	blank
	// dropped: deleted, to be taken out of the table.
	dropped
)

// nanos is t in Unix nanoseconds, 0 for the zero time; a time out of
// their range (before 1678, after 2262) is taken as the nearest they hold.
func nanos(t time.Time) int64 {
	switch {
	case t.IsZero():
		return 0
	case t.Before(minNanos):
		return math.MinInt64
	case t.After(maxNanos):
		return math.MaxInt64
	}
	return t.UnixNano()
}

var minNanos, maxNanos = time.Unix(0, math.MinInt64), time.Unix(0, math.MaxInt64)

// timeOf is the time of nanos: local, as time.Now's are.
func timeOf(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// table holds a tracker's entries in a slice, found by key through a map
// of their positions: the entries take no allocation each, and an int32
// is half a pointer that the collector does not scan.
type table[F comparable, K objKey[K]] struct {
	ents []entry[F, K]
	// pos is each entry's position in ents: 2^31 objects are far beyond
	// the largest fleet supported (100,000 services).
	pos map[K]int32
	// seen marks, by position, the entries a compare found in its list:
	// a bit each, grown with the entries so that a compare allocates
	// nothing.
	seen []uint64
}

// find returns k's position, -1 if it has no entry.
func (t *table[F, K]) find(k K) int {
	if p, ok := t.pos[k]; ok {
		return int(p)
	}
	return -1
}

// add appends en, whose key has no entry, and returns its position.
func (t *table[F, K]) add(en entry[F, K]) int {
	if t.pos == nil {
		t.pos = map[K]int32{}
	}
	t.pos[en.k] = int32(len(t.ents))
	t.ents = append(t.ents, en)
	if len(t.ents) > 64*len(t.seen) {
		t.seen = append(t.seen, 0)
	}
	return len(t.ents) - 1
}

// remove drops the entries for which drop is true, keeping the others'
// order.
func (t *table[F, K]) remove(drop func(*entry[F, K]) bool) {
	kept := t.ents[:0]
	for i := range t.ents {
		en := &t.ents[i]
		if drop(en) {
			delete(t.pos, en.k)
			continue
		}
		t.pos[en.k] = int32(len(kept))
		kept = append(kept, *en)
	}
	clear(t.ents[len(kept):]) // no pointer into an old snapshot is kept
	t.ents = kept
	t.fit()
}

// reserve gives the entries a slice of at least n, exactly n if it grows.
func (t *table[F, K]) reserve(n int) {
	if cap(t.ents) < n {
		t.ents = append(make([]entry[F, K], 0, n), t.ents...)
	}
}

// fit gives the entries a slice of about their length: an append's
// amortised growth would leave a quarter of it unused.
func (t *table[F, K]) fit() {
	if cap(t.ents)-len(t.ents) > len(t.ents)/16 {
		t.ents = append(make([]entry[F, K], 0, len(t.ents)), t.ents...)
	}
}
