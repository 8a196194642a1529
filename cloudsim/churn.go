package cloudsim

import (
	"context"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

type churnBlip struct{ projectID, serviceID string }

// Churn changes the fleet every interval until ctx ends so that demo graphs
// move; forced statuses are left alone.
func (s *Sim) Churn(ctx context.Context, every time.Duration) {
	if every <= 0 {
		return
	}
	rng := newRand(s.seed, "churn")
	t := time.NewTicker(every)
	defer t.Stop()
	var blips []churnBlip
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		s.mu.Lock()
		blips = s.churnStep(rng, blips)
		s.mu.Unlock()
		s.logger.Debug("Churn step done", "blips", len(blips))
	}
}

// churnStep changes one thing in each project and ends the blips of the
// step before; it returns this step's blips. With s.mu held.
func (s *Sim) churnStep(rng *rand.Rand, blips []churnBlip) []churnBlip {
	now := s.clock()
	for _, b := range blips {
		if p := s.projects[b.projectID]; p != nil {
			if svc := p.services[b.serviceID]; svc != nil && svc.life.forced == apiclient.ServiceUnstable && !svc.life.pinned {
				svc.life.touch()
			}
		}
	}
	blips = blips[:0]
	ids := make([]string, 0, len(s.projects))
	for id := range s.projects {
		ids = append(ids, id)
	}
	// Sorted so that a seed gives the same churn whatever the map order.
	slices.Sort(ids)
	for _, id := range ids {
		p := s.projects[id]
		live := p.liveServices(now)
		if len(live) == 0 {
			continue
		}
		svc := live[rng.IntN(len(live))]
		// The demo's "break something" must not be undone.
		if svc.checkWritable(now) != nil || svc.life.forced != "" {
			continue
		}
		switch rng.IntN(5) {
		case 0:
			// Along the ladder the example price file prices, never a
			// size the demo's cost estimate would leave out.
			if svc.checkChangeable(now) == nil && !svc.shared {
				svc.cpuMillis, svc.memoryGBs = ladderStep(svc.cpuMillis, rng.IntN(3)-1)
				s.reconfigure(svc, now)
			}
		case 1:
			svc.pooler = !svc.pooler
			svc.life.touch()
		case 2:
			svc.environment = map[string]string{
				apiclient.EnvironmentProd: apiclient.EnvironmentDev,
				apiclient.EnvironmentDev:  apiclient.EnvironmentProd,
			}[svc.environment]
			svc.life.touch()
		case 3:
			if svc.life.status(now) == apiclient.ServiceReady {
				svc.life.forced = apiclient.ServiceUnstable
				blips = append(blips, churnBlip{p.id, svc.id})
			}
		case 4:
			sets := svc.liveReplicaSets(now)
			if len(sets) == 0 {
				continue
			}
			rs := sets[rng.IntN(len(sets))]
			if rs.life.forced == "" && rs.life.status(now) == apiclient.ReplicaSetActive {
				rs.nodes = int64(1 + rng.IntN(3))
				rs.life.begin(now, apiclient.ReplicaSetActive, step{apiclient.ReplicaSetResizing, s.timings.ReplicaSet})
			}
		}
	}
	return blips
}
