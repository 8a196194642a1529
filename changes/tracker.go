package changes

import (
	"time"
	"unsafe"
)

// key names an object in its project: replica sets and peerings by parent too.
type key struct{ parent, id string }

// entry is what the differ knows of one object.
type entry[F comparable] struct {
	// ptr is the value last compared (snapshots share an unchanged value),
	// nil after a restart until it is read again.
	ptr  unsafe.Pointer
	f    F
	name string
	// read is the last complete read that held the object: a change
	// happened after it.
	read time.Time
	// listed and seen are the generations of the last complete read and of
	// the last changed list that held it.
	listed, seen uint64
	// missed counts complete reads in a row that lacked it; gone is set when
	// it left a list between complete reads (a 404 on its get).
	missed int
	gone   bool
}

// kindOf describes one object type to a tracker.
type kindOf[E any, F comparable] struct {
	typ    string
	key    func(*E) key
	ptr    func(*E) unsafe.Pointer
	fields func(*E) F
	name   func(*E) string
	diff   func(a, b *F, out emit)
	keep   func(b, a F) F
	// created is the after of a created event and the time the API gives.
	created func(*E) (Fields, time.Time)
	// goneOn404: only a get's 404 takes the object out of a list between
	// complete reads; false where a partial list read does too.
	goneOn404 bool
}

// tracker follows one list of a project's snapshots.
type tracker[E any, F comparable] struct {
	kindOf[E, F]
	entries map[key]*entry[F]
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

func newTracker[E any, F comparable](k kindOf[E, F]) *tracker[E, F] {
	return &tracker[E, F]{kindOf: k, entries: map[key]*entry[F]{}}
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

func (t *tracker[E, F]) observe(d *differ, list []E, r read) {
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
func (t *tracker[E, F]) compare(d *differ, list []E, between bool, at time.Time) {
	t.gen++
	present := 0
	for i := range list {
		e := &list[i]
		en := t.entries[t.key(e)]
		if en == nil {
			continue
		}
		present++
		en.seen = t.gen
		// A nil pointer (a VPC, a value) is compared field by field.
		if p := t.ptr(e); p == nil || p != en.ptr {
			en.ptr = p
			t.update(d, e, en, at)
		}
	}
	if !t.goneOn404 || !between || present == len(t.entries) {
		return
	}
	for _, en := range t.entries {
		if en.seen != t.gen && en.listed == t.list {
			en.gone = true
		}
	}
}

func (t *tracker[E, F]) update(d *differ, e *E, en *entry[F], at time.Time) {
	nf := t.keep(t.fields(e), en.f)
	if nf == en.f {
		en.name = t.name(e)
		return
	}
	k := t.key(e)
	t.diff(&en.f, &nf, func(c change) {
		d.add(Event{ObjectType: t.typ, ObjectID: k.id, ParentID: k.parent, ObjectName: t.name(e), WindowStart: timePtr(en.read),
			Kind: c.kind, Before: c.before, After: c.after})
	})
	en.f, en.name = nf, t.name(e)
	if at.After(en.read) {
		en.read = at
	}
}

// completeRead records a complete read at time at: the objects it lacks twice
// (or once after a 404) are deleted, those it adds created.
func (t *tracker[E, F]) completeRead(d *differ, list []E, at time.Time) {
	t.list++
	for i := range list {
		e := &list[i]
		k := t.key(e)
		en := t.entries[k]
		if en == nil {
			en = &entry[F]{ptr: t.ptr(e), f: t.fields(e), name: t.name(e), seen: t.gen}
			t.entries[k] = en
			if t.baselined {
				after, effective := t.created(e)
				d.add(Event{ObjectType: t.typ, ObjectID: k.id, ParentID: k.parent, ObjectName: en.name, WindowStart: timePtr(t.last),
					EffectiveTime: timePtr(effective), Kind: KindCreated, After: after})
			}
		}
		en.read, en.listed, en.missed, en.gone = at, t.list, 0, false
	}
	if len(t.entries) > len(list) {
		for k, en := range t.entries {
			if en.listed == t.list {
				continue
			}
			en.missed++
			if en.missed >= 2 || en.gone {
				d.add(Event{ObjectType: t.typ, ObjectID: k.id, ParentID: k.parent, ObjectName: en.name, WindowStart: timePtr(en.read),
					Kind: KindDeleted, Before: Fields{"name": en.name}})
				delete(t.entries, k)
			}
		}
	}
	t.baselined, t.last = true, at
}
