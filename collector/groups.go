package collector

import "github.com/clouddb/clouddb_exporter/fleet"

// Group is one list of a snapshot's resources and the collect function that
// emits their metrics. Groups let an encoder render a snapshot in parts and
// keep the rendering of the parts that did not change (the exposition's
// chunks): a part of a list is a snapshot of its own, so the same collect
// function serves the whole and the part.
type Group struct {
	// Len returns the length of the list in s.
	Len func(s *fleet.Snapshot) int
	// Key returns the id of resource i of the list; lists are sorted by it.
	Key func(s *fleet.Snapshot, i int) Key
	// Part returns a snapshot that holds resources [i, j) of the list
	// only, sharing the snapshot's memory.
	Part func(s *fleet.Snapshot, i, j int) fleet.Snapshot
	// Collect emits the metrics of the list in s.
	Collect func(out *Sink, s *fleet.Snapshot)
	// Equal, when set, reports whether two parts emit the same metrics,
	// in place of reflect.DeepEqual.
	Equal func(a, b *fleet.Snapshot) bool
}

// Key is the id of a resource within its list: (service id, replica set
// id), (VPC id, peering id), or (id, "") for services and VPCs.
type Key [2]string

// Groups returns the groups, in the order the FleetCollector emits them.
// Together they emit every resource metric, and each family comes from one
// group only. The slice must not be modified.
func Groups() []Group { return groups }

// groups is every metric the collector emits, list by list. A new resource
// list gets a group here; a new metric of an existing list goes into that
// list's collect function.
var groups = []Group{
	{
		Len: func(s *fleet.Snapshot) int { return len(s.Services) },
		Key: func(s *fleet.Snapshot, i int) Key { return Key{s.Services[i].ServiceID} },
		Part: func(s *fleet.Snapshot, i, j int) fleet.Snapshot {
			return fleet.Snapshot{ProjectID: s.ProjectID, Services: s.Services[i:j:j]}
		},
		Collect: collectServices,
	},
	{
		Len: func(s *fleet.Snapshot) int { return len(s.ReplicaSets) },
		Key: func(s *fleet.Snapshot, i int) Key {
			return Key{s.ReplicaSets[i].ServiceID, s.ReplicaSets[i].ID}
		},
		Part: func(s *fleet.Snapshot, i, j int) fleet.Snapshot {
			return fleet.Snapshot{ProjectID: s.ProjectID, ReplicaSets: s.ReplicaSets[i:j:j]}
		},
		Collect: collectReplicaSets,
	},
	{
		Len: func(s *fleet.Snapshot) int { return len(s.VPCs) },
		Key: func(s *fleet.Snapshot, i int) Key { return Key{s.VPCs[i].ID} },
		Part: func(s *fleet.Snapshot, i, j int) fleet.Snapshot {
			return fleet.Snapshot{ProjectID: s.ProjectID, VPCs: s.VPCs[i:j:j]}
		},
		Collect: collectVPCs,
	},
	{
		Len: func(s *fleet.Snapshot) int { return len(s.Peerings) },
		Key: func(s *fleet.Snapshot, i int) Key { return Key{s.Peerings[i].VPCID, s.Peerings[i].ID} },
		Part: func(s *fleet.Snapshot, i, j int) fleet.Snapshot {
			return fleet.Snapshot{ProjectID: s.ProjectID, Peerings: s.Peerings[i:j:j]}
		},
		Collect: collectPeerings,
	},
	{
		// The credentials and the collection health: a few series, one
		// part, rendered again after every poll (durations and the
		// snapshot's time change each time).
		Len: func(*fleet.Snapshot) int { return 1 },
		Key: func(*fleet.Snapshot, int) Key { return Key{} },
		Part: func(s *fleet.Snapshot, _, _ int) fleet.Snapshot {
			return fleet.Snapshot{ProjectID: s.ProjectID, ProjectName: s.ProjectName, Taken: s.Taken, Read: s.Read, Auth: s.Auth, Parts: s.Parts, Access: s.Access}
		},
		Collect: func(out *Sink, s *fleet.Snapshot) {
			collectAuth(out, s)
			collectHealth(out, s)
		},
	},
	{
		// The opt-in usage collector's series, in chunks like the lists
		// above, keyed by service and series: one read changes the chunks
		// of what it read, and a fleet's usage is never rendered in one
		// piece.
		Len: func(s *fleet.Snapshot) int {
			if s.Usage == nil {
				return 0
			}
			return len(s.Usage.Series)
		},
		Key: func(s *fleet.Snapshot, i int) Key {
			return Key{s.Usage.Series[i].ServiceID, s.Usage.Series[i].Suffix}
		},
		Part: func(s *fleet.Snapshot, i, j int) fleet.Snapshot {
			return fleet.Snapshot{ProjectID: s.ProjectID, Usage: &fleet.Usage{Series: s.Usage.Series[i:j:j], Timestamps: s.Usage.Timestamps}}
		},
		Collect: collectUsage,
		Equal:   equalUsage,
	},
	{
		// The opt-in log collector's counts, in chunks, keyed by service
		// and severity.
		Len: func(s *fleet.Snapshot) int {
			if s.Logs == nil {
				return 0
			}
			return len(s.Logs.Counts)
		},
		Key: func(s *fleet.Snapshot, i int) Key { return Key{s.Logs.Counts[i].ServiceID, s.Logs.Counts[i].Severity} },
		Part: func(s *fleet.Snapshot, i, j int) fleet.Snapshot {
			return fleet.Snapshot{ProjectID: s.ProjectID, Logs: &fleet.Logs{Counts: s.Logs.Counts[i:j:j]}}
		},
		Collect: collectLogs,
		Equal:   equalLogs,
	},
	{
		// The opt-in collectors' project series: one part, with none of
		// the samples, so that comparing it costs nothing.
		Len: func(s *fleet.Snapshot) int {
			if s.Usage == nil && s.Logs == nil {
				return 0
			}
			return 1
		},
		Key: func(*fleet.Snapshot, int) Key { return Key{} },
		Part: func(s *fleet.Snapshot, _, _ int) fleet.Snapshot {
			part := fleet.Snapshot{ProjectID: s.ProjectID}
			if s.Usage != nil {
				part.Usage = &fleet.Usage{JobsOverLimit: s.Usage.JobsOverLimit, RefreshPeriod: s.Usage.RefreshPeriod}
			}
			if s.Logs != nil {
				part.Logs = &fleet.Logs{PagesTruncated: s.Logs.PagesTruncated, Late: s.Logs.Late, SkippedSeconds: s.Logs.SkippedSeconds, EntriesSkipped: s.Logs.EntriesSkipped}
			}
			return part
		},
		Collect: func(out *Sink, s *fleet.Snapshot) {
			collectUsageTotals(out, s)
			collectLogsTotals(out, s)
		},
	},
}
