package poller

import (
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// observed is a value with the time of its last good read and of a failed
// refresh since. Staleness is the time between the two: a value merely old
// because nothing tried to refresh it yet (a call budget spread over several
// cycles) is not stale.
type observed[T any] struct {
	v      T
	at     time.Time
	failed time.Time
}

// stale: 0 means never.
func (o observed[T]) stale(maxStaleness time.Duration) bool {
	return maxStaleness > 0 && !o.failed.IsZero() && o.failed.Sub(o.at) > maxStaleness
}

func failed[T any](m map[string]observed[T], key string, now time.Time) {
	if o, ok := m[key]; ok {
		o.failed = now
		m[key] = o
	}
}

func failedAll[T any](m map[string]observed[T], now time.Time) {
	for key := range m {
		failed(m, key, now)
	}
}

type statusSeen struct {
	status string
	since  time.Time
}

// state is the mutable knowledge of one project, touched only under
// Poller.mu. Snapshots point at its values: a kept value is never modified,
// only replaced.
type state struct {
	logger *slog.Logger
	// access is what the last services list said (see noteAccess).
	access fleet.Access
	// owns tells whether a service or VPC id belongs to this process's
	// shard: the others are never kept, so that they are neither fetched,
	// followed nor exported.
	owns     func(id string) bool
	services map[string]observed[*apiclient.Service]
	vpcs     map[string]observed[apiclient.VPC]
	lists    []childLister // see newChildLists
	auth     *observed[apiclient.AuthInfo]
	parts    map[string]fleet.PartHealth
	// read is the end of the last API call that succeeded (a 404 of a
	// resource that went away included) and whose answer was recorded;
	// zero before the first (see fleet.Snapshot.Read).
	read   time.Time
	budget fleet.Budget
	// dataParts: see Poller.PublishPart.
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
	// dirtyServices and dirtyVPCs (and each per-parent list's dirty) mark
	// the lists that changed since last, the latest snapshot; the others
	// are shared with it (nothing published is ever modified), so that the
	// many snapshots of a cycle cost what changed rather than the whole
	// fleet each. A value read again unchanged keeps its old copy, so that
	// the new one is garbage at once.
	dirtyServices, dirtyVPCs bool
	last                     *fleet.Snapshot
}

func newState(logger *slog.Logger, owns func(id string) bool) *state {
	return &state{
		logger:        logger,
		owns:          owns,
		services:      map[string]observed[*apiclient.Service]{},
		vpcs:          map[string]observed[apiclient.VPC]{},
		lists:         newChildLists(),
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

// parentsFailed fails the children of a failed parent list too: they
// missed their refresh. It returns each per-parent list's parent's error.
func (s *state) parentsFailed(parentErr map[string]error, now time.Time) map[string]error {
	out := map[string]error{}
	for _, l := range s.lists {
		if out[l.part()] = parentErr[l.parentPart()]; out[l.part()] != nil {
			l.failedAll(now)
		}
	}
	return out
}

func (s *state) removeChildrenOf(parentPart, parentID string) {
	for _, l := range s.lists {
		if l.parentPart() == parentPart {
			l.removeParent(s, parentID)
			delete(s.notBefore, childKey(l.part(), parentID))
		}
	}
}

// setVPCs makes the state hold the VPCs of a complete list, less
// duplicates and other shards' ids.
func (s *state) setVPCs(list []apiclient.VPC, now time.Time) {
	seen := make(map[string]bool, len(list))
	for _, vpc := range unique(s.logger, list, func(vpc apiclient.VPC) string { return vpc.ID }, "VPCs") {
		seen[vpc.ID] = s.putVPC(vpc, now) || s.owns(vpc.ID)
	}
	for id := range s.vpcs {
		if !seen[id] {
			s.removeVPC(id)
		}
	}
}

func (s *state) putVPC(vpc apiclient.VPC, now time.Time) bool {
	if !s.owns(vpc.ID) {
		return false
	}
	old, ok := s.vpcs[vpc.ID]
	changed := !ok || old.v != vpc
	if changed {
		s.dirtyVPCs = true
	} else {
		vpc = old.v
	}
	s.vpcs[vpc.ID] = observed[apiclient.VPC]{v: vpc, at: now}
	return changed
}

func (s *state) removeVPC(id string) {
	if _, ok := s.vpcs[id]; ok {
		s.logger.Info("Resource gone", "vpc_id", id)
	}
	delete(s.vpcs, id)
	s.dirtyVPCs = true
	s.removeChildrenOf(fleet.PartVPCs, id)
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
	for id, o := range s.vpcs {
		if o.stale(maxStaleness) {
			s.logger.Warn("Dropping stale data", "vpc_id", id, "last_read", o.at)
			s.removeVPC(id)
		}
	}
	for _, l := range s.lists {
		l.prune(s, maxStaleness)
	}
	if s.auth != nil && s.auth.stale(maxStaleness) {
		s.logger.Warn("Dropping stale data", "auth_info_read", s.auth.at)
		s.auth = nil
	}
}

// snapshot shares with the last one the lists that did not change (see
// state.dirtyServices).
func (s *state) snapshot(projectID string, now time.Time, maxStaleness time.Duration) *fleet.Snapshot {
	s.pruneStale(maxStaleness)
	prev, all := s.last, s.last == nil
	if all {
		prev = &fleet.Snapshot{}
	}
	snap := &fleet.Snapshot{
		ProjectID: projectID,
		Taken:     now,
		Read:      s.read,
		Services:  prev.Services,
		VPCs:      prev.VPCs,
	}
	if all || s.dirtyServices {
		snap.Services = make([]fleet.Service, 0, len(s.services))
		for _, id := range sortedKeys(s.services) {
			snap.Services = append(snap.Services, fleet.Service{
				Service:     s.services[id].v,
				StatusSince: s.statuses[statusKey("service", id)].since,
			})
		}
	}
	if all || s.dirtyVPCs {
		snap.VPCs = make([]apiclient.VPC, 0, len(s.vpcs))
		for _, id := range sortedKeys(s.vpcs) {
			snap.VPCs = append(snap.VPCs, s.vpcs[id].v)
		}
	}
	for _, l := range s.lists {
		l.fill(s, snap, prev, all)
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
	s.dirtyServices, s.dirtyVPCs = false, false
	s.last = snap
	return snap
}

func (s *state) isDirty() bool {
	return s.dirtyServices || s.dirtyVPCs || slices.ContainsFunc(s.lists, childLister.isDirty)
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
