package changes

import (
	"time"
	"unsafe"
)

// key names an object in its project: replica sets and peerings by parent too.
type key struct{ parent, id string }

// kindOf describes one object type to a tracker.
type kindOf[E any, F comparable, K objKey[K]] struct {
	typ    string
	key    func(*E) K
	ptr    func(*E) unsafe.Pointer
	fields func(*E) F
	name   func(*E) string
	// named is where F holds the name: the last that decoded where F
	// compares it, or (a peering's) one that keep carries over, so that
	// the name alone is no change.
	named func(*F) *string
	diff  func(a, b *F, out emit)
	keep  func(b, a F) F
	// created is the after of a created event and the time the API gives.
	created func(*E) (Fields, time.Time)
	// goneOn404: only a get's 404 takes the object out of a list between
	// complete reads; false where a partial list read does too.
	goneOn404 bool
}

// tracker follows one list of a project's snapshots.
type tracker[E any, F comparable, K objKey[K]] struct {
	kindOf[E, F, K]
	table[F, K]
	// baselined: a complete read was recorded (or restored); before it,
	// nothing is created or deleted.
	baselined bool
	last      time.Time // the last complete read
	gen, list uint64
	// lastData and lastLen identify the list last compared: a snapshot
	// shares an unchanged list with its predecessor.
	lastData unsafe.Pointer
	lastLen  int
}

func newTracker[E any, F comparable, K objKey[K]](k kindOf[E, F, K]) *tracker[E, F, K] {
	return &tracker[E, F, K]{kindOf: k}
}

// read is one snapshot's list as the tracker sees it.
type read struct {
	// complete is the time of a complete successful read of the whole list
	// that this snapshot is the first to hold; zero otherwise.
	complete time.Time
	// healthy: the part's last read succeeded, so an object leaving the list
	// was not dropped as stale.
	healthy bool
	at      time.Time // the snapshot's last successful call
}

func (t *tracker[E, F, K]) observe(d *differ, list []E, r read) {
	var data unsafe.Pointer
	if len(list) > 0 {
		data = unsafe.Pointer(&list[0])
	}
	fresh := !r.complete.IsZero() && r.complete.After(t.last)
	if data != t.lastData || len(list) != t.lastLen {
		t.lastData, t.lastLen = data, len(list)
		t.compare(d, list, r.healthy && !fresh, r.at)
	}
	if fresh {
		t.completeRead(d, list, r.complete)
	}
}

// compare finds the field changes of the objects known on both sides;
// between complete reads of a healthy part, what left the list is marked gone.
func (t *tracker[E, F, K]) compare(d *differ, list []E, between bool, at time.Time) {
	t.gen++
	mark := t.goneOn404 && between
	if mark {
		clear(t.seen)
	}
	present := 0
	for i := range list {
		e := &list[i]
		n := t.find(t.key(e))
		if n < 0 {
			continue
		}
		present++
		if mark {
			t.seen[n/64] |= 1 << (n % 64)
		}
		en := &t.ents[n]
		// A nil pointer (a VPC, a value) is compared field by field.
		if p := t.ptr(e); p == nil || p != en.ptr {
			en.ptr = p
			t.update(d, e, en, at)
		}
	}
	if !mark || present == len(t.ents) {
		return
	}
	for n := range t.ents {
		if en := &t.ents[n]; t.seen[n/64]&(1<<(n%64)) == 0 && en.listed == uint32(t.list) {
			en.flags |= gone
		}
	}
}

func (t *tracker[E, F, K]) update(d *differ, e *E, en *entry[F, K], at time.Time) {
	nf := t.keep(t.fields(e), en.f)
	if nf == en.f {
		t.setName(en, t.name(e))
		return
	}
	parent, id := en.k.ids()
	t.diff(&en.f, &nf, func(c change) {
		d.add(Event{ObjectType: t.typ, ObjectID: id, ParentID: parent, ObjectName: t.name(e), WindowStart: timePtr(timeOf(en.read)),
			Kind: c.kind, Before: c.before, After: c.after})
	})
	en.f = nf
	t.setName(en, t.name(e))
	if a := nanos(at); a > en.read {
		en.read = a
	}
}

// setName records the name the object was last read with: the one f holds
// unless it did not decode (""), when f keeps the last that did.
func (t *tracker[E, F, K]) setName(en *entry[F, K], name string) {
	switch p := t.named(&en.f); name {
	case *p:
		en.flags &^= blank
	case "":
		en.flags |= blank
	default: // a peering's name, kept out of its comparison
		*p = name
		en.flags &^= blank
	}
}

// nameOf is the name the object was last read with.
func (t *tracker[E, F, K]) nameOf(en *entry[F, K]) string {
	if en.flags&blank != 0 {
		return ""
	}
	return *t.named(&en.f)
}

// completeRead records a complete read at time at: the objects it lacks twice
// (or once after a 404) are deleted, those it adds created.
func (t *tracker[E, F, K]) completeRead(d *differ, list []E, at time.Time) {
	t.list++
	gen, read := uint32(t.list), nanos(at)
	t.reserve(len(list)) // enough unless objects not listed are kept
	added := false
	for i := range list {
		e := &list[i]
		k := t.key(e)
		n := t.find(k)
		if n < 0 {
			n = t.add(entry[F, K]{ptr: t.ptr(e), k: k, f: t.fields(e)})
			added = true
			t.setName(&t.ents[n], t.name(e))
			if t.baselined {
				after, effective := t.created(e)
				parent, id := k.ids()
				d.add(Event{ObjectType: t.typ, ObjectID: id, ParentID: parent, ObjectName: t.name(e), WindowStart: timePtr(t.last),
					EffectiveTime: timePtr(effective), Kind: KindCreated, After: after})
			}
		}
		en := &t.ents[n]
		en.read, en.listed, en.missed, en.flags = read, gen, 0, en.flags&^gone
	}
	if added {
		t.fit()
	}
	if len(t.ents) > len(list) {
		t.deleteMissed(d, gen)
	}
	t.baselined, t.last = true, at
}

// deleteMissed deletes the objects that complete read gen lacked twice in
// a row, or once after a 404.
func (t *tracker[E, F, K]) deleteMissed(d *differ, gen uint32) {
	deleted := false
	for n := range t.ents {
		en := &t.ents[n]
		if en.listed == gen {
			continue
		}
		en.missed++
		if en.missed >= 2 || en.flags&gone != 0 {
			parent, id := en.k.ids()
			name := t.nameOf(en)
			d.add(Event{ObjectType: t.typ, ObjectID: id, ParentID: parent, ObjectName: name, WindowStart: timePtr(timeOf(en.read)),
				Kind: KindDeleted, Before: Fields{"name": name}})
			en.flags, deleted = en.flags|dropped, true
		}
	}
	if deleted {
		t.remove(func(en *entry[F, K]) bool { return en.flags&dropped != 0 })
	}
}
