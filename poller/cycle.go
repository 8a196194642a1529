package poller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// partRun tracks one part of a cycle. Its calls may run concurrently.
type partRun struct {
	name     string
	mu       sync.Mutex
	start    time.Time
	end      time.Time
	calls    int
	failures int
	// deferred counts calls not made as the API asked; logged then.
	deferred int
	firstErr error
	attrs    []any
}

func (r *partRun) done(end time.Time, err error, attrs ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if end.After(r.end) {
		r.end = end
	}
	if err != nil {
		r.failures++
		if errors.As(err, new(errDeferred)) {
			r.deferred++
			return
		}
		if r.firstErr == nil {
			r.firstErr = err
			r.attrs = attrs
		}
	}
}

// errDeferred is a call not made because of a Retry-After.
type errDeferred struct{ until time.Time }

func (e errDeferred) Error() string {
	return fmt.Sprintf("deferred until %s as the API asked (Retry-After)", e.until.UTC().Format(time.RFC3339))
}

// Poll runs one full cycle within a deadline of one Interval and returns its
// last snapshot.
func (p *Poller) Poll(ctx context.Context) *fleet.Snapshot {
	p.stateGate.Enter()
	defer p.stateGate.Leave()
	start := p.opts.Now()
	cycleCtx, cancel := context.WithTimeout(ctx, p.opts.Interval)
	defer cancel()

	listFailed := p.pollLists(cycleCtx)
	period := p.pollChildren(cycleCtx, listFailed)
	snap := p.publishNow()
	// Ready within one interval, whatever the size of the fleet.
	p.readyOnce.Do(func() { close(p.ready) })

	overrun := ctx.Err() == nil && errors.Is(cycleCtx.Err(), context.DeadlineExceeded)
	if overrun && !p.overrunning {
		p.logger.Warn("A poll cycle did not finish within its interval; its remaining calls failed",
			"interval", p.opts.Interval)
	}
	p.overrunning = overrun
	if p.opts.Observer != nil && ctx.Err() == nil {
		p.opts.Observer.ObserveCycle(p.opts.Now().Sub(start), period, overrun)
	}
	return snap
}

func (p *Poller) pollLists(ctx context.Context) map[string]error {
	now := p.opts.Now
	runs := map[string]*partRun{}
	var g errgroup.Group
	g.SetLimit(p.opts.Concurrency)
	list := func(part, op string, do func() error) *error {
		run := &partRun{name: part, start: now()}
		runs[part] = run
		var err error
		g.Go(func() error {
			err = p.call(op, op, do)
			run.done(now(), err)
			return nil
		})
		return &err
	}
	var vpcs []apiclient.VPC
	var auth *apiclient.AuthInfo
	p.mu.Lock()
	read := p.st.readServices()
	p.mu.Unlock()
	servicesErr := list(fleet.PartServices, apiclient.OpListServices, func() error { return p.listServices(ctx, read) })
	vpcsErr := list(fleet.PartVPCs, apiclient.OpListVPCs, func() (err error) {
		vpcs, err = p.client.ListVPCs(ctx)
		return err
	})
	authErr := new(error)
	if p.client.ReadsAuthInfo() {
		authErr = list(fleet.PartAuth, apiclient.OpGetAuthInfo, func() (err error) {
			auth, err = p.client.GetAuthInfo(ctx)
			return err
		})
	}
	_ = g.Wait()

	p.mu.Lock()
	at := now()
	if *servicesErr == nil || *vpcsErr == nil || auth != nil {
		p.st.read = at
	}
	p.noteAccess(*servicesErr)
	if *servicesErr == nil {
		read.complete()
	} else {
		failedAll(p.st.services, at)
	}
	if *vpcsErr == nil {
		p.st.setVPCs(vpcs, at)
	} else {
		failedAll(p.st.vpcs, at)
	}
	if auth != nil {
		p.st.auth = &observed[apiclient.AuthInfo]{v: *auth, at: at}
	} else if *authErr != nil && p.st.auth != nil {
		p.st.auth.failed = at
	}
	for _, name := range []string{fleet.PartServices, fleet.PartVPCs, fleet.PartAuth} {
		if runs[name] != nil {
			p.recordPart(runs[name])
		}
	}
	listFailed := p.st.parentsFailed(map[string]error{fleet.PartServices: *servicesErr, fleet.PartVPCs: *vpcsErr}, at)
	snap := p.snapshotLocked()
	p.mu.Unlock()
	p.publish(snap)
	return listFailed
}

func (p *Poller) pollChildren(ctx context.Context, listFailed map[string]error) time.Duration {
	now := p.opts.Now
	p.mu.Lock()
	plan := p.planLocked(now(), listFailed)
	p.st.budget = fleet.Budget{Needed: plan.lists + plan.children, Planned: plan.lists + len(plan.todo), PerInterval: -1, RefreshPeriod: plan.period}
	if plan.budget >= 0 {
		p.st.budget.PerInterval = int(p.opts.RateLimit * p.opts.Interval.Seconds())
	}
	p.mu.Unlock()
	p.stateCalls.Store(int64(plan.lists + len(plan.todo)))
	p.stateNeeded.Store(int64(plan.lists + plan.children))
	p.warnBudget(plan)

	runs := map[string]*partRun{}
	for _, l := range p.st.lists {
		runs[l.part()] = &partRun{name: l.part(), start: now()}
		if err := listFailed[l.part()]; err != nil {
			runs[l.part()].done(now(), err)
		}
	}
	for _, c := range plan.deferred {
		runs[c.list.part()].done(now(), errDeferred{c.until}, c.attrs()...)
	}

	// Publish in batches: a large fleet appears as it is read, without
	// rendering once per call.
	batch := max(100, len(plan.todo)/8)
	var answered atomic.Int64
	var dirty atomic.Bool
	var g errgroup.Group
	g.SetLimit(p.opts.Concurrency)
	for _, c := range plan.todo {
		g.Go(func() error {
			var changed bool
			var err error
			if ctx.Err() != nil {
				err = ctx.Err() // the cycle's deadline passed: no more calls
			} else {
				changed, err = p.fetchChild(ctx, c)
			}
			runs[c.list.part()].done(now(), err, c.attrs()...)
			if changed {
				dirty.Store(true)
			}
			if answered.Add(1)%int64(batch) == 0 && dirty.Swap(false) {
				p.publishNow()
			}
			return nil
		})
	}
	_ = g.Wait()

	p.mu.Lock()
	for _, l := range p.st.lists {
		p.recordPart(runs[l.part()])
	}
	p.mu.Unlock()
	return plan.period
}

// listServices decodes into the state (see servicesRead). read.complete is
// left to the caller.
func (p *Poller) listServices(ctx context.Context, read *servicesRead) error {
	return p.client.StreamServices(ctx, func() {
		p.mu.Lock()
		read.begin()
		p.mu.Unlock()
	}, func(svc *apiclient.Service) {
		p.mu.Lock()
		read.put(svc, p.opts.Now())
		p.mu.Unlock()
	})
}

func (p *Poller) fetchChild(ctx context.Context, c child) (bool, error) {
	var changed bool
	err := p.call(c.op(), c.key(), func() (err error) {
		changed, err = c.list.fetch(ctx, p, c.id)
		return err
	})
	return changed, err
}

// MinMaxDeferral and MaxDeferralIntervals cap a Retry-After: one asking
// for years would stop a collector until a restart. The cap is 5 minutes
// or 5 poll intervals, whichever is longer, as careful clients do (Envoy
// caps at 300 s).
const (
	MinMaxDeferral       = 5 * time.Minute
	MaxDeferralIntervals = 5
)

func maxDeferral(interval time.Duration) time.Duration {
	return max(MinMaxDeferral, MaxDeferralIntervals*interval)
}

// call fails with errDeferred while a Retry-After holds; it logs a new one once.
func (p *Poller) call(op, key string, do func() error) error {
	p.mu.Lock()
	until := p.st.notBefore[key]
	p.mu.Unlock()
	if p.opts.Now().Before(until) {
		return errDeferred{until}
	}
	err := do()
	var apiErr *apiclient.APIError
	if errors.As(err, &apiErr) && apiErr.RetryAfter > 0 {
		wait := apiErr.RetryAfter
		attrs := []any{"call", key, "retry_after", wait}
		if limit := maxDeferral(p.opts.Interval); wait > limit {
			wait = limit
			attrs = append(attrs, "max_deferral", limit)
			if p.opts.Observer != nil {
				p.opts.Observer.ObserveRetryAfterCapped(op)
			}
		}
		until := p.opts.Now().Add(wait)
		p.mu.Lock()
		p.st.notBefore[key] = until
		p.mu.Unlock()
		p.logger.Warn("The API asked to wait before this call is made again (Retry-After); deferring it",
			append(attrs, "until", until.UTC().Format(time.RFC3339))...)
	}
	return err
}

// ClearDeferrals forgets every Retry-After: a reload asks to try again now.
func (p *Poller) ClearDeferrals() {
	p.mu.Lock()
	n := 0
	for key, until := range p.st.notBefore {
		if p.opts.Now().Before(until) {
			n++
		}
		delete(p.st.notBefore, key)
	}
	p.mu.Unlock()
	if n > 0 {
		p.logger.Info("Retry-After deferrals cleared by a reload", "calls", n)
	}
}

// recordPart logs one line for all of a part's failures. p.mu must be held.
func (p *Poller) recordPart(run *partRun) {
	prev := p.st.parts[run.name]
	h := fleet.PartHealth{
		Name:        run.name,
		Success:     run.failures == 0,
		Duration:    run.end.Sub(run.start),
		LastSuccess: prev.LastSuccess,
	}
	if h.Duration < 0 {
		h.Duration = 0
	}
	switch {
	case h.Success:
		h.LastSuccess = run.end
		if h.LastSuccess.IsZero() {
			h.LastSuccess = run.start // a part with nothing to call
		}
	case run.firstErr != nil:
		h.LastError = cutError(run.firstErr.Error())
	default:
		h.LastError = "calls deferred as the API asked (Retry-After)"
	}
	if !h.Success && run.failures > run.deferred && !p.sameRootCause(run.firstErr) {
		p.logger.Warn("Collector failed", append([]any{
			"collector", run.name, "failed_calls", run.failures, "deferred_calls", run.deferred, "calls", run.calls, "err", run.firstErr,
		}, run.attrs...)...)
	}
	p.st.parts[run.name] = h
}

// maxErrorText: the status page shows LastError whole.
const maxErrorText = 300

func cutError(s string) string {
	if len(s) <= maxErrorText {
		return s
	}
	return strings.ToValidUTF8(s[:maxErrorText], "") + "…"
}

// fetch records under p.mu; gone handles a 404 (not a failure: the resource
// went away since listed). apply and gone report a change.
func fetch[T any](p *Poller, get func() (T, error), apply func(T) bool, gone func() bool, failed func()) (bool, error) {
	v, err := get()
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case apiclient.IsNotFound(err):
		p.st.read = p.opts.Now()
		return gone(), nil
	case err != nil:
		failed()
		return false, err
	}
	p.st.read = p.opts.Now()
	return apply(v), nil
}
