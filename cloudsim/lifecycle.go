package cloudsim

import "time"

// step is one transitional status and how long it lasts.
type step struct {
	status   string
	duration time.Duration
}

// phase is a transitional status and the time it ends.
type phase struct {
	status string
	until  time.Time
}

// lifecycle is the lazily computed status of a resource: a sequence of
// transitional phases, the status it settles in, and an optional status
// forced by a control. Nothing runs in the background; status(now) reads the
// phases against the clock.
type lifecycle struct {
	phases  []phase
	settled string
	// removed is set when the transition ends with the resource gone.
	removed bool
	forced  string
	// pinned tells a status forced by a control, which demo churn never
	// ends, from a churn blip.
	pinned bool
}

// settle puts the lifecycle at rest in status, with no transition.
func settle(status string) lifecycle { return lifecycle{settled: status} }

// begin starts a transition through steps that ends in settled. It is a
// write, so it also ends any forced status.
func (l *lifecycle) begin(now time.Time, settled string, steps ...step) {
	l.forced, l.pinned = "", false
	l.phases = l.phases[:0]
	t := now
	for _, st := range steps {
		t = t.Add(st.duration)
		l.phases = append(l.phases, phase{status: st.status, until: t})
	}
	l.settled = settled
	l.removed = false
}

// remove starts a transition in status that ends with the resource gone.
func (l *lifecycle) remove(now time.Time, status string, d time.Duration) {
	l.begin(now, status, step{status, d})
	l.removed = true
}

// touch records a write that has no transition: it ends a forced status.
func (l *lifecycle) touch() { l.forced, l.pinned = "", false }

// force sets or, with "", clears a status forced by a control.
func (l *lifecycle) force(status string) { l.forced, l.pinned = status, status != "" }

// inTransition reports whether a phase has not ended yet.
func (l *lifecycle) inTransition(now time.Time) bool {
	return len(l.phases) > 0 && now.Before(l.phases[len(l.phases)-1].until)
}

// gone reports whether a removal has completed. A forced status does not
// keep a deleted resource alive.
func (l *lifecycle) gone(now time.Time) bool {
	return l.removed && !l.inTransition(now)
}

// status returns the visible status at now.
func (l *lifecycle) status(now time.Time) string {
	if l.forced != "" {
		return l.forced
	}
	for _, p := range l.phases {
		if now.Before(p.until) {
			return p.status
		}
	}
	return l.settled
}

// compactLive returns the resources of byID in the order of *order, dropping
// from both the ones that are gone (deletion completed) or missing, so that
// lists stay in creation order without ever re-sorting.
func compactLive[T any](order *[]string, byID map[string]*T, gone func(*T) bool) []*T {
	out := make([]*T, 0, len(*order))
	kept := (*order)[:0]
	for _, id := range *order {
		r := byID[id]
		if r != nil && gone(r) {
			delete(byID, id)
			r = nil
		}
		if r == nil {
			continue
		}
		kept = append(kept, id)
		out = append(out, r)
	}
	clear((*order)[len(kept):])
	*order = kept
	return out
}
