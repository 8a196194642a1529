package poller

import (
	"context"
	"slices"
	"sync/atomic"

	"golang.org/x/sync/errgroup"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// Transitional states: a resource in one of them is followed every
// TransitionInterval until it settles.
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

type peeringRef struct{ vpcID, peeringID string }

// PollTransitions refreshes every resource that is in a transitional state
// and publishes a snapshot if anything changed: getService for services,
// listReplicaSets of the service for replica sets (they have no get), and
// getPeering for pending peerings.
func (p *Poller) PollTransitions(ctx context.Context) {
	p.stateGate.enter()
	defer p.stateGate.leave()
	var services, rsServices []string
	var peerings []peeringRef
	p.mu.Lock()
	for _, id := range sortedKeys(p.st.services) {
		if slices.Contains(transitionalServiceStatuses, p.st.services[id].v.Status) {
			services = append(services, id)
		}
	}
	for _, id := range sortedKeys(p.st.replicaSets) {
		if slices.ContainsFunc(p.st.replicaSets[id].v, func(rs apiclient.ReplicaSet) bool {
			return slices.Contains(transitionalReplicaSetStatuses, rs.Status)
		}) {
			if !p.st.inlineReplicaSets[id] {
				rsServices = append(rsServices, id)
			} else if !slices.Contains(services, id) {
				// getService carries them: one call for both.
				services = append(services, id)
			}
		}
	}
	for _, vpcID := range sortedKeys(p.st.peerings) {
		for _, peering := range p.st.peerings[vpcID].v {
			if peering.Status == apiclient.PeeringPending {
				peerings = append(peerings, peeringRef{vpcID, peering.ID})
			}
		}
	}
	p.mu.Unlock()
	if len(services)+len(rsServices)+len(peerings) == 0 {
		return
	}

	var changed atomic.Bool
	// key is the call's key for Retry-After deferral (see call): a
	// follow-up is not made before the time the API asked either.
	follow := func(what, key string, fetch func() (bool, error), attrs ...any) func() error {
		return func() error {
			var c bool
			err := p.call(what, key, func() (err error) {
				c, err = fetch()
				return err
			})
			if err != nil {
				p.logger.Debug("Following a transition failed", append(attrs, "call", what, "err", err)...)
			}
			if c {
				changed.Store(true)
			}
			return nil
		}
	}
	var g errgroup.Group
	g.SetLimit(p.opts.Concurrency)
	for _, id := range services {
		g.Go(follow(apiclient.OpGetService, apiclient.OpGetService+"/"+id, func() (bool, error) { return p.fetchService(ctx, id) }, "service_id", id))
	}
	for _, id := range rsServices {
		g.Go(follow(apiclient.OpListReplicaSets, childKey(fleet.PartReplicaSets, id), func() (bool, error) { return p.fetchReplicaSets(ctx, id) }, "service_id", id))
	}
	for _, ref := range peerings {
		g.Go(follow(apiclient.OpGetPeering, apiclient.OpGetPeering+"/"+ref.vpcID+"/"+ref.peeringID, func() (bool, error) { return p.fetchPeering(ctx, ref.vpcID, ref.peeringID) },
			"vpc_id", ref.vpcID, "peering_id", ref.peeringID))
	}
	_ = g.Wait()
	if changed.Load() {
		p.publishNow()
	}
}

// RefreshService reads one service at once (a new one is added, a gone one
// removed) and publishes the result.
func (p *Poller) RefreshService(ctx context.Context, serviceID string) error {
	return p.refresh(func() (bool, error) { return p.fetchService(ctx, serviceID) })
}

// RefreshReplicaSets lists the replica sets of one service at once and
// publishes the result; when the service carries them inline (revision
// 2026), it reads the service instead.
func (p *Poller) RefreshReplicaSets(ctx context.Context, serviceID string) error {
	p.mu.Lock()
	inline := p.st.inlineReplicaSets[serviceID]
	p.mu.Unlock()
	if inline {
		return p.refresh(func() (bool, error) { return p.fetchService(ctx, serviceID) })
	}
	return p.refresh(func() (bool, error) { return p.fetchReplicaSets(ctx, serviceID) })
}

// RefreshVPC reads one VPC at once and publishes the result.
func (p *Poller) RefreshVPC(ctx context.Context, vpcID string) error {
	return p.refresh(func() (bool, error) { return p.fetchVPC(ctx, vpcID) })
}

// RefreshPeering reads one peering at once and publishes the result.
func (p *Poller) RefreshPeering(ctx context.Context, vpcID, peeringID string) error {
	return p.refresh(func() (bool, error) { return p.fetchPeering(ctx, vpcID, peeringID) })
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

// fetchService reads one service into the state; 404 removes it.
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

// fetchVPC reads one VPC into the state; 404 removes it and its peerings.
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

// fetchPeering reads one peering into the state; 404 removes it.
func (p *Poller) fetchPeering(ctx context.Context, vpcID, peeringID string) (bool, error) {
	return fetch(p, func() (*apiclient.Peering, error) { return p.client.GetPeering(ctx, vpcID, peeringID) },
		func(peering *apiclient.Peering) bool { return p.st.putPeering(vpcID, *peering, p.opts.Now()) },
		func() bool { return p.st.removePeering(vpcID, peeringID) },
		func() { failed(p.st.peerings, vpcID, p.opts.Now()) })
}
