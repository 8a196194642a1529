package admin

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

const (
	statePending   = "pending"
	stateSucceeded = resultSucceeded
	stateFailed    = resultFailed
	stateTimedOut  = resultTimedOut
)

const maxOperations = 1000

const lastStatusGone = "gone"

// Operation is one write sent upstream, as GET /api/v1/operations shows it.
type Operation struct {
	ID           string     `json:"id"`
	Operation    string     `json:"operation"`
	ProjectID    string     `json:"project_id"`
	ServiceID    string     `json:"service_id,omitempty"`
	ReplicaSetID string     `json:"replica_set_id,omitempty"`
	VPCID        string     `json:"vpc_id,omitempty"`
	PeeringID    string     `json:"peering_id,omitempty"`
	State        string     `json:"state"`
	HTTPStatus   int        `json:"http_status"`
	ErrorCode    string     `json:"error_code,omitempty"`
	RequestedAt  time.Time  `json:"requested_at"`
	AcceptedAt   *time.Time `json:"accepted_at,omitempty"`
	SettledAt    *time.Time `json:"settled_at,omitempty"`
	Duration     *float64   `json:"duration_seconds,omitempty"`
	LastStatus   string     `json:"last_status,omitempty"`
	// audit is the record that a tracked operation's "settled" record copies.
	audit *auditRecord
}

type operationStore struct {
	mu  sync.Mutex
	ops []*Operation
	max int
}

func (s *operationStore) add(op *Operation) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.ops) >= s.max {
		s.ops = slices.Delete(s.ops, 0, len(s.ops)-s.max+1)
	}
	s.ops = append(s.ops, op)
}

func (s *operationStore) update(op *Operation, f func(*Operation)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(op)
}

func (s *operationStore) list() []Operation {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Operation, 0, len(s.ops))
	for i := len(s.ops) - 1; i >= 0; i-- {
		out = append(out, *s.ops[i])
	}
	return out
}

func (s *operationStore) get(id string) (Operation, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, op := range s.ops {
		if op.ID == id {
			return *op, true
		}
	}
	return Operation{}, false
}

func (s *Server) settle(op *Operation, state string, now time.Time) {
	var d float64
	s.recent.update(op, func(op *Operation) {
		op.State = state
		op.SettledAt = &now
		d = now.Sub(op.RequestedAt).Seconds()
		op.Duration = &d
	})
	s.metrics.duration.WithLabelValues(op.Operation, state).Observe(d)
	if op.audit == nil {
		s.logger.Info("Admin operation settled", "request_id", op.ID, "operation", op.Operation,
			"project_id", op.ProjectID, "state", state, "duration_seconds", d)
		return
	}
	rec := *op.audit
	rec.Time, rec.Status, rec.Duration, rec.State = now.UTC(), 0, d, state
	s.recent.update(op, func(op *Operation) {
		rec.ServiceID, rec.ReplicaSetID, rec.VPCID, rec.PeeringID = op.ServiceID, op.ReplicaSetID, op.VPCID, op.PeeringID
		rec.LastStatus = op.LastStatus
	})
	_ = s.audit.write(eventSettled, &rec) // logged; nothing waits on it
}

// refresh goes through the project's poller, so that /metrics shows the change.
func refresh(ctx context.Context, p Poller, t target) error {
	switch t.kind {
	case kindService:
		if t.serviceID == "" {
			return nil
		}
		return p.RefreshService(ctx, t.serviceID)
	case kindReplicaSet:
		if err := p.RefreshService(ctx, t.serviceID); err != nil {
			return err
		}
		return p.RefreshReplicaSets(ctx, t.serviceID)
	case kindVPC:
		if t.vpcID == "" {
			return nil
		}
		return p.RefreshVPC(ctx, t.vpcID)
	case kindPeering:
		if t.peeringID == "" {
			return nil
		}
		return p.RefreshPeering(ctx, t.vpcID, t.peeringID)
	}
	return nil
}

func evaluate(snap *fleet.Snapshot, t target) (string, string) {
	if snap == nil {
		return statePending, ""
	}
	status, found := "", false
	switch t.kind {
	case kindService:
		for _, s := range snap.Services {
			if s.ServiceID == t.serviceID {
				status, found = s.Status, true
				break
			}
		}
	case kindReplicaSet:
		for _, rs := range snap.ReplicaSets {
			if rs.ServiceID == t.serviceID && rs.ID == t.replicaSetID {
				status, found = rs.Status, true
				break
			}
		}
	}
	if !found {
		if t.settle == settleGone {
			return stateSucceeded, lastStatusGone
		}
		return stateFailed, lastStatusGone
	}
	if t.settle == settleGone {
		return statePending, status
	}
	if t.settle == settlePaused {
		switch status {
		case apiclient.ServicePaused:
			return stateSucceeded, status
		case apiclient.ServiceDeleting, apiclient.ServiceDeleted:
			return stateFailed, status
		}
		return statePending, status
	}
	switch status {
	case apiclient.ServiceReady, apiclient.ReplicaSetActive:
		return stateSucceeded, status
	case apiclient.ServiceDeleting, apiclient.ServiceDeleted, apiclient.ReplicaSetError:
		return stateFailed, status
	}
	return statePending, status
}

// track counts only observations made after the acceptance, so that a
// resize is not taken as done because the service was READY before it.
func (s *Server) track(op *Operation, p Project, t target) {
	interval := s.opts.TrackInterval
	if interval <= 0 {
		interval = p.TrackInterval
	}
	if interval <= 0 {
		interval = defaultTrackInterval
	}
	deadline := op.RequestedAt.Add(s.opts.OperationTimeout)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-timer.C:
		}
		// Look the project up again: a configuration reload may have
		// replaced its poller (the old one no longer refreshes) or removed it.
		cur, ok := s.opts.Projects(op.ProjectID)
		if !ok {
			s.recent.update(op, func(op *Operation) { op.LastStatus = "project no longer configured" })
			s.settle(op, stateFailed, time.Now())
			return
		}
		p = cur
		// Tracking draws on its own share of the rate limit, so that many
		// operations followed at once never starve the poll cycle.
		ctx, cancel := context.WithTimeout(apiclient.Tracking(s.ctx), max(interval, refreshTimeout))
		err := refresh(ctx, p.Poller, t)
		cancel()
		now := time.Now()
		if err != nil {
			s.logger.Debug("Refreshing a tracked resource failed", "request_id", op.ID, "operation", op.Operation, "err", err)
		} else {
			state, status := evaluate(p.Poller.Snapshot(), t)
			s.recent.update(op, func(op *Operation) { op.LastStatus = status })
			if state != statePending {
				s.settle(op, state, now)
				return
			}
		}
		if !now.Before(deadline) {
			s.settle(op, stateTimedOut, now)
			return
		}
		timer.Reset(min(interval, deadline.Sub(now)))
	}
}

func (s *Server) refreshOnce(op *Operation, p Project, t target) {
	ctx, cancel := context.WithTimeout(apiclient.Tracking(s.ctx), refreshTimeout)
	defer cancel()
	if err := refresh(ctx, p.Poller, t); err != nil {
		s.logger.Debug("Refreshing a written resource failed", "request_id", op.ID, "operation", op.Operation, "err", err)
	}
}
