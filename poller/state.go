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

// observed: staleness is the time from the last good read to a failed
// refresh, so a value merely not yet refreshed (budget) is not stale.
type observed[T any] struct {
	v      T
	at     time.Time
	failed time.Time
}

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

// state is touched only under Poller.mu. Snapshots point at its values: a
// kept value is never modified, only replaced.
type state struct {
	logger *slog.Logger
	access fleet.Access
	// owns: other shards' ids are never kept, so never fetched or exported.
	owns     func(id string) bool
	services map[string]observed[*apiclient.Service]
	vpcs     map[string]observed[apiclient.VPC]
	lists    []childLister // see newChildLists
	auth     *observed[apiclient.AuthInfo]
	parts    map[string]fleet.PartHealth
	// read is the end of the last recorded successful call (a 404 included).
	read      time.Time
	budget    fleet.Budget
	dataParts map[string]func(*fleet.Snapshot)
	// Keyed by statusKey; dropped holds the undecoded fields last logged.
	statuses      map[string]statusSeen
	peeringErrors map[string]string
	dropped       map[string]string
	// attempted orders the round-robin; notBefore holds Retry-After deferrals.
	attempted map[string]time.Time
	notBefore map[string]time.Time
	// inlineReplicaSets: services whose answer carries read_replica_sets
	// (revision 2026) need no listReplicaSets.
	inlineReplicaSets map[string]bool
	// The dirty flags mark lists changed since the latest snapshot; the
	// others are shared with it, so a cycle's many snapshots cost what changed.
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

// observeStatus returns since when the resource has had status, logging a change.
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

// observeDropped logs a bad record once, not once per cycle.
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

// unique keeps the first entry of each id, so no series is exported twice
// and the choice does not depend on how many copies follow.
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

// parentsFailed fails the children of a failed parent list: they missed their refresh.
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

// setVPCs drops duplicates and other shards' ids.
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

// pruneStale: for users who prefer no data to old data; 0 means never.
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

// snapshot shares the lists that did not change with the last one.
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
	for _, name := range slices.Concat(fleet.Parts, sortedKeys(s.dataParts)) {
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

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
