package poller

import (
	"reflect"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// TestEqualIsDeepEqual: equal, which decides whether a value read again
// changed, agrees with reflect.DeepEqual on every kind of field the API's
// types hold.
func TestEqualIsDeepEqual(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n, m, msg := apiclient.Int(1), apiclient.Int(2), "bad"
	base := func() apiclient.Service {
		one := apiclient.Int(1) // a fresh pointer, equal to n
		return apiclient.Service{
			ServiceID: "s1", Created: apiclient.Time{Time: at},
			Resources:       []apiclient.Resource{{ID: "r1", Spec: &apiclient.ResourceSpec{}}},
			Metrics:         &apiclient.ServiceMetrics{MemoryMB: &one},
			ReadReplicaSets: []apiclient.ReplicaSet{{ID: "rs1", Nodes: 1, Endpoint: &apiclient.Endpoint{Host: "h"}}},
			Dropped:         []apiclient.FieldError{},
		}
	}
	for name, change := range map[string]func(*apiclient.Service){
		"same":                 func(*apiclient.Service) {},
		"string":               func(s *apiclient.Service) { s.Name = "x" },
		"secret":               func(s *apiclient.Service) { s.InitialPassword = "pw" },
		"time":                 func(s *apiclient.Service) { s.Created.Time = at.Add(time.Nanosecond) },
		"time zone":            func(s *apiclient.Service) { s.Created.Time = at.In(time.FixedZone("X", 0)) },
		"time zone again":      func(s *apiclient.Service) { s.Created.Time = at.In(time.FixedZone("X", 0)).In(time.UTC) },
		"nil pointer":          func(s *apiclient.Service) { s.Metrics = nil },
		"pointer to pointer":   func(s *apiclient.Service) { s.Metrics.MemoryMB = &m },
		"same pointee":         func(s *apiclient.Service) { s.Metrics.MemoryMB = &n },
		"nil inner pointer":    func(s *apiclient.Service) { s.Metrics.MemoryMB = nil },
		"new pointer":          func(s *apiclient.Service) { s.HAReplicas = &apiclient.HAReplicas{} },
		"bool pointer":         func(s *apiclient.Service) { s.Paused = new(bool) },
		"nil slice":            func(s *apiclient.Service) { s.Resources = nil },
		"empty slice":          func(s *apiclient.Service) { s.Resources = []apiclient.Resource{} },
		"longer slice":         func(s *apiclient.Service) { s.Resources = append(s.Resources, apiclient.Resource{}) },
		"element":              func(s *apiclient.Service) { s.Resources[0].ID = "r2" },
		"element's pointer":    func(s *apiclient.Service) { s.Resources[0].Spec = nil },
		"nested int":           func(s *apiclient.Service) { s.ReadReplicaSets[0].Nodes = 2 },
		"nested pointer field": func(s *apiclient.Service) { s.ReadReplicaSets[0].Endpoint.Port = 1 },
		"nil dropped":          func(s *apiclient.Service) { s.Dropped = nil },
		"dropped":              func(s *apiclient.Service) { s.Dropped = []apiclient.FieldError{{Field: "f", Err: msg}} },
	} {
		a, b := base(), base()
		change(&b)
		if got, want := deepEqual(a, b), reflect.DeepEqual(a, b); got != want {
			t.Errorf("%s: equal %v, reflect.DeepEqual %v", name, got, want)
		}
		if got, want := deepEqual(&a, &b), reflect.DeepEqual(&a, &b); got != want {
			t.Errorf("%s, by pointer: equal %v, reflect.DeepEqual %v", name, got, want)
		}
		if !deepEqual(b, b) || !deepEqual(&b, &b) {
			t.Errorf("%s: a value differs from itself", name)
		}
	}
}
