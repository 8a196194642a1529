package poller

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// budgetShare leaves the rest of RateLimit x Interval to transition
// follow-ups, admin refreshes and retries.
const budgetShare = 0.9

type child struct {
	list childLister
	id   string // the parent
	// transitional is set when the parent or a child is in a transitional
	// state: such a list goes first once per TransitionInterval.
	transitional bool
	last         time.Time // last asked for; zero if never
	until        time.Time // deferred until, as the API asked
}

func childKey(part, id string) string { return part + "/" + id }

func (c child) key() string { return childKey(c.list.part(), c.id) }

func (c child) attrs() []any { return c.list.attrs(c.id) }

func (c child) op() string { return c.list.listOp() }

type plan struct {
	todo     []child // asked for this cycle, in order
	deferred []child // not asked for: the API asked to wait
	// budget is how many children a cycle may ask for, -1 for all.
	lists, children, budget int
	// cycles: how long refreshing every child takes.
	cycles int
	period time.Duration
}

// childBudget returns -1 for no limit.
func (p *Poller) childBudget(lists int) int {
	r := p.opts.RateLimit
	if r <= 0 || math.IsInf(r, 1) {
		return -1
	}
	return max(int(r*p.opts.Interval.Seconds()*budgetShare)-lists, 1)
}

// planLocked marks the picked children as asked for, so the next cycle goes
// on where this one stopped. p.mu must be held.
func (p *Poller) planLocked(now time.Time, listFailed map[string]error) plan {
	pl := plan{lists: 2, cycles: 1}
	if p.client.ReadsAuthInfo() {
		pl.lists++
	}
	var all []child
	add := func(l childLister, id string, transitional bool) {
		c := child{list: l, id: id, transitional: transitional, last: p.st.attempted[childKey(l.part(), id)]}
		if until := p.st.notBefore[c.key()]; now.Before(until) {
			c.until = until
			pl.deferred = append(pl.deferred, c)
			return
		}
		all = append(all, c)
	}
	for _, l := range p.st.lists {
		if listFailed[l.part()] == nil {
			l.plan(p.st, func(id string, transitional bool) { add(l, id, transitional) })
		}
	}
	pl.children = len(all) + len(pl.deferred)
	pl.budget = p.childBudget(pl.lists)
	pl.todo = p.pick(now, all, pl.budget)
	if pl.budget >= 0 && pl.children > pl.budget {
		pl.cycles = refreshCycles(all, pl.children, pl.budget)
	}
	pl.period = time.Duration(pl.cycles) * p.opts.Interval
	for _, c := range pl.todo {
		p.st.attempted[c.key()] = now
	}
	return pl
}

// pick chooses budget children (all for a budget of -1). A transitional
// list not asked for within a TransitionInterval goes first, but such lists
// take at most budget-1 calls while any other list waits: the rest go to
// the least recently asked for, the round-robin, which therefore moves on
// every cycle however long a transition lasts (the demo's CONFIGURING
// service used to take the only free call of every cycle).
func (p *Poller) pick(now time.Time, all []child, budget int) []child {
	if budget < 0 || budget >= len(all) {
		return all
	}
	// Half an interval of slack: cycles start late by the time their lists
	// take, which must not push a list due every other cycle to every third.
	cadence := p.opts.TransitionInterval - p.opts.Interval/2
	due := func(c child) bool {
		return c.transitional && (c.last.IsZero() || now.Sub(c.last) >= cadence)
	}
	oldest := func(a, b child) int {
		return cmp.Or(a.last.Compare(b.last), cmp.Compare(a.list.part(), b.list.part()), cmp.Compare(a.id, b.id))
	}
	slices.SortFunc(all, func(a, b child) int {
		if da, db := due(a), due(b); da != db {
			if da {
				return -1
			}
			return 1
		}
		return oldest(a, b)
	})
	first := min(budget-1, slices.IndexFunc(all, func(c child) bool { return !due(c) }))
	if first < 0 { // every list is due: budget < len(all) leaves one for the round-robin
		first = budget - 1
	}
	rest := all[first:]
	slices.SortFunc(rest, oldest)
	return all[:budget]
}

// refreshCycles bounds how many cycles refreshing every child takes when
// the budget does not cover them: the round-robin gets at least the calls
// the transitional lists cannot take, and asks for the least recently asked
// first, so every list is asked for within children / that many cycles.
func refreshCycles(all []child, children, budget int) int {
	transitional := 0
	for _, c := range all {
		if c.transitional {
			transitional++
		}
	}
	roundRobin := budget - min(transitional, budget-1)
	return (children + roundRobin - 1) / roundRobin
}

// warnBudget logs once per change that the children do not fit in one interval.
func (p *Poller) warnBudget(pl plan) {
	switch {
	case pl.cycles == p.warnedCycles:
		return
	case pl.cycles > 1:
		calls := pl.lists + pl.children
		perSecond := float64(calls) / budgetShare / p.opts.Interval.Seconds()
		interval := time.Duration(math.Ceil(float64(calls)/budgetShare/p.opts.RateLimit)) * time.Second
		p.logger.Warn("The API call budget does not cover every replica set and peering list in one interval; they are refreshed round-robin, transitional ones more often",
			"calls_needed", calls,
			"budget_per_interval", int(p.opts.RateLimit*p.opts.Interval.Seconds()),
			"refresh_period", pl.period,
			"fix", fmt.Sprintf("raise --api.rate-limit to %.1f if the provider allows it, or --collect.interval to %s, or shard the project (--total-shards)", perSecond, interval))
	case p.warnedCycles > 1:
		p.logger.Info("The API call budget covers every resource in one interval again", "calls_needed", pl.lists+pl.children)
	}
	p.warnedCycles = pl.cycles
}
