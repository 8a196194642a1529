// Package sd serves the fleet as Prometheus HTTP service discovery target
// groups, so data-plane exporters and probers need no hand-kept lists.
package sd

import (
	"encoding/json"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// TargetGroup is one entry of the http_sd_configs format.
type TargetGroup struct {
	Targets []string          `json:"targets"`
	Labels  map[string]string `json:"labels"`
}

const metaPrefix = "__meta_clouddb_"

// Kinds of targets.
const (
	KindServices    = "services"
	KindReplicaSets = "replica-sets"
	KindPoolers     = "poolers"
)

// Handler serves one kind's targets from the latest snapshots. With no target
// and a fleet unknown it answers 503, on which Prometheus keeps its targets.
// Requests share one rendering, so clients that never read pin only that.
func Handler(kind string, snapshots func() []*fleet.Snapshot) http.Handler {
	var (
		mu     sync.Mutex
		key    []*fleet.Snapshot
		cached *rendering
	)
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		snaps := snapshots()
		mu.Lock()
		r := cached
		if r == nil || !slices.Equal(key, snaps) {
			r = render(kind, snaps)
			key, cached = snaps, r
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(r.body)))
		w.WriteHeader(r.status)
		_, _ = w.Write(r.body)
	})
}

type rendering struct {
	status int
	body   []byte
}

func render(kind string, snaps []*fleet.Snapshot) *rendering {
	groups := Targets(kind, snaps)
	if len(groups) == 0 && !fleetsKnown(kind, snaps) {
		body, _ := json.Marshal(map[string]string{
			"code":    "FLEET_UNKNOWN",
			"message": "no target is known: the fleet has not been listed successfully yet, or its last known state was dropped (--collect.max-staleness) while listing fails",
		})
		return &rendering{status: http.StatusServiceUnavailable, body: append(body, '\n')}
	}
	body, _ := json.Marshal(groups)
	return &rendering{status: http.StatusOK, body: append(body, '\n')}
}

// fleetsKnown: the source lists last succeeded, or still hold resources.
func fleetsKnown(kind string, snaps []*fleet.Snapshot) bool {
	if len(snaps) == 0 {
		return false
	}
	for _, snap := range snaps {
		if !partKnown(snap, fleet.PartServices, len(snap.Services)) {
			return false
		}
		if kind != KindServices && !partKnown(snap, fleet.PartReplicaSets, len(snap.ReplicaSets)) {
			return false
		}
	}
	return true
}

func partKnown(snap *fleet.Snapshot, name string, n int) bool {
	if n > 0 {
		return true
	}
	for _, part := range snap.Parts {
		if part.Name == name {
			return part.Success
		}
	}
	return false
}

// Targets returns one group per endpoint of kind; resources without one are skipped.
func Targets(kind string, snaps []*fleet.Snapshot) []TargetGroup {
	groups := []TargetGroup{}
	add := func(ep *apiclient.Endpoint, labels map[string]string) {
		if ep == nil || ep.Host == "" {
			return
		}
		groups = append(groups, TargetGroup{
			Targets: []string{net.JoinHostPort(ep.Host, strconv.FormatInt(int64(ep.Port), 10))},
			Labels:  labels,
		})
	}
	for _, snap := range snaps {
		services := make(map[string]*fleet.Service, len(snap.Services))
		for i := range snap.Services {
			services[snap.Services[i].ServiceID] = &snap.Services[i]
		}
		serviceLabels := func(svc *fleet.Service, target string) map[string]string {
			return map[string]string{
				metaPrefix + "project_id":   snap.ProjectID,
				metaPrefix + "service_id":   svc.ServiceID,
				metaPrefix + "service_name": svc.Name,
				metaPrefix + "service_type": svc.ServiceType,
				metaPrefix + "region_code":  svc.RegionCode,
				metaPrefix + "environment":  svc.Environment(),
				metaPrefix + "status":       svc.Status,
				metaPrefix + "target_kind":  target,
			}
		}
		switch kind {
		case KindServices:
			for i := range snap.Services {
				add(snap.Services[i].Endpoint, serviceLabels(&snap.Services[i], "service"))
			}
		case KindPoolers:
			for i := range snap.Services {
				svc := &snap.Services[i]
				if svc.ConnectionPooler != nil {
					add(svc.ConnectionPooler.Endpoint, serviceLabels(svc, "service_pooler"))
				}
			}
			for _, rs := range snap.ReplicaSets {
				if rs.ConnectionPooler != nil && services[rs.ServiceID] != nil {
					add(rs.ConnectionPooler.Endpoint, replicaSetLabels(serviceLabels(services[rs.ServiceID], "replica_set_pooler"), rs))
				}
			}
		case KindReplicaSets:
			for _, rs := range snap.ReplicaSets {
				if svc := services[rs.ServiceID]; svc != nil {
					add(rs.Endpoint, replicaSetLabels(serviceLabels(svc, "replica_set"), rs))
				}
			}
		}
	}
	return groups
}

func replicaSetLabels(labels map[string]string, rs fleet.ReplicaSet) map[string]string {
	labels[metaPrefix+"replica_set_id"] = rs.ID
	labels[metaPrefix+"replica_set_name"] = rs.Name
	labels[metaPrefix+"environment"] = rs.Environment()
	labels[metaPrefix+"status"] = rs.Status
	return labels
}
