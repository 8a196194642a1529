package poller

import (
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// servicesRead applies a services list as it is decoded, so that the list
// is never held whole beside the state. A list that fails part way keeps
// what it recorded (fresher than what it replaced) and removes nothing.
// Its methods need the state's lock.
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

// put keeps the first of an id, as unique does.
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

// putService records one service and reports whether anything changed.
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
		rsChanged = s.replicaSets().set(s, svc.ServiceID, inlineReplicaSets(svc), now)
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
	changed := !ok || !deepEqual(kept, svc)
	if changed {
		s.dirtyServices = true
		kept = svc
	}
	s.services[svc.ServiceID] = observed[*apiclient.Service]{v: kept, at: now}
	return changed || rsChanged
}

// reuseService makes svc, just read, share the kept value's memory wherever
// the two are equal, so that a list read again holds a fresh copy only of
// what changed and the rest of what was decoded is garbage at once.
func (s *state) reuseService(svc *apiclient.Service) {
	if old, ok := s.services[svc.ServiceID]; ok {
		shareEqualFields(svc, old.v)
	}
}

// shareEqualFields sets each field of *v that equals the same field of
// *kept to kept's, so that v shares kept's strings, slices and pointers.
func shareEqualFields[T any](v, kept *T) {
	rv, rk := reflect.ValueOf(v).Elem(), reflect.ValueOf(kept).Elem()
	for i := range rv.NumField() {
		if f, k := rv.Field(i), rk.Field(i); equal(f, k) {
			f.Set(k)
		}
	}
}

func deepEqual[T any](a, b T) bool {
	return equal(reflect.ValueOf(&a).Elem(), reflect.ValueOf(&b).Elem())
}

// equal is reflect.DeepEqual for the API's types (no maps, no cycles)
// without its costs, a tenth of a cycle's CPU at 10k services: boxing both
// values and making a map of the pointers visited at each call.
func equal(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.String:
		return a.String() == b.String()
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() || a.UnsafePointer() == b.UnsafePointer() {
			return a.UnsafePointer() == b.UnsafePointer()
		}
		return equal(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		for i := 0; i < a.Len() && a.UnsafePointer() != b.UnsafePointer(); i++ {
			if !equal(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := range a.NumField() {
			if !equal(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Array, reflect.Map, reflect.Interface, reflect.Func:
		return reflect.DeepEqual(a.Interface(), b.Interface())
	}
	return a.Equal(b)
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

func (s *state) removeService(id string) {
	if _, ok := s.services[id]; ok {
		s.logger.Info("Resource gone", "service_id", id)
	}
	delete(s.services, id)
	s.dirtyServices = true
	delete(s.inlineReplicaSets, id)
	s.forgetStatus(statusKey("service", id))
	s.removeChildrenOf(fleet.PartServices, id)
}
