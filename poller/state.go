package poller

import (
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// observed is a value with the time it was last read successfully from the
// API and, when an attempt to refresh it has failed since, the time of that
// failure. Staleness is the time between the two: a value that is merely
// old because nothing tried to refresh it yet (a long cycle, a call budget
// spread over several cycles) is not stale.
type observed[T any] struct {
	v      T
	at     time.Time
	failed time.Time
}

// stale reports whether o's refresh has been failing for longer than
// maxStaleness; 0 means never.
func (o observed[T]) stale(maxStaleness time.Duration) bool {
	return maxStaleness > 0 && !o.failed.IsZero() && o.failed.Sub(o.at) > maxStaleness
}

// failed records a failed attempt to refresh m[key], if it is known.
func failed[T any](m map[string]observed[T], key string, now time.Time) {
	if o, ok := m[key]; ok {
		o.failed = now
		m[key] = o
	}
}

// failedAll records a failed attempt to refresh every value of m.
func failedAll[T any](m map[string]observed[T], now time.Time) {
	for key := range m {
		failed(m, key, now)
	}
}

// statusSeen is the last status seen of one resource and since when.
type statusSeen struct {
	status string
	since  time.Time
}

// state is the mutable knowledge of one project. It is only touched with
// Poller.mu held; snapshots point at its values, so a kept value (a
// service, a list of replica sets or peerings) is never modified, only
// replaced.
type state struct {
	logger *slog.Logger
	// access is what the last services list said (see noteAccess).
	access fleet.Access
	// owns tells whether a service or VPC id belongs to this process's
	// shard: the others are never kept, so that they are neither fetched,
	// followed nor exported.
	owns        func(id string) bool
	services    map[string]observed[*apiclient.Service]
	replicaSets map[string]observed[[]apiclient.ReplicaSet] // by service id
	vpcs        map[string]observed[apiclient.VPC]
	peerings    map[string]observed[[]apiclient.Peering] // by VPC id
	auth        *observed[apiclient.AuthInfo]
	parts       map[string]fleet.PartHealth
	// read is the end of the last API call that succeeded (a 404 of a
	// resource that went away included) and whose answer was recorded;
	// zero before the first (see fleet.Snapshot.Read).
	read time.Time
	// budget is the last full cycle's calls (see pollChildren).
	budget fleet.Budget
	// dataParts put the data plane's last data into a snapshot, by part
	// (see Poller.PublishPart).
	dataParts map[string]func(*fleet.Snapshot)
	// statuses, peeringErrors and dropped are keyed by statusKey; dropped
	// holds the fields of a resource that did not decode, as last logged.
	statuses      map[string]statusSeen
	peeringErrors map[string]string
	dropped       map[string]string
	// attempted is when each child (see childKey) was last asked for, the
	// order of the round-robin; notBefore is when a call (see childKey and
	// the list operations) may be tried again, as the API asked.
	attempted map[string]time.Time
	notBefore map[string]time.Time
	// inlineReplicaSets holds the services whose last answer carried
	// read_replica_sets (revision 2026): their replica sets come with the
	// service, and listReplicaSets is not called for them.
	inlineReplicaSets map[string]bool
	// dirty marks the sections of the snapshot whose part of the state
	// changed since last, the latest snapshot; the others are shared with
	// it (nothing in a published Snapshot is ever modified), so that the
	// many snapshots of a cycle cost what changed rather than the whole
	// fleet each. A value read again unchanged keeps its old copy, so
	// that the new one is garbage at once and the snapshot's strings stay
	// the state's.
	dirty section
	last  *fleet.Snapshot
}

// section is a set of the snapshot's lists.
type section uint8

const (
	sectionServices section = 1 << iota
	sectionReplicaSets
	sectionVPCs
	sectionPeerings
)

func newState(logger *slog.Logger, owns func(id string) bool) *state {
	return &state{
		logger:        logger,
		owns:          owns,
		services:      map[string]observed[*apiclient.Service]{},
		replicaSets:   map[string]observed[[]apiclient.ReplicaSet]{},
		vpcs:          map[string]observed[apiclient.VPC]{},
		peerings:      map[string]observed[[]apiclient.Peering]{},
		parts:         map[string]fleet.PartHealth{},
		statuses:      map[string]statusSeen{},
		peeringErrors: map[string]string{},
		dropped:       map[string]string{},
		attempted:     map[string]time.Time{},
		notBefore:     map[string]time.Time{},
		dataParts:     map[string]func(*fleet.Snapshot){},

		inlineReplicaSets: map[string]bool{},
	}
}

func statusKey(kind string, ids ...string) string {
	return kind + "/" + strings.Join(ids, "/")
}

// observeStatus records status for key and returns since when the resource
// has had it. A change is logged as an event; attrs identify the resource.
func (s *state) observeStatus(key, status string, now time.Time, attrs ...any) time.Time {
	prev, ok := s.statuses[key]
	if ok && prev.status == status {
		return prev.since
	}
	if ok {
		s.logger.Info("Status changed", append(attrs, "old", prev.status, "new", status)...)
	}
	s.statuses[key] = statusSeen{status: status, since: now}
	return now
}

func (s *state) forgetStatus(key string) {
	delete(s.statuses, key)
	delete(s.peeringErrors, key)
	delete(s.dropped, key)
}

// observeDropped logs the fields of a resource that did not decode when
// they change, so that a bad record is logged once, not once per cycle.
// attrs identify the resource.
func (s *state) observeDropped(key string, dropped []apiclient.FieldError, attrs ...any) {
	parts := make([]string, len(dropped))
	for i, e := range dropped {
		parts[i] = e.Field + ": " + e.Err
	}
	now := strings.Join(parts, "; ")
	if s.dropped[key] == now {
		return
	}
	if now != "" {
		s.logger.Warn("Fields of a resource did not decode; they are left out", append(attrs, "fields", now)...)
		s.dropped[key] = now
	} else {
		s.logger.Info("Fields of a resource decode again", attrs...)
		delete(s.dropped, key)
	}
}

// unique keeps the first entry of each id: snapshots promise unique ids, so
// that no series is ever exported twice, whatever the API sends. The first
// is kept, not the last, so that the choice does not depend on how many
// copies follow; a list with duplicates is logged in one line.
func unique[T any](logger *slog.Logger, list []T, id func(T) string, what string) []T {
	if len(list) < 2 {
		return list
	}
	seen := make(map[string]bool, len(list))
	var out []T
	var dups []string
	for i, v := range list {
		if !seen[id(v)] {
			seen[id(v)] = true
			if out != nil {
				out = append(out, v)
			}
			continue
		}
		if out == nil {
			out = slices.Clone(list[:i])
		}
		dups = append(dups, id(v))
	}
	if out == nil {
		return list
	}
	logger.Warn("Duplicate ids in an API response; keeping the first of each", "in", what, "ids", dups)
	return out
}

// setServices replaces the services with a complete list.
func (s *state) setServices(list []apiclient.Service, now time.Time) {
	r := s.readServices()
	for _, svc := range list {
		r.put(&svc, now)
	}
	r.complete()
}

// servicesRead applies a services list to the state as it is decoded
// (see apiclient.Client.StreamServices), so that the list is never held
// whole beside the state: each service is recorded at once, sharing the
// kept memory wherever it is equal (see reuseService), and once the list
// is complete the services it no longer has are removed. A list that
// fails part way keeps what it recorded (values the API sent, fresher than
// the ones they replace) and removes nothing. Its methods need the state's
// lock.
type servicesRead struct {
	s    *state
	seen map[string]struct{}
	dups []string
}

func (s *state) readServices() *servicesRead {
	return &servicesRead{s: s, seen: make(map[string]struct{}, len(s.services))}
}

// begin starts the list again: a retried read hands its services again.
func (r *servicesRead) begin() {
	clear(r.seen)
	r.dups = nil
}

// put records one service of the list; the first of an id is kept, as
// unique does.
func (r *servicesRead) put(svc *apiclient.Service, now time.Time) {
	if !r.s.owns(svc.ServiceID) {
		return
	}
	if _, dup := r.seen[svc.ServiceID]; dup {
		r.dups = append(r.dups, svc.ServiceID)
		return
	}
	r.s.reuseService(svc)
	r.seen[svc.ServiceID] = struct{}{}
	r.s.putService(svc, now)
}

// complete removes the services the list, read whole, no longer has.
func (r *servicesRead) complete() {
	if len(r.dups) > 0 {
		r.s.logger.Warn("Duplicate ids in an API response; keeping the first of each", "in", "services", "ids", r.dups)
	}
	for id := range r.s.services {
		if _, ok := r.seen[id]; !ok {
			r.s.removeService(id)
		}
	}
}

// replaceList makes known, a map of resources by id, hold the resources of
// a complete list: the duplicates of an id and the ids of other shards are
// left out, put records each of the others, and remove forgets each id the
// list no longer has (and what hangs off it).
func replaceList[T, V any](s *state, list []T, id func(T) string, what string, known map[string]V, put func(T), remove func(id string)) {
	list = unique(s.logger, list, id, what)
	seen := make(map[string]bool, len(list))
	for _, v := range list {
		if !s.owns(id(v)) {
			continue
		}
		seen[id(v)] = true
		put(v)
	}
	for key := range known {
		if !seen[key] {
			remove(key)
		}
	}
}

// putService records one service, which it owns from then on (it is kept
// when it changed), and reports whether anything changed.
func (s *state) putService(svc *apiclient.Service, now time.Time) bool {
	if !s.owns(svc.ServiceID) {
		return false
	}
	// initial_password is never kept: only create and fork send it, and a
	// snapshot is no place for a secret.
	svc.InitialPassword = ""
	svc.Resources = unique(s.logger, svc.Resources, func(r apiclient.Resource) string { return r.ID }, "resources of service "+svc.ServiceID)
	rsChanged := false
	if svc.ReadReplicaSets != nil {
		// Inline replica sets are kept once, with the others, not on the
		// service as well.
		rsChanged = s.setReplicaSets(svc.ServiceID, inlineReplicaSets(svc), now)
		s.inlineReplicaSets[svc.ServiceID] = true
		delete(s.attempted, childKey(fleet.PartReplicaSets, svc.ServiceID))
	} else {
		delete(s.inlineReplicaSets, svc.ServiceID)
	}
	old, ok := s.services[svc.ServiceID]
	key := statusKey("service", svc.ServiceID)
	s.observeStatus(key, svc.Status, now, "service_id", svc.ServiceID)
	s.observeDropped(key, svc.Dropped, "service_id", svc.ServiceID)
	kept := old.v
	changed := !ok || !reflect.DeepEqual(kept, svc)
	if changed {
		s.dirty |= sectionServices
		kept = svc
	}
	s.services[svc.ServiceID] = observed[*apiclient.Service]{v: kept, at: now}
	return changed || rsChanged
}

// reuseService makes svc, a service just read, share the memory of the
// value kept for it wherever the two are equal: each equal field takes the
// kept field, and inline replica sets equal to the kept ones take those.
// A list read again then holds a fresh copy only of what changed (a
// service's current usage, say), and the rest of the copy just decoded is
// garbage at once. What putService records is unchanged: nothing kept is
// ever modified in place.
func (s *state) reuseService(svc *apiclient.Service) {
	old, ok := s.services[svc.ServiceID]
	if !ok {
		return
	}
	// Dropped fields of inline replica sets are moved onto them (see
	// inlineReplicaSets), which must not happen to kept ones.
	if svc.ReadReplicaSets != nil && len(svc.Dropped) == 0 && s.inlineReplicaSets[svc.ServiceID] {
		if kept := s.replicaSets[svc.ServiceID].v; reflect.DeepEqual(kept, svc.ReadReplicaSets) {
			svc.ReadReplicaSets = kept
		}
	}
	shareEqualFields(svc, old.v)
}

// shareEqualFields sets each field of *v that equals the same field of
// *kept to kept's, so that v shares kept's strings, slices and pointers.
func shareEqualFields[T any](v, kept *T) {
	rv, rk := reflect.ValueOf(v).Elem(), reflect.ValueOf(kept).Elem()
	for i := range rv.NumField() {
		f, k := rv.Field(i), rk.Field(i)
		// Most fields are strings or nil: each DeepEqual boxes both
		// values and makes a map (a tenth of a cycle's CPU at 10k).
		switch f.Kind() {
		case reflect.String:
			if f.String() == k.String() {
				f.SetString(k.String())
			}
			continue
		case reflect.Pointer, reflect.Slice, reflect.Map:
			if f.IsNil() && k.IsNil() {
				continue // Nothing to share.
			}
		}
		if reflect.DeepEqual(f.Interface(), k.Interface()) {
			f.Set(k)
		}
	}
}

// inlineReplicaSets takes the replica sets out of a service answer. The
// fields of theirs that did not decode were recorded on the service
// ("read_replica_sets.N.field"); they move to the replica set, where the
// collector looks, so that a lost value is never exported as 0.
func inlineReplicaSets(svc *apiclient.Service) []apiclient.ReplicaSet {
	list := svc.ReadReplicaSets
	svc.ReadReplicaSets = nil
	if len(svc.Dropped) == 0 {
		return list
	}
	const prefix = "read_replica_sets."
	kept := svc.Dropped[:0:0]
	for _, e := range svc.Dropped {
		rest, ok := strings.CutPrefix(e.Field, prefix)
		if !ok {
			kept = append(kept, e)
			continue
		}
		idx, field, _ := strings.Cut(rest, ".")
		i, err := strconv.Atoi(idx)
		if err != nil || i < 0 || i >= len(list) || field == "" {
			kept = append(kept, e)
			continue
		}
		list[i].Dropped = append(list[i].Dropped, apiclient.FieldError{Field: field, Err: e.Err})
	}
	svc.Dropped = kept
	return list
}

// removeService forgets a service and its replica sets.
func (s *state) removeService(id string) {
	if _, ok := s.services[id]; ok {
		s.logger.Info("Resource gone", "service_id", id)
	}
	delete(s.services, id)
	s.dirty |= sectionServices
	delete(s.inlineReplicaSets, id)
	s.forgetStatus(statusKey("service", id))
	s.removeReplicaSets(id)
	delete(s.notBefore, childKey(fleet.PartReplicaSets, id))
}

// setReplicaSets replaces the replica sets of one service and reports
// whether anything changed.
func (s *state) setReplicaSets(serviceID string, list []apiclient.ReplicaSet, now time.Time) bool {
	if !s.owns(serviceID) {
		return false
	}
	list = unique(s.logger, list, func(rs apiclient.ReplicaSet) string { return rs.ID }, "replica sets of service "+serviceID)
	old := s.replicaSets[serviceID]
	seen := make(map[string]bool, len(list))
	for _, rs := range list {
		seen[rs.ID] = true
		key := statusKey("replica_set", serviceID, rs.ID)
		s.observeStatus(key, rs.Status, now, "service_id", serviceID, "replica_set_id", rs.ID)
		s.observeDropped(key, rs.Dropped, "service_id", serviceID, "replica_set_id", rs.ID)
	}
	for _, rs := range old.v {
		if !seen[rs.ID] {
			s.forgetStatus(statusKey("replica_set", serviceID, rs.ID))
		}
	}
	changed := !reflect.DeepEqual(old.v, list)
	if changed {
		s.dirty |= sectionReplicaSets
	} else {
		list = old.v
	}
	s.replicaSets[serviceID] = observed[[]apiclient.ReplicaSet]{v: list, at: now}
	return changed
}

func (s *state) removeReplicaSets(serviceID string) {
	for _, rs := range s.replicaSets[serviceID].v {
		s.forgetStatus(statusKey("replica_set", serviceID, rs.ID))
	}
	delete(s.replicaSets, serviceID)
	s.dirty |= sectionReplicaSets
	delete(s.attempted, childKey(fleet.PartReplicaSets, serviceID))
}

// setVPCs replaces the VPCs with a complete list.
func (s *state) setVPCs(list []apiclient.VPC, now time.Time) {
	replaceList(s, list, func(vpc apiclient.VPC) string { return vpc.ID }, "VPCs", s.vpcs,
		func(vpc apiclient.VPC) { s.putVPC(vpc, now) }, s.removeVPC)
}

func (s *state) putVPC(vpc apiclient.VPC, now time.Time) bool {
	if !s.owns(vpc.ID) {
		return false
	}
	old, ok := s.vpcs[vpc.ID]
	changed := !ok || old.v != vpc
	if changed {
		s.dirty |= sectionVPCs
	} else {
		vpc = old.v
	}
	s.vpcs[vpc.ID] = observed[apiclient.VPC]{v: vpc, at: now}
	return changed
}

// removeVPC forgets a VPC and its peerings.
func (s *state) removeVPC(id string) {
	if _, ok := s.vpcs[id]; ok {
		s.logger.Info("Resource gone", "vpc_id", id)
	}
	delete(s.vpcs, id)
	s.dirty |= sectionVPCs
	s.removePeerings(id)
	delete(s.notBefore, childKey(fleet.PartPeerings, id))
}

func (s *state) removePeerings(vpcID string) {
	for _, p := range s.peerings[vpcID].v {
		s.forgetStatus(statusKey("peering", vpcID, p.ID))
	}
	delete(s.peerings, vpcID)
	s.dirty |= sectionPeerings
	delete(s.attempted, childKey(fleet.PartPeerings, vpcID))
}

func (s *state) observePeering(vpcID string, p apiclient.Peering, now time.Time) {
	key := statusKey("peering", vpcID, p.ID)
	s.observeStatus(key, p.Status, now, "vpc_id", vpcID, "peering_id", p.ID)
	s.observeDropped(key, p.Dropped, "vpc_id", vpcID, "peering_id", p.ID)
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

// setPeerings replaces the peerings of one VPC and reports whether anything
// changed.
func (s *state) setPeerings(vpcID string, list []apiclient.Peering, now time.Time) bool {
	if !s.owns(vpcID) {
		return false
	}
	list = unique(s.logger, list, func(p apiclient.Peering) string { return p.ID }, "peerings of VPC "+vpcID)
	old := s.peerings[vpcID]
	seen := make(map[string]bool, len(list))
	for _, p := range list {
		seen[p.ID] = true
		s.observePeering(vpcID, p, now)
	}
	for _, p := range old.v {
		if !seen[p.ID] {
			s.forgetStatus(statusKey("peering", vpcID, p.ID))
		}
	}
	changed := !reflect.DeepEqual(old.v, list)
	if changed {
		s.dirty |= sectionPeerings
	} else {
		list = old.v
	}
	s.peerings[vpcID] = observed[[]apiclient.Peering]{v: list, at: now}
	return changed
}

// putPeering records one peering read through getPeering. The group keeps
// its own read time: one fresh peering does not make its siblings fresh.
func (s *state) putPeering(vpcID string, p apiclient.Peering, now time.Time) bool {
	if !s.owns(vpcID) {
		return false
	}
	group, ok := s.peerings[vpcID]
	if !ok {
		group.at = now
	}
	list := slices.Clone(group.v)
	i := slices.IndexFunc(list, func(q apiclient.Peering) bool { return q.ID == p.ID })
	if i >= 0 && reflect.DeepEqual(list[i], p) {
		return false
	}
	if i >= 0 {
		list[i] = p
	} else {
		list = append(list, p)
	}
	s.observePeering(vpcID, p, now)
	s.peerings[vpcID] = observed[[]apiclient.Peering]{v: list, at: group.at}
	s.dirty |= sectionPeerings
	return true
}

func (s *state) removePeering(vpcID, peeringID string) bool {
	group, ok := s.peerings[vpcID]
	if !ok {
		return false
	}
	list := slices.DeleteFunc(slices.Clone(group.v), func(q apiclient.Peering) bool { return q.ID == peeringID })
	if len(list) == len(group.v) {
		return false
	}
	s.forgetStatus(statusKey("peering", vpcID, peeringID))
	s.peerings[vpcID] = observed[[]apiclient.Peering]{v: list, at: group.at}
	s.dirty |= sectionPeerings
	return true
}

// pruneStale drops everything whose refresh has been failing for longer
// than maxStaleness since its last good read (0: never), for users who
// prefer no data to old data.
func (s *state) pruneStale(maxStaleness time.Duration) {
	if maxStaleness <= 0 {
		return
	}
	for id, o := range s.services {
		if o.stale(maxStaleness) {
			s.logger.Warn("Dropping stale data", "service_id", id, "last_read", o.at)
			s.removeService(id)
		}
	}
	for id, o := range s.replicaSets {
		if o.stale(maxStaleness) {
			s.logger.Warn("Dropping stale data", "replica_sets_of", id, "last_read", o.at)
			s.removeReplicaSets(id)
		}
	}
	for id, o := range s.vpcs {
		if o.stale(maxStaleness) {
			s.logger.Warn("Dropping stale data", "vpc_id", id, "last_read", o.at)
			s.removeVPC(id)
		}
	}
	for id, o := range s.peerings {
		if o.stale(maxStaleness) {
			s.logger.Warn("Dropping stale data", "peerings_of", id, "last_read", o.at)
			s.removePeerings(id)
		}
	}
	if s.auth != nil && s.auth.stale(maxStaleness) {
		s.logger.Warn("Dropping stale data", "auth_info_read", s.auth.at)
		s.auth = nil
	}
}

// snapshot prunes stale data and copies the state into a new Snapshot;
// the lists that did not change since the last one are shared with it
// (see state.dirty).
func (s *state) snapshot(projectID string, now time.Time, maxStaleness time.Duration) *fleet.Snapshot {
	s.pruneStale(maxStaleness)
	prev := s.last
	if prev == nil {
		prev = &fleet.Snapshot{}
		s.dirty = sectionServices | sectionReplicaSets | sectionVPCs | sectionPeerings
	}
	snap := &fleet.Snapshot{
		ProjectID:   projectID,
		Taken:       now,
		Read:        s.read,
		Services:    prev.Services,
		ReplicaSets: prev.ReplicaSets,
		VPCs:        prev.VPCs,
		Peerings:    prev.Peerings,
	}
	if s.dirty&sectionServices != 0 {
		snap.Services = make([]fleet.Service, 0, len(s.services))
		for _, id := range sortedKeys(s.services) {
			snap.Services = append(snap.Services, fleet.Service{
				Service:     s.services[id].v,
				StatusSince: s.statuses[statusKey("service", id)].since,
			})
		}
	}
	if s.dirty&sectionReplicaSets != 0 {
		snap.ReplicaSets = children(s.replicaSets, func(rs apiclient.ReplicaSet) string { return rs.ID },
			func(serviceID string, rs *apiclient.ReplicaSet) fleet.ReplicaSet {
				return fleet.ReplicaSet{ServiceID: serviceID, ReplicaSet: rs,
					StatusSince: s.statuses[statusKey("replica_set", serviceID, rs.ID)].since}
			})
	}
	if s.dirty&sectionVPCs != 0 {
		snap.VPCs = make([]apiclient.VPC, 0, len(s.vpcs))
		for _, id := range sortedKeys(s.vpcs) {
			snap.VPCs = append(snap.VPCs, s.vpcs[id].v)
		}
	}
	if s.dirty&sectionPeerings != 0 {
		snap.Peerings = children(s.peerings, func(p apiclient.Peering) string { return p.ID },
			func(vpcID string, p *apiclient.Peering) fleet.Peering {
				return fleet.Peering{VPCID: vpcID, Peering: p,
					StatusSince: s.statuses[statusKey("peering", vpcID, p.ID)].since}
			})
	}
	if s.auth != nil {
		auth := s.auth.v
		snap.Auth = &auth
	}
	for _, name := range slices.Concat(fleet.Parts, dataPartOrder(s.dataParts)) {
		if h, ok := s.parts[name]; ok {
			snap.Parts = append(snap.Parts, h)
		}
	}
	for _, name := range sortedKeys(s.dataParts) {
		s.dataParts[name](snap)
	}
	s.dirty = 0
	s.last = snap
	return snap
}

// children lays out the lists kept per parent (replica sets by service,
// peerings by VPC) as one snapshot list, parents and then children in id
// order; nil when there are none. Each entry points into the kept list,
// which is never modified (a change replaces it), rather than copying it.
func children[T, E any](m map[string]observed[[]T], id func(T) string, elem func(parent string, child *T) E) []E {
	var out []E
	if n := childCount(m); n > 0 {
		out = make([]E, 0, n)
	}
	var order []*T
	for _, parent := range sortedKeys(m) {
		order = order[:0]
		for i := range m[parent].v {
			order = append(order, &m[parent].v[i])
		}
		slices.SortFunc(order, func(a, b *T) int { return strings.Compare(id(*a), id(*b)) })
		for _, c := range order {
			out = append(out, elem(parent, c))
		}
	}
	return out
}

// childCount is how many children the lists of m hold.
func childCount[T any](m map[string]observed[[]T]) int {
	n := 0
	for _, o := range m {
		n += len(o.v)
	}
	return n
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
