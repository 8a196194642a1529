package changes

import (
	"hash/maphash"
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
	hash(maphash.Seed) uint64
}

// idKey names an object by its id alone (services, VPCs): half a key.
type idKey string

func (k idKey) ids() (parent, id string)   { return "", string(k) }
func (idKey) of(_, id string) idKey        { return idKey(id) }
func (k idKey) hash(s maphash.Seed) uint64 { return maphash.String(s, string(k)) }

func (k key) ids() (parent, id string) { return k.parent, k.id }
func (key) of(parent, id string) key   { return key{parent: parent, id: id} }
func (k key) hash(s maphash.Seed) uint64 {
	return maphash.String(s, k.id) ^ 0x9e3779b97f4a7c15*maphash.String(s, k.parent)
}

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

// table holds a tracker's entries in a slice and finds them by key
// through an open-addressed index of their positions. A Go map of 10,000
// keys of two strings to positions costs some 80 B a key (44 B for keys
// of one string); the index costs 4 B a slot, 5 to 11 B an entry.
type table[F comparable, K objKey[K]] struct {
	ents []entry[F, K]
	// slots holds an entry's position + 1 (0 for none) in the low 24 bits
	// and 8 bits of its key's hash above them, so that a probe rarely
	// reads an entry not sought; its length is a power of two, at most
	// three quarters full; linear probing. 2^24 objects in one list are
	// far beyond the largest fleet supported (100,000 services).
	slots []uint32
	seed  maphash.Seed
	// seen marks, by position, the entries a compare found in its list:
	// a bit for each slot, so that a compare allocates nothing.
	seen []uint64
}

func newTable[F comparable, K objKey[K]]() table[F, K] { return table[F, K]{seed: maphash.MakeSeed()} }

// find returns k's position, -1 if it has no entry.
func (t *table[F, K]) find(k K) int {
	if len(t.slots) == 0 {
		return -1
	}
	h := k.hash(t.seed)
	mask, tag := uint64(len(t.slots)-1), tagOf(h)
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return -1
		}
		if p := int(s&posMask) - 1; s&^posMask == tag && t.ents[p].k == k {
			return p
		}
	}
}

const posMask = 1<<24 - 1

func tagOf(h uint64) uint32 { return uint32(h>>56) << 24 }

// add appends en, whose key has no entry, and returns its position; -1
// if the table is full (2^24 - 1 entries, not followed).
func (t *table[F, K]) add(en entry[F, K]) int {
	if len(t.ents) == posMask {
		return -1
	}
	t.ents = append(t.ents, en)
	if 4*len(t.ents) > 3*len(t.slots) {
		t.index()
	} else {
		t.insert(len(t.ents) - 1)
	}
	return len(t.ents) - 1
}

func (t *table[F, K]) insert(pos int) {
	h := t.ents[pos].k.hash(t.seed)
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = tagOf(h) | uint32(pos+1)
}

// index rebuilds the index, sized for the entries.
func (t *table[F, K]) index() {
	n := 8
	for 4*len(t.ents) > 3*n {
		n *= 2
	}
	if n != len(t.slots) {
		t.slots, t.seen = make([]uint32, n), make([]uint64, (n+63)/64)
	} else {
		clear(t.slots)
	}
	for pos := range t.ents {
		t.insert(pos)
	}
}

// remove drops the entries for which drop is true, keeping the others'
// order, and reindexes.
func (t *table[F, K]) remove(drop func(*entry[F, K]) bool) {
	kept := t.ents[:0]
	for i := range t.ents {
		if !drop(&t.ents[i]) {
			kept = append(kept, t.ents[i])
		}
	}
	clear(t.ents[len(kept):]) // no pointer into an old snapshot is kept
	t.ents = kept
	t.fit()
	t.index()
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
