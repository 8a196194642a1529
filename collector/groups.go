package collector

import (
	"slices"
	"sync"

	"github.com/clouddb/clouddb_exporter/fleet"
)

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
}

// Key is the id of a resource within its list: (service id, replica set
// id), (VPC id, peering id), or (id, "") for services and VPCs.
type Key [2]string

// Groups returns the groups, in the order the FleetCollector emits them:
// the state's lists, then the data-plane parts' groups in the order their
// files registered them. Together they emit every resource metric, and
// each family comes from one group only. The slice must not be modified.
func Groups() []Group { return allGroups() }

var allGroups = sync.OnceValue(func() []Group {
	registry.closed = true
	return slices.Concat(stateGroups, registry.groups)
})

// stateGroups is every metric of the state the poller reads, list by list.
// A new resource list gets a group here; a new metric of an existing list
// goes into that list's collect function; a data-plane part registers its
// groups from its own file (RegisterPart).
var stateGroups = []Group{
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
}

// registry holds what the data-plane parts' files registered at init.
var registry struct {
	descs  []*Desc
	groups []Group
	// closed is set once Groups or Families has been read: a later
	// registration would be missed by the exposition.
	closed bool
}

// RegisterPart adds a data-plane part's families and the groups that emit
// them (its lists in chunks, ListGroup; its project series, DataGroup),
// from the init of the part's file: this package's (usage, logs) or the
// reader's own. The exposition reads the groups once, at its start.
func RegisterPart(descs []*Desc, groups ...Group) {
	if registry.closed {
		panic("collector: RegisterPart after the groups were read")
	}
	registry.descs = append(registry.descs, descs...)
	registry.groups = append(registry.groups, groups...)
}

// DataGroup is the group of a data part's project series: one part, with
// none of the samples, so that comparing it costs nothing. part returns
// the data without its lists, nil when s has none.
func DataGroup(name string, part func(s *fleet.Snapshot) any, collect func(out *Sink, s *fleet.Snapshot)) Group {
	return Group{
		Len: func(s *fleet.Snapshot) int {
			if s.Data[name] == nil {
				return 0
			}
			return 1
		},
		Key: func(*fleet.Snapshot, int) Key { return Key{} },
		Part: func(s *fleet.Snapshot, _, _ int) fleet.Snapshot {
			return fleet.Snapshot{ProjectID: s.ProjectID, Data: map[string]any{name: part(s)}}
		},
		Collect: collect,
	}
}

// ListGroup is the group of a data part's list (D's list of E), in chunks
// like the state's lists: one read changes the chunks of what it read.
// part returns data holding the list l only.
func ListGroup[D, E any](name string, list func(*D) []E, key func(*E) Key, part func(d *D, l []E) *D, collect func(out *Sink, s *fleet.Snapshot)) Group {
	items := func(s *fleet.Snapshot) []E {
		if d := fleet.DataOf[D](s, name); d != nil {
			return list(d)
		}
		return nil
	}
	return Group{
		Len: func(s *fleet.Snapshot) int { return len(items(s)) },
		Key: func(s *fleet.Snapshot, i int) Key { return key(&items(s)[i]) },
		Part: func(s *fleet.Snapshot, i, j int) fleet.Snapshot {
			return fleet.Snapshot{ProjectID: s.ProjectID, Data: map[string]any{name: part(fleet.DataOf[D](s, name), items(s)[i:j:j])}}
		},
		Collect: collect,
	}
}
