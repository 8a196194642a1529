package collector

import (
	"slices"
	"sync"

	"github.com/clouddb/clouddb_exporter/fleet"
)

// Group is one list of a snapshot and the collect function of its metrics. A part
// of a list is a snapshot of its own: an encoder re-renders only changed parts.
type Group struct {
	Len func(s *fleet.Snapshot) int
	// Key returns the id of resource i; lists are sorted by it.
	Key func(s *fleet.Snapshot, i int) Key
	// Part returns a snapshot of resources [i, j) only, sharing s's memory.
	Part    func(s *fleet.Snapshot, i, j int) fleet.Snapshot
	Collect func(out *Sink, s *fleet.Snapshot)
	// Equal, when set, reports whether two parts emit the same metrics,
	// in place of reflect.DeepEqual.
	Equal func(a, b *fleet.Snapshot) bool
	// Weight, when set, says how many resources item i stands for in a
	// chunk's size (1 when not set).
	Weight func(s *fleet.Snapshot, i int) int
}

// Key is a resource's id within its list: (parent id, id), or (id, "").
type Key [2]string

// Groups returns the state's groups, then the registered parts'; each family
// comes from one group only. The slice must not be modified.
func Groups() []Group { return allGroups() }

var allGroups = sync.OnceValue(func() []Group {
	allDescs() // closes the registry
	return slices.Concat(stateGroups, registry.groups)
})

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
		// Credentials and health: one part, re-rendered after every poll.
		Len: func(*fleet.Snapshot) int { return 1 },
		Key: func(*fleet.Snapshot, int) Key { return Key{} },
		Part: func(s *fleet.Snapshot, _, _ int) fleet.Snapshot {
			return fleet.Snapshot{ProjectID: s.ProjectID, ProjectName: s.ProjectName, Taken: s.Taken, Read: s.Read, Auth: s.Auth, Parts: s.Parts, Access: s.Access,
				ClockSkew: s.ClockSkew, ClockSkewKnown: s.ClockSkewKnown}
		},
		Collect: func(out *Sink, s *fleet.Snapshot) {
			collectAuth(out, s)
			collectHealth(out, s)
		},
	},
}

var registry struct {
	descs  []*Desc
	groups []Group
	// closed once Groups or Families was read: a later part would be missed.
	closed bool
}

// RegisterPart adds a data-plane part's families and groups; part is its name (the
// collector label of its health), "" for families derived from each snapshot as
// it is published (the cost estimates), which have no health of their own. Call
// it from an init: the exposition reads the groups once, at its start.
func RegisterPart(part string, descs []*Desc, groups ...Group) {
	if registry.closed {
		panic("collector: RegisterPart after the groups were read")
	}
	for _, d := range descs {
		d.part = part
	}
	registry.descs = append(registry.descs, descs...)
	registry.groups = append(registry.groups, groups...)
}

// DataGroup is the group of a data part's project series; part returns the data
// without its lists (nil if none), so that comparing parts costs nothing.
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

// ListGroup is the group of a data part's list of E in D, chunked like the
// state's lists; part returns a D holding the list l only.
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
