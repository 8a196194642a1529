package dataplane

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/gate"
)

var errBoom = &apiclient.APIError{StatusCode: 500, Code: "INTERNAL_ERROR", Message: "boom"}
var errNotFound = &apiclient.APIError{StatusCode: 404, Code: "NOT_FOUND", Message: "not found"}

// fakeHost is a poller as the readers see it: a list of services, a state
// gate, the state's call counts, and the snapshots the readers publish.
type fakeHost struct {
	mu       sync.Mutex
	services []fleet.Service
	parts    map[string]fleet.PartHealth
	fills    map[string]func(*fleet.Snapshot)
	// published are the snapshots of every PublishPart, in order.
	published       []*fleet.Snapshot
	planned, needed int
	ready           chan struct{}
	// skew is the API's clock minus the exporter's, when not zero.
	skew time.Duration

	// state is held while the fake's state calls run (enter, leave).
	state gate.Gate
}

// newFakeHost returns a host with n READY services svc00, svc01…
func newFakeHost(n int) *fakeHost {
	h := &fakeHost{parts: map[string]fleet.PartHealth{}, fills: map[string]func(*fleet.Snapshot){},
		planned: 2, needed: 2, ready: make(chan struct{})}
	close(h.ready)
	for i := range n {
		id := fmt.Sprintf("svc%02d", i)
		h.services = append(h.services, fleet.Service{Service: &apiclient.Service{ServiceID: id, Name: id, Status: apiclient.ServiceReady}})
	}
	return h
}

func (h *fakeHost) ProjectID() string      { return "p1" }
func (h *fakeHost) Ready() <-chan struct{} { return h.ready }

func (h *fakeHost) StateCalls() (int, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.planned, h.needed
}

// setServices replaces the services; fn gets a copy it may change.
func (h *fakeHost) setServices(fn func([]fleet.Service) []fleet.Service) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var list []fleet.Service
	for _, s := range h.services {
		svc := *s.Service
		list = append(list, fleet.Service{Service: &svc})
	}
	list = fn(list)
	slices.SortFunc(list, func(a, b fleet.Service) int { return strings.Compare(a.ServiceID, b.ServiceID) })
	h.services = list
}

// snapshotLocked builds a snapshot as the poller does: the services, the
// parts' health, then each part's data. h.mu must be held.
func (h *fakeHost) snapshotLocked() *fleet.Snapshot {
	snap := &fleet.Snapshot{ProjectID: "p1", Services: slices.Clone(h.services), ClockSkew: h.skew, ClockSkewKnown: h.skew != 0}
	for _, name := range slices.Sorted(maps.Keys(h.parts)) {
		snap.Parts = append(snap.Parts, h.parts[name])
	}
	for _, name := range slices.Sorted(maps.Keys(h.fills)) {
		h.fills[name](snap)
	}
	return snap
}

func (h *fakeHost) Snapshot() *fleet.Snapshot {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.snapshotLocked()
}

func (h *fakeHost) PublishPart(name string, health *fleet.PartHealth, fill func(*fleet.Snapshot)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.fills[name] = fill
	if health != nil {
		h.parts[name] = *health
	}
	h.published = append(h.published, h.snapshotLocked())
}

func (h *fakeHost) part(name string) (fleet.PartHealth, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	ph, ok := h.parts[name]
	return ph, ok
}

// enter holds the state gate, as a running cycle does, until leave.
func (h *fakeHost) enter() { h.state.Enter() }

func (h *fakeHost) leave() { h.state.Leave() }

func (h *fakeHost) WaitForState(ctx context.Context) error { return h.state.Wait(ctx) }

// withReader returns c with a reader's settings: a unit test's way to enable one.
func withReader[T any](c config.Collect, k config.ReaderKey[T], v T) config.Collect {
	*k.In(&c) = v
	return c
}
