package poller

import (
	"context"
	"slices"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// newChildLists defines the per-parent lists a cycle reads after the services
// and VPCs. Each state has its own copy, holding what it knows of them.
func newChildLists() []childLister {
	return []childLister{
		&childList[apiclient.ReplicaSet, fleet.ReplicaSet]{
			name: fleet.PartReplicaSets, parent: fleet.PartServices, op: apiclient.OpListReplicaSets,
			parentAttr: "service_id", childAttr: "replica_set_id", what: "replica sets of service ",
			id:      func(rs apiclient.ReplicaSet) string { return rs.ID },
			status:  func(rs apiclient.ReplicaSet) string { return rs.Status },
			dropped: func(rs apiclient.ReplicaSet) []apiclient.FieldError { return rs.Dropped },
			inTransition: func(rs apiclient.ReplicaSet) bool {
				return slices.Contains(transitionalReplicaSetStatuses, rs.Status)
			},
			list: func(ctx context.Context, c Client, id string) ([]apiclient.ReplicaSet, error) {
				return c.ListReplicaSets(ctx, id)
			},
			parents: func(s *state) []string {
				var ids []string
				for id := range s.services {
					if !s.inlineReplicaSets[id] { // its replica sets came with the service
						ids = append(ids, id)
					}
				}
				return ids
			},
			parentInTransition: func(s *state, id string) bool {
				return slices.Contains(transitionalServiceStatuses, s.services[id].v.Status)
			},
			follow: followReplicaSets,
			field:  func(snap *fleet.Snapshot) *[]fleet.ReplicaSet { return &snap.ReplicaSets },
			elem: func(serviceID string, rs *apiclient.ReplicaSet, since time.Time) fleet.ReplicaSet {
				return fleet.ReplicaSet{ServiceID: serviceID, ReplicaSet: rs, StatusSince: since}
			},
			byParent: map[string]observed[[]apiclient.ReplicaSet]{},
		},
		&childList[apiclient.Peering, fleet.Peering]{
			name: fleet.PartPeerings, parent: fleet.PartVPCs, op: apiclient.OpListPeerings,
			parentAttr: "vpc_id", childAttr: "peering_id", what: "peerings of VPC ",
			id:           func(p apiclient.Peering) string { return p.ID },
			status:       func(p apiclient.Peering) string { return p.Status },
			dropped:      func(p apiclient.Peering) []apiclient.FieldError { return p.Dropped },
			inTransition: func(p apiclient.Peering) bool { return p.Status == apiclient.PeeringPending },
			list: func(ctx context.Context, c Client, id string) ([]apiclient.Peering, error) {
				return c.ListPeerings(ctx, id)
			},
			get: func(ctx context.Context, c Client, vpcID, id string) (*apiclient.Peering, error) {
				return c.GetPeering(ctx, vpcID, id)
			},
			getOp:   apiclient.OpGetPeering,
			parents: func(s *state) []string { return sortedKeys(s.vpcs) },
			observe: observePeeringError,
			field:   func(snap *fleet.Snapshot) *[]fleet.Peering { return &snap.Peerings },
			elem: func(vpcID string, p *apiclient.Peering, since time.Time) fleet.Peering {
				return fleet.Peering{VPCID: vpcID, Peering: p, StatusSince: since}
			},
			byParent: map[string]observed[[]apiclient.Peering]{},
		},
	}
}

// followReplicaSets lists again (replica sets have no get), or reads the
// service when it carries them inline.
func followReplicaSets(ctx context.Context, l *childList[apiclient.ReplicaSet, fleet.ReplicaSet], p *Poller, serviceID string, _ []apiclient.ReplicaSet) []followUp {
	if p.st.inlineReplicaSets[serviceID] {
		return []followUp{p.followService(ctx, serviceID)}
	}
	return []followUp{l.listAgain(ctx, p, serviceID)}
}

func observePeeringError(s *state, vpcID string, p apiclient.Peering) {
	key := statusKey("peering", vpcID, p.ID)
	msg := ""
	if p.ErrorMessage != nil {
		msg = *p.ErrorMessage
	}
	if prev := s.peeringErrors[key]; prev != msg {
		if msg != "" {
			// The message is free text: it belongs in the log, never in a label.
			s.logger.Warn("Peering reports an error", "vpc_id", vpcID, "peering_id", p.ID, "error_message", msg)
		} else {
			s.logger.Info("Peering error cleared", "vpc_id", vpcID, "peering_id", p.ID)
		}
	}
	if msg == "" {
		delete(s.peeringErrors, key)
	} else {
		s.peeringErrors[key] = msg
	}
}

// replicaSets is the list that inline replica sets reach directly.
func (s *state) replicaSets() *childList[apiclient.ReplicaSet, fleet.ReplicaSet] {
	return s.childList(fleet.PartReplicaSets).(*childList[apiclient.ReplicaSet, fleet.ReplicaSet])
}

func (s *state) childList(part string) childLister {
	for _, l := range s.lists {
		if l.part() == part {
			return l
		}
	}
	return nil
}
