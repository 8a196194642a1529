package poller

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"
)

// budgetShare is the share of RateLimit x Interval that a cycle plans to
// spend; the rest is left to the transition follow-ups between cycles,
// admin refreshes and retries, which draw on the same rate limit.
const budgetShare = 0.9

// child is one per-resource call of a cycle: one parent's list.
type child struct {
	list childLister
	id   string // the parent
	// transitional is set when the parent or a child is in a transitional
	// state: such children go first.
	transitional bool
	last         time.Time // last asked for; zero if never
	until        time.Time // deferred until, as the API asked
}

func childKey(part, id string) string { return part + "/" + id }

func (c child) key() string { return childKey(c.list.part(), c.id) }

func (c child) attrs() []any { return c.list.attrs(c.id) }

func (c child) op() string { return c.list.listOp() }

// plan is what one cycle does with its children.
type plan struct {
	todo     []child // asked for this cycle, in order
	deferred []child // not asked for: the API asked to wait
	// lists is the calls of the cycle before its children; children is
	// how many children there are; budget is how many of them a cycle may
	// ask for, -1 for all.
	lists, children, budget int
	// cycles and period: how long refreshing every child takes.
	cycles int
	period time.Duration
}

// childBudget returns how many per-resource calls a cycle may make after
// its lists calls, -1 for no limit.
func (p *Poller) childBudget(lists int) int {
	r := p.opts.RateLimit
	if r <= 0 || math.IsInf(r, 1) {
		return -1
	}
	return max(int(r*p.opts.Interval.Seconds()*budgetShare)-lists, 1)
}

// planLocked picks the children of this cycle: every child whose parent
// list succeeded and that the API did not ask to defer, transitional ones
// first, then those asked for least recently (never first), as many as the
// budget allows; they are then marked as asked for, which makes the next
// cycle go on where this one stopped. p.mu must be held.
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
	slices.SortFunc(all, func(a, b child) int {
		if a.transitional != b.transitional {
			if a.transitional {
				return -1
			}
			return 1
		}
		return cmp.Or(a.last.Compare(b.last), cmp.Compare(a.list.part(), b.list.part()), cmp.Compare(a.id, b.id))
	})
	pl.children = len(all) + len(pl.deferred)
	pl.budget = p.childBudget(pl.lists)
	pl.todo = all
	if pl.budget >= 0 {
		pl.todo = all[:min(pl.budget, len(all))]
		pl.cycles = max(1, (pl.children+pl.budget-1)/pl.budget)
	}
	pl.period = time.Duration(pl.cycles) * p.opts.Interval
	for _, c := range pl.todo {
		p.st.attempted[c.key()] = now
	}
	return pl
}

// warnBudget logs, once per change, that the children do not fit in one
// interval: the numbers, and what to change.
func (p *Poller) warnBudget(pl plan) {
	switch {
	case pl.cycles == p.warnedCycles:
		return
	case pl.cycles > 1:
		calls := pl.lists + pl.children
		perSecond := float64(calls) / budgetShare / p.opts.Interval.Seconds()
		interval := time.Duration(math.Ceil(float64(calls)/budgetShare/p.opts.RateLimit)) * time.Second
		p.logger.Warn("The API call budget does not cover every replica set and peering list in one interval; they are refreshed round-robin, transitional ones first",
			"calls_needed", calls,
			"budget_per_interval", int(p.opts.RateLimit*p.opts.Interval.Seconds()),
			"refresh_period", pl.period,
			"fix", fmt.Sprintf("raise --api.rate-limit to %.1f if the provider allows it, or --collect.interval to %s, or shard the project (--total-shards)", perSecond, interval))
	case p.warnedCycles > 1:
		p.logger.Info("The API call budget covers every resource in one interval again", "calls_needed", pl.lists+pl.children)
	}
	p.warnedCycles = pl.cycles
}
