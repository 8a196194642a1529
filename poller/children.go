package poller

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// childLister is a per-parent list without its types. Its methods need the state's lock.
type childLister interface {
	part() string
	parentPart() string
	listOp() string
	attrs(parentID string) []any
	plan(s *state, add func(parentID string, transitional bool))
	fetch(ctx context.Context, p *Poller, parentID string) (bool, error)
	fetchOne(ctx context.Context, p *Poller, parentID, id string) (bool, error)
	followUps(ctx context.Context, p *Poller) []followUp
	failedAll(now time.Time)
	removeParent(s *state, parentID string)
	prune(s *state, maxStaleness time.Duration)
	fill(s *state, snap, prev *fleet.Snapshot, all bool)
}

type followUp struct {
	op, key string
	fetch   func() (bool, error)
	attrs   []any
}

// childList is one per-parent list; T is the API's type, E the snapshot's.
type childList[T, E any] struct {
	name, parent, op string
	// Log keys of the ids, and what names a parent's list in a log line.
	parentAttr, childAttr, what string

	id, status   func(T) string
	dropped      func(T) []apiclient.FieldError
	inTransition func(T) bool
	list         func(ctx context.Context, c Client, parentID string) ([]T, error)
	// get, when set, follows a child in transition without listing its parent again.
	get   func(ctx context.Context, c Client, parentID, id string) (*T, error)
	getOp string
	// parentInTransition, when set, puts a parent's list first too.
	parents            func(s *state) []string
	parentInTransition func(s *state, parentID string) bool
	follow             func(ctx context.Context, l *childList[T, E], p *Poller, parentID string, list []T) []followUp
	observe            func(s *state, parentID string, v T)
	field              func(*fleet.Snapshot) *[]E
	elem               func(parentID string, c *T, since time.Time) E

	byParent map[string]observed[[]T]
	dirty    bool
}

func (l *childList[T, E]) part() string       { return l.name }
func (l *childList[T, E]) parentPart() string { return l.parent }
func (l *childList[T, E]) listOp() string     { return l.op }

func (l *childList[T, E]) attrs(parentID string) []any { return []any{l.parentAttr, parentID} }

func (l *childList[T, E]) plan(s *state, add func(string, bool)) {
	for _, id := range l.parents(s) {
		transitional := l.parentInTransition != nil && l.parentInTransition(s, id) ||
			slices.ContainsFunc(l.byParent[id].v, l.inTransition)
		add(id, transitional)
	}
}

func (l *childList[T, E]) fetch(ctx context.Context, p *Poller, parentID string) (bool, error) {
	s := p.st
	return fetch(p, func() ([]T, error) { return l.list(ctx, p.client, parentID) },
		func(list []T) bool { return l.set(s, parentID, list, p.opts.Now()) },
		func() bool {
			_, had := l.byParent[parentID]
			l.removeParent(s, parentID)
			return had
		},
		func() { failed(l.byParent, parentID, p.opts.Now()) })
}

func (l *childList[T, E]) followUps(ctx context.Context, p *Poller) []followUp {
	var out []followUp
	for _, id := range sortedKeys(l.byParent) {
		list := l.byParent[id].v
		if !slices.ContainsFunc(list, l.inTransition) {
			continue
		}
		switch {
		case l.follow != nil:
			out = append(out, l.follow(ctx, l, p, id, list)...)
		case l.get != nil:
			for _, v := range list {
				if l.inTransition(v) {
					out = append(out, l.getAgain(ctx, p, id, l.id(v)))
				}
			}
		default:
			out = append(out, l.listAgain(ctx, p, id))
		}
	}
	return out
}

func (l *childList[T, E]) getAgain(ctx context.Context, p *Poller, parentID, id string) followUp {
	return followUp{op: l.getOp, key: l.getOp + "/" + parentID + "/" + id, attrs: []any{l.parentAttr, parentID, l.childAttr, id},
		fetch: func() (bool, error) { return l.fetchOne(ctx, p, parentID, id) }}
}

func (l *childList[T, E]) fetchOne(ctx context.Context, p *Poller, parentID, id string) (bool, error) {
	return fetch(p, func() (*T, error) { return l.get(ctx, p.client, parentID, id) },
		func(v *T) bool { return l.put(p.st, parentID, *v, p.opts.Now()) },
		func() bool { return l.removeOne(p.st, parentID, id) },
		func() { failed(l.byParent, parentID, p.opts.Now()) })
}

func (l *childList[T, E]) listAgain(ctx context.Context, p *Poller, parentID string) followUp {
	return followUp{op: l.op, key: childKey(l.name, parentID), attrs: l.attrs(parentID),
		fetch: func() (bool, error) { return l.fetch(ctx, p, parentID) }}
}

func (l *childList[T, E]) failedAll(now time.Time) { failedAll(l.byParent, now) }

func (l *childList[T, E]) statusKey(parentID, id string) string {
	return statusKey(strings.TrimSuffix(l.childAttr, "_id"), parentID, id)
}

func (l *childList[T, E]) observeChild(s *state, parentID string, v T, now time.Time) {
	key := l.statusKey(parentID, l.id(v))
	attrs := []any{l.parentAttr, parentID, l.childAttr, l.id(v)}
	s.observeStatus(key, l.status(v), now, attrs...)
	s.observeDropped(key, l.dropped(v), attrs...)
	if l.observe != nil {
		l.observe(s, parentID, v)
	}
}

func (l *childList[T, E]) set(s *state, parentID string, list []T, now time.Time) bool {
	if !s.owns(parentID) {
		return false
	}
	list = unique(s.logger, list, l.id, l.what+parentID)
	old := l.byParent[parentID]
	seen := make(map[string]bool, len(list))
	for _, v := range list {
		seen[l.id(v)] = true
		l.observeChild(s, parentID, v, now)
	}
	for _, v := range old.v {
		if !seen[l.id(v)] {
			s.forgetStatus(l.statusKey(parentID, l.id(v)))
		}
	}
	changed := !deepEqual(old.v, list)
	if changed {
		l.dirty = true
	} else {
		list = old.v
	}
	l.byParent[parentID] = observed[[]T]{v: list, at: now}
	return changed
}

// put keeps the list's own read time: one fresh child does not make its
// siblings fresh.
func (l *childList[T, E]) put(s *state, parentID string, v T, now time.Time) bool {
	if !s.owns(parentID) {
		return false
	}
	group, ok := l.byParent[parentID]
	if !ok {
		group.at = now
	}
	list := slices.Clone(group.v)
	switch i := slices.IndexFunc(list, func(q T) bool { return l.id(q) == l.id(v) }); {
	case i < 0:
		list = append(list, v)
	case deepEqual(list[i], v):
		return false
	default:
		list[i] = v
	}
	l.observeChild(s, parentID, v, now)
	l.byParent[parentID] = observed[[]T]{v: list, at: group.at}
	l.dirty = true
	return true
}

func (l *childList[T, E]) removeOne(s *state, parentID, id string) bool {
	group, ok := l.byParent[parentID]
	if !ok {
		return false
	}
	list := slices.DeleteFunc(slices.Clone(group.v), func(q T) bool { return l.id(q) == id })
	if len(list) == len(group.v) {
		return false
	}
	s.forgetStatus(l.statusKey(parentID, id))
	l.byParent[parentID] = observed[[]T]{v: list, at: group.at}
	l.dirty = true
	return true
}

func (l *childList[T, E]) removeParent(s *state, parentID string) {
	for _, v := range l.byParent[parentID].v {
		s.forgetStatus(l.statusKey(parentID, l.id(v)))
	}
	delete(l.byParent, parentID)
	l.dirty = true
	delete(s.attempted, childKey(l.name, parentID))
}

func (l *childList[T, E]) prune(s *state, maxStaleness time.Duration) {
	for id, o := range l.byParent {
		if o.stale(maxStaleness) {
			s.logger.Warn("Dropping stale data", l.name+"_of", id, "last_read", o.at)
			l.removeParent(s, id)
		}
	}
}

// fill reuses prev's field when nothing changed since.
func (l *childList[T, E]) fill(s *state, snap, prev *fleet.Snapshot, all bool) {
	if !all && !l.dirty {
		*l.field(snap) = *l.field(prev)
		return
	}
	l.dirty = false
	*l.field(snap) = children(l.byParent, l.id, func(parentID string, c *T) E {
		return l.elem(parentID, c, s.statuses[l.statusKey(parentID, l.id(*c))].since)
	})
}

// children points into the kept lists, never modified, rather than copying them.
func children[T, E any](m map[string]observed[[]T], id func(T) string, elem func(parent string, child *T) E) []E {
	var out []E
	if n := childCount(m); n > 0 {
		out = make([]E, 0, n)
	}
	var order []*T
	for _, parent := range sortedKeys(m) {
		order = order[:0]
		for i := range m[parent].v {
			order = append(order, &m[parent].v[i])
		}
		slices.SortFunc(order, func(a, b *T) int { return strings.Compare(id(*a), id(*b)) })
		for _, c := range order {
			out = append(out, elem(parent, c))
		}
	}
	return out
}

func childCount[T any](m map[string]observed[[]T]) int {
	n := 0
	for _, o := range m {
		n += len(o.v)
	}
	return n
}
