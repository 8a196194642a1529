package changes

import (
	"sort"
	"time"
)

// ring keeps the latest events, oldest first, within an age and a count.
type ring struct {
	events []Event
	start  int
	maxAge time.Duration
	max    int
}

// add appends e and returns how many events the count bound evicted.
func (r *ring) add(e Event) (evicted int) {
	r.events = append(r.events, e)
	if n := r.len() - r.max; r.max > 0 && n > 0 {
		r.drop(n)
		evicted = n
	}
	return evicted
}

func (r *ring) len() int { return len(r.events) - r.start }

func (r *ring) drop(n int) {
	clear(r.events[r.start : r.start+n]) // let go of before and after
	r.start += n
	if r.start > len(r.events)/2 {
		r.events = append(r.events[:0], r.events[r.start:]...)
		r.start = 0
	}
}

// expire drops the events older than the age bound.
func (r *ring) expire(now time.Time) {
	if r.maxAge <= 0 {
		return
	}
	live := r.events[r.start:]
	n := sort.Search(len(live), func(i int) bool { return now.Sub(live[i].Time) <= r.maxAge })
	if n > 0 {
		r.drop(n)
	}
}

// Query selects events from the feed; zero fields select everything.
type Query struct {
	Since     uint64
	ProjectID string
	ObjectID  string
	Kind      string
	Limit     int
}

func (q Query) match(e *Event) bool {
	return (q.ProjectID == "" || e.ProjectID == q.ProjectID) && (q.ObjectID == "" || e.ObjectID == q.ObjectID) &&
		(q.Kind == "" || e.Kind == q.Kind)
}

// query returns up to q.Limit events after q.Since, oldest first.
func (r *ring) query(q Query) []Event {
	live := r.events[r.start:]
	i := sort.Search(len(live), func(i int) bool { return live[i].Cursor > q.Since })
	var out []Event
	for ; i < len(live) && (q.Limit <= 0 || len(out) < q.Limit); i++ {
		if q.match(&live[i]) {
			out = append(out, live[i])
		}
	}
	return out
}

// latest returns up to n events of a project, newest first.
func (r *ring) latest(projectID string, n int) []Event {
	live := r.events[r.start:]
	var out []Event
	for i := len(live) - 1; i >= 0 && len(out) < n; i-- {
		if live[i].ProjectID == projectID {
			out = append(out, live[i])
		}
	}
	return out
}

// bounds returns the cursors of the oldest and newest events kept, 0 when none.
func (r *ring) bounds() (first, last uint64) {
	if r.len() == 0 {
		return 0, 0
	}
	return r.events[r.start].Cursor, r.events[len(r.events)-1].Cursor
}
