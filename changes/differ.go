package changes

import (
	"crypto/sha256"
	"time"
	"unsafe"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// differ compares one project's successive snapshots. It is not safe for
// concurrent use: a poller publishes its snapshots one at a time.
type differ struct {
	project     string
	services    *tracker[fleet.Service, svcFields, idKey]
	replicaSets *tracker[fleet.ReplicaSet, rsFields, key]
	vpcs        *tracker[apiclient.VPC, vpcFields, idKey]
	peerings    *tracker[fleet.Peering, peeringFields, key]
	key         keyState
	// out holds the events of the snapshot being compared, reused.
	out []Event
}

// keyState is the API key last read: a rotation changes its public key.
type keyState struct {
	ptr *apiclient.APIKeyInfo
	// public is the public key's hash: the file keeps state, never a key.
	public        [sha256.Size]byte
	name          string
	created, read time.Time
	// known: a key was read (or restored), so the next different one is a rotation.
	known bool
}

func newDiffer(project string) *differ {
	return &differ{
		project: project,
		services: newTracker(kindOf[fleet.Service, svcFields, idKey]{
			typ:   TypeService,
			key:   func(s *fleet.Service) idKey { return idKey(s.ServiceID) },
			ptr:   func(s *fleet.Service) unsafe.Pointer { return unsafe.Pointer(s.Service) },
			name:  func(s *fleet.Service) string { return s.Name },
			named: func(f *svcFields) *string { return &f.Name },
			fields: func(s *fleet.Service) svcFields {
				return serviceFields(s.Service)
			},
			diff: diffService, keep: svcFields.keep, created: serviceCreated, goneOn404: true,
		}),
		replicaSets: newTracker(kindOf[fleet.ReplicaSet, rsFields, key]{
			typ:    TypeReplicaSet,
			key:    func(r *fleet.ReplicaSet) key { return key{parent: r.ServiceID, id: r.ID} },
			ptr:    func(r *fleet.ReplicaSet) unsafe.Pointer { return unsafe.Pointer(r.ReplicaSet) },
			name:   func(r *fleet.ReplicaSet) string { return r.Name },
			named:  func(f *rsFields) *string { return &f.Name },
			fields: func(r *fleet.ReplicaSet) rsFields { return replicaSetFields(r.ReplicaSet) },
			diff:   diffReplicaSet, keep: rsFields.keep,
			created: func(r *fleet.ReplicaSet) (Fields, time.Time) {
				return Fields{"name": r.Name, "nodes": int64(r.Nodes)}, time.Time{}
			},
		}),
		vpcs: newTracker(kindOf[apiclient.VPC, vpcFields, idKey]{
			typ: TypeVPC,
			key: func(v *apiclient.VPC) idKey { return idKey(v.ID) },
			// A VPC is a value: nil makes every changed list compare its fields, a
			// few strings.
			ptr:    func(*apiclient.VPC) unsafe.Pointer { return nil },
			name:   func(v *apiclient.VPC) string { return v.Name },
			named:  func(f *vpcFields) *string { return &f.Name },
			fields: func(v *apiclient.VPC) vpcFields { return vpcFields{Name: v.Name} },
			diff:   diffVPC, keep: vpcFields.keep, goneOn404: true,
			created: func(v *apiclient.VPC) (Fields, time.Time) {
				return Fields{"name": v.Name, "cidr": v.CIDR}, time.Time{}
			},
		}),
		peerings: newTracker(kindOf[fleet.Peering, peeringFields, key]{
			typ:    TypePeering,
			key:    func(p *fleet.Peering) key { return key{parent: p.VPCID, id: p.ID} },
			ptr:    func(p *fleet.Peering) unsafe.Pointer { return unsafe.Pointer(p.Peering) },
			name:   func(p *fleet.Peering) string { return p.PeerVPCID },
			named:  func(f *peeringFields) *string { return &f.Peer },
			fields: func(p *fleet.Peering) peeringFields { return peeringFieldsOf(p.Peering) },
			diff:   diffPeering, keep: peeringFields.keep,
			created: func(p *fleet.Peering) (Fields, time.Time) {
				return Fields{"peer_vpc_id": p.PeerVPCID, "peer_account_id": p.PeerAccountID}, time.Time{}
			},
		}),
	}
}

func serviceCreated(s *fleet.Service) (Fields, time.Time) {
	after := Fields{"name": s.Name}
	if f := s.ForkedFrom; f != nil {
		after["forked_from"] = Fields{"project_id": f.ProjectID, "service_id": f.ServiceID}
	}
	return after, s.Created.Time
}

func (d *differ) add(e Event) {
	e.ProjectID = d.project
	e.Source = SourcePoll
	d.out = append(d.out, e)
}

func health(s *fleet.Snapshot, part string) (fleet.PartHealth, bool) {
	for _, h := range s.Parts {
		if h.Name == part {
			return h, true
		}
	}
	return fleet.PartHealth{}, false
}

// listRead: a list part's complete read is its last success, when it succeeded.
func listRead(s *fleet.Snapshot, part string) read {
	h, ok := health(s, part)
	r := read{healthy: ok && h.Success, at: s.Read}
	if r.healthy {
		r.complete = h.LastSuccess
	}
	return r
}

// childRead: a per-parent list is read whole only by a cycle that read every
// parent's (no round-robin: the budget covered the plan) without a failure,
// after its parents' list succeeded.
func childRead(s *fleet.Snapshot, part, parentPart string) read {
	h, ok := health(s, part)
	p, pok := health(s, parentPart)
	r := read{healthy: ok && h.Success, at: s.Read}
	if r.healthy && pok && p.Success && !p.LastSuccess.After(h.LastSuccess) && s.Budget.Planned >= s.Budget.Needed {
		r.complete = h.LastSuccess
	}
	return r
}

// observe compares s with what was known and returns its changes (valid until
// the next call).
func (d *differ) observe(s *fleet.Snapshot) []Event {
	d.out = d.out[:0]
	d.services.observe(d, s.Services, listRead(s, fleet.PartServices))
	d.replicaSets.observe(d, s.ReplicaSets, childRead(s, fleet.PartReplicaSets, fleet.PartServices))
	d.vpcs.observe(d, s.VPCs, listRead(s, fleet.PartVPCs))
	d.peerings.observe(d, s.Peerings, childRead(s, fleet.PartPeerings, fleet.PartVPCs))
	d.observeKey(s)
	return d.out
}

func (d *differ) observeKey(s *fleet.Snapshot) {
	if s.Auth == nil {
		return
	}
	k := s.Auth.Key()
	if k == nil || k == d.key.ptr {
		return
	}
	prev := d.key
	d.key = keyState{ptr: k, public: sha256.Sum256([]byte(k.PublicKey)), name: k.Name, created: k.Created.Time, read: s.Read, known: true}
	if !prev.known || prev.public == d.key.public || k.PublicKey == "" {
		return
	}
	// The public key identifies the key but stays out of the event: the
	// client treats it as a credential.
	d.add(Event{ObjectType: TypeAPIKey, ObjectID: "api_key", ObjectName: k.Name, WindowStart: timePtr(prev.read),
		EffectiveTime: timePtr(k.Created.Time), Kind: KindRotated,
		Before: Fields{"name": prev.name, "created": rfc3339(prev.created)}, After: Fields{"name": k.Name, "created": rfc3339(k.Created.Time)}})
}

func rfc3339(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC().Format(time.RFC3339)
}

// completeReads counts the complete reads recorded: a new one is state to save.
func (d *differ) completeReads() uint64 {
	return d.services.list + d.replicaSets.list + d.vpcs.list + d.peerings.list
}
