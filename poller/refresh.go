package poller

import (
	"context"
	"slices"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

var (
	transitionalServiceStatuses = []string{
		apiclient.ServiceQueued, apiclient.ServiceConfiguring, apiclient.ServiceDeleting,
		apiclient.ServicePausing, apiclient.ServiceResuming, apiclient.ServiceUpgrading,
		apiclient.ServiceOptimizing,
	}
	transitionalReplicaSetStatuses = []string{
		apiclient.ReplicaSetCreating, apiclient.ReplicaSetResizing, apiclient.ReplicaSetDeleting,
	}
)

// PollTransitions refreshes every resource in a transitional state.
func (p *Poller) PollTransitions(ctx context.Context) {
	p.stateGate.Enter()
	defer p.stateGate.Leave()
	var calls []followUp
	p.mu.Lock()
	for _, id := range sortedKeys(p.st.services) {
		if slices.Contains(transitionalServiceStatuses, p.st.services[id].v.Status) {
			calls = append(calls, p.followService(ctx, id))
		}
	}
	for _, l := range p.st.lists {
		calls = append(calls, l.followUps(ctx, p)...)
	}
	p.mu.Unlock()
	if len(calls) == 0 {
		return
	}

	var changed atomic.Bool
	seen := map[string]bool{}
	var g errgroup.Group
	g.SetLimit(p.opts.Concurrency)
	for _, f := range calls {
		if seen[f.key] {
			continue // getService carries inline replica sets: one call for both
		}
		seen[f.key] = true
		g.Go(func() error {
			var c bool
			err := p.call(f.op, f.key, func() (err error) {
				c, err = f.fetch()
				return err
			})
			if err != nil {
				p.logger.Debug("Following a transition failed", append(f.attrs, "call", f.op, "err", err)...)
			}
			if c {
				changed.Store(true)
			}
			return nil
		})
	}
	_ = g.Wait()
	if changed.Load() {
		p.publishNow()
	}
}

func (p *Poller) followService(ctx context.Context, serviceID string) followUp {
	return followUp{op: apiclient.OpGetService, key: apiclient.OpGetService + "/" + serviceID,
		attrs: []any{"service_id", serviceID},
		fetch: func() (bool, error) { return p.fetchService(ctx, serviceID) }}
}

// RefreshService reads one service at once and publishes the result.
func (p *Poller) RefreshService(ctx context.Context, serviceID string) error {
	return p.refresh(func() (bool, error) { return p.fetchService(ctx, serviceID) })
}

// RefreshReplicaSets reads the service instead when it carries them inline.
func (p *Poller) RefreshReplicaSets(ctx context.Context, serviceID string) error {
	p.mu.Lock()
	inline := p.st.inlineReplicaSets[serviceID]
	p.mu.Unlock()
	if inline {
		return p.refresh(func() (bool, error) { return p.fetchService(ctx, serviceID) })
	}
	return p.refresh(func() (bool, error) { return p.st.replicaSets().fetch(ctx, p, serviceID) })
}

// RefreshVPC reads one VPC at once and publishes the result.
func (p *Poller) RefreshVPC(ctx context.Context, vpcID string) error {
	return p.refresh(func() (bool, error) { return p.fetchVPC(ctx, vpcID) })
}

// RefreshPeering reads one peering at once and publishes the result.
func (p *Poller) RefreshPeering(ctx context.Context, vpcID, peeringID string) error {
	return p.refresh(func() (bool, error) {
		return p.st.childList(fleet.PartPeerings).fetchOne(ctx, p, vpcID, peeringID)
	})
}

func (p *Poller) refresh(fetch func() (bool, error)) error {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return ErrClosed
	}
	changed, err := fetch()
	if changed {
		p.publishNow()
	}
	return err
}

func (p *Poller) fetchService(ctx context.Context, serviceID string) (bool, error) {
	return fetch(p, func() (*apiclient.Service, error) { return p.client.GetService(ctx, serviceID) },
		func(svc *apiclient.Service) bool { return p.st.putService(svc, p.opts.Now()) },
		func() bool {
			_, had := p.st.services[serviceID]
			p.st.removeService(serviceID)
			return had
		},
		func() { failed(p.st.services, serviceID, p.opts.Now()) })
}

func (p *Poller) fetchVPC(ctx context.Context, vpcID string) (bool, error) {
	return fetch(p, func() (*apiclient.VPC, error) { return p.client.GetVPC(ctx, vpcID) },
		func(vpc *apiclient.VPC) bool { return p.st.putVPC(*vpc, p.opts.Now()) },
		func() bool {
			_, had := p.st.vpcs[vpcID]
			p.st.removeVPC(vpcID)
			return had
		},
		func() { failed(p.st.vpcs, vpcID, p.opts.Now()) })
}
