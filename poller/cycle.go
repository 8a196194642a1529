package poller

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// partRun tracks one part of a cycle: its calls, their failures and its
// span. Calls of one part may run concurrently.
type partRun struct {
	name     string
	mu       sync.Mutex
	start    time.Time
	end      time.Time
	calls    int
	failures int
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
		if r.firstErr == nil {
			r.firstErr = err
			r.attrs = attrs
		}
	}
}

// Poll runs one full cycle and publishes its snapshot: list services, VPCs
// and the auth info, then the replica sets of every service and the peerings
// of every VPC. That is 2 + services + VPCs calls, plus one for the auth
// info: the least the API allows.
func (p *Poller) Poll(ctx context.Context) *fleet.Snapshot {
	now := p.opts.Now
	runs := map[string]*partRun{}
	for _, name := range fleet.Parts {
		runs[name] = &partRun{name: name, start: now()}
	}

	var services []apiclient.Service
	var vpcs []apiclient.VPC
	var auth *apiclient.AuthInfo
	var servicesErr, vpcsErr error

	var g errgroup.Group
	g.SetLimit(p.opts.Concurrency)
	g.Go(func() error {
		services, servicesErr = p.client.ListServices(ctx)
		runs[fleet.PartServices].done(now(), servicesErr)
		return nil
	})
	g.Go(func() error {
		vpcs, vpcsErr = p.client.ListVPCs(ctx)
		runs[fleet.PartVPCs].done(now(), vpcsErr)
		return nil
	})
	if p.client.HasAPIKey() {
		g.Go(func() error {
			var err error
			auth, err = p.client.GetAuthInfo(ctx)
			runs[fleet.PartAuth].done(now(), err)
			return nil
		})
	}
	_ = g.Wait()

	p.mu.Lock()
	if servicesErr == nil {
		p.st.setServices(services, now())
	}
	if vpcsErr == nil {
		p.st.setVPCs(vpcs, now())
	}
	if auth != nil {
		p.st.auth = &observed[apiclient.AuthInfo]{v: *auth, at: now()}
	}
	serviceIDs := sortedKeys(p.st.services)
	vpcIDs := sortedKeys(p.st.vpcs)
	p.mu.Unlock()

	// When a parent list failed, its children are not listed: with the API
	// failing, one call per service would only add load to an outage. They
	// keep their last good data until it is stale.
	rsRun, peeringRun := runs[fleet.PartReplicaSets], runs[fleet.PartPeerings]
	rsRun.start, peeringRun.start = now(), now()
	if servicesErr != nil {
		rsRun.done(now(), servicesErr)
		serviceIDs = nil
	}
	if vpcsErr != nil {
		peeringRun.done(now(), vpcsErr)
		vpcIDs = nil
	}
	for _, id := range serviceIDs {
		g.Go(func() error {
			_, err := p.fetchReplicaSets(ctx, id)
			rsRun.done(now(), err, "service_id", id)
			return nil
		})
	}
	for _, id := range vpcIDs {
		g.Go(func() error {
			_, err := p.fetchPeerings(ctx, id)
			peeringRun.done(now(), err, "vpc_id", id)
			return nil
		})
	}
	_ = g.Wait()

	p.mu.Lock()
	defer p.mu.Unlock()
	for _, name := range fleet.Parts {
		run := runs[name]
		if name == fleet.PartAuth && !p.client.HasAPIKey() {
			continue
		}
		p.recordPart(run)
	}
	snap := p.publishLocked()
	p.readyOnce.Do(func() { close(p.ready) })
	return snap
}

// recordPart turns a finished partRun into the part's health and logs one
// line for all of its failures. p.mu must be held.
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
	if h.Success {
		h.LastSuccess = run.end
	} else {
		p.logger.Warn("Collector failed", append([]any{
			"collector", run.name, "failed_calls", run.failures, "calls", run.calls, "err", run.firstErr,
		}, run.attrs...)...)
	}
	p.st.parts[run.name] = h
}

// fetch reads one resource (or one list) from the API and records it under
// p.mu: apply stores a value, gone handles a 404 (the resource went away
// since it was listed: not a failure). Both report whether the state changed.
func fetch[T any](p *Poller, get func() (T, error), apply func(T) bool, gone func() bool) (bool, error) {
	v, err := get()
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case apiclient.IsNotFound(err):
		return gone(), nil
	case err != nil:
		return false, err
	}
	return apply(v), nil
}

// fetchReplicaSets lists the replica sets of one service into the state.
func (p *Poller) fetchReplicaSets(ctx context.Context, serviceID string) (bool, error) {
	return fetch(p, func() ([]apiclient.ReplicaSet, error) { return p.client.ListReplicaSets(ctx, serviceID) },
		func(list []apiclient.ReplicaSet) bool { return p.st.setReplicaSets(serviceID, list, p.opts.Now()) },
		func() bool {
			_, had := p.st.replicaSets[serviceID]
			p.st.removeReplicaSets(serviceID)
			return had
		})
}

// fetchPeerings lists the peerings of one VPC into the state.
func (p *Poller) fetchPeerings(ctx context.Context, vpcID string) (bool, error) {
	return fetch(p, func() ([]apiclient.Peering, error) { return p.client.ListPeerings(ctx, vpcID) },
		func(list []apiclient.Peering) bool { return p.st.setPeerings(vpcID, list, p.opts.Now()) },
		func() bool {
			_, had := p.st.peerings[vpcID]
			p.st.removePeerings(vpcID)
			return had
		})
}
