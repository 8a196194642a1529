package poller

import (
	"bytes"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// A complete list replaces the services, and the VPCs, the same way: ids
// of other shards and repeated ids are left out (the first copy kept, one
// warning), an id the list no longer has is forgotten with what hangs off
// it (replica sets, peerings), and a list read again unchanged changes
// nothing.
func TestReplaceList(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	owns := func(id string) bool { return !strings.HasPrefix(id, "other-") }
	for _, kind := range []struct {
		name string
		// set replaces the list with resources of these ids (name is the
		// resource's name), child gives each one child.
		set   func(s *state, ids, names []string)
		ids   func(s *state) []string
		names func(s *state) map[string]string
		child func(s *state, id string)
		kids  func(s *state) []string
	}{
		{
			name: "services",
			set: func(s *state, ids, names []string) {
				var list []apiclient.Service
				for i, id := range ids {
					list = append(list, apiclient.Service{ServiceID: id, Name: names[i]})
				}
				s.setServices(list, now)
			},
			ids: func(s *state) []string { return slices.Sorted(maps.Keys(s.services)) },
			names: func(s *state) map[string]string {
				m := map[string]string{}
				for id, o := range s.services {
					m[id] = o.v.Name
				}
				return m
			},
			child: func(s *state, id string) {
				s.replicaSets().set(s, id, []apiclient.ReplicaSet{{ID: "rs-" + id}}, now)
			},
			kids: func(s *state) []string { return slices.Sorted(maps.Keys(s.replicaSets().byParent)) },
		},
		{
			name: "VPCs",
			set: func(s *state, ids, names []string) {
				var list []apiclient.VPC
				for i, id := range ids {
					list = append(list, apiclient.VPC{ID: id, Name: names[i]})
				}
				s.setVPCs(list, now)
			},
			ids: func(s *state) []string { return slices.Sorted(maps.Keys(s.vpcs)) },
			names: func(s *state) map[string]string {
				m := map[string]string{}
				for id, o := range s.vpcs {
					m[id] = o.v.Name
				}
				return m
			},
			child: func(s *state, id string) {
				peerings(s).set(s, id, []apiclient.Peering{{ID: "p-" + id}}, now)
			},
			kids: func(s *state) []string { return slices.Sorted(maps.Keys(peerings(s).byParent)) },
		},
	} {
		t.Run(kind.name, func(t *testing.T) {
			var logs bytes.Buffer
			s := newState(slog.New(slog.NewTextHandler(&logs, nil)), owns)
			kind.set(s, []string{"a", "b", "other-1", "a", "c"}, []string{"first", "b", "x", "second", "c"})
			if got, want := kind.ids(s), []string{"a", "b", "c"}; !slices.Equal(got, want) {
				t.Fatalf("ids %v, want %v", got, want)
			}
			if got := kind.names(s)["a"]; got != "first" {
				t.Errorf("a repeated id kept %q, want the first copy", got)
			}
			if n := strings.Count(logs.String(), "Duplicate ids"); n != 1 {
				t.Errorf("%d duplicate warnings, want 1:\n%s", n, logs.String())
			}
			kind.child(s, "b")
			kind.child(s, "c")

			s.snapshot("p", now, 0)
			kind.set(s, []string{"a", "b", "c"}, []string{"first", "b", "c"})
			if isDirty(s) {
				t.Errorf("the same list again marked the state dirty")
			}

			kind.set(s, []string{"c", "d"}, []string{"c", "d"})
			if got, want := kind.ids(s), []string{"c", "d"}; !slices.Equal(got, want) {
				t.Errorf("after a shorter list, ids %v, want %v", got, want)
			}
			if got, want := kind.kids(s), []string{"c"}; !slices.Equal(got, want) {
				t.Errorf("children of %v kept, want only those of %v", got, want)
			}
			if !strings.Contains(logs.String(), "Resource gone") {
				t.Errorf("no removal logged:\n%s", logs.String())
			}
		})
	}
}

// setServices replaces the services with a complete list.
func (s *state) setServices(list []apiclient.Service, now time.Time) {
	r := s.readServices()
	for _, svc := range list {
		r.put(&svc, now)
	}
	r.complete()
}

func peerings(s *state) *childList[apiclient.Peering, fleet.Peering] {
	return s.childList(fleet.PartPeerings).(*childList[apiclient.Peering, fleet.Peering])
}

// isDirty reports whether the state changed since its last snapshot; a child list's
// dirty flag is read by reflection, its type being generic.
func isDirty(s *state) bool {
	return s.dirtyServices || s.dirtyVPCs || slices.ContainsFunc(s.lists, func(l childLister) bool {
		return reflect.ValueOf(l).Elem().FieldByName("dirty").Bool()
	})
}
