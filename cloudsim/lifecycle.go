package cloudsim

import "time"

type step struct {
	status   string
	duration time.Duration
}

type phase struct {
	status string
	until  time.Time
}

// lifecycle is computed lazily: status(now) reads the phases against the
// clock, and nothing runs in the background.
type lifecycle struct {
	phases  []phase
	settled string
	removed bool
	forced  string
	// pinned tells a forced status, which churn never ends, from a churn blip.
	pinned bool
}

func settle(status string) lifecycle { return lifecycle{settled: status} }

// begin is a write, so it also ends any forced status.
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

func (l *lifecycle) remove(now time.Time, status string, d time.Duration) {
	l.begin(now, status, step{status, d})
	l.removed = true
}

// A write without a transition still ends a forced status.
func (l *lifecycle) touch() { l.forced, l.pinned = "", false }

func (l *lifecycle) force(status string) { l.forced, l.pinned = status, status != "" }

func (l *lifecycle) inTransition(now time.Time) bool {
	return len(l.phases) > 0 && now.Before(l.phases[len(l.phases)-1].until)
}

// A forced status does not keep a deleted resource alive.
func (l *lifecycle) gone(now time.Time) bool {
	return l.removed && !l.inTransition(now)
}

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

// compactLive drops gone resources from both, keeping creation order.
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
