package sd

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

func snapshot() *fleet.Snapshot {
	ep := func(host string, port int64) *apiclient.Endpoint {
		return &apiclient.Endpoint{Host: host, Port: apiclient.Int(port)}
	}
	return &fleet.Snapshot{
		ProjectID: "p1",
		Services: []fleet.Service{
			{Service: &apiclient.Service{ServiceID: "s1", Name: "orders", ServiceType: "POSTGRES", RegionCode: "eu-west-1", Status: "READY",
				Metadata: &apiclient.Metadata{Environment: "PROD"}, Endpoint: ep("s1.example", 5432),
				ConnectionPooler: &apiclient.ConnectionPooler{Endpoint: ep("s1-pool.example", 6432)}}},
			// Still QUEUED: no endpoint, no target.
			{Service: &apiclient.Service{ServiceID: "s2", Status: "QUEUED"}},
		},
		ReplicaSets: []fleet.ReplicaSet{
			{ServiceID: "s1", ReplicaSet: &apiclient.ReplicaSet{ID: "r1", Name: "read", Status: "active", Endpoint: ep("r1.example", 5433),
				Metadata: &apiclient.Metadata{Environment: "DEV"}, ConnectionPooler: &apiclient.ConnectionPooler{Endpoint: ep("r1-pool.example", 6433)}}},
			{ServiceID: "s1", ReplicaSet: &apiclient.ReplicaSet{ID: "r2", Status: "creating"}},
		},
	}
}

func TestTargets(t *testing.T) {
	snaps := []*fleet.Snapshot{snapshot()}
	services := Targets(KindServices, snaps)
	if len(services) != 1 || services[0].Targets[0] != "s1.example:5432" {
		t.Fatalf("services: %+v", services)
	}
	want := map[string]string{
		"__meta_clouddb_project_id": "p1", "__meta_clouddb_service_id": "s1", "__meta_clouddb_service_name": "orders",
		"__meta_clouddb_service_type": "POSTGRES", "__meta_clouddb_region_code": "eu-west-1", "__meta_clouddb_environment": "PROD",
		"__meta_clouddb_status": "READY", "__meta_clouddb_target_kind": "service",
	}
	for k, v := range want {
		if services[0].Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, services[0].Labels[k], v)
		}
	}

	rs := Targets(KindReplicaSets, snaps)
	if len(rs) != 1 || rs[0].Targets[0] != "r1.example:5433" || rs[0].Labels["__meta_clouddb_replica_set_id"] != "r1" ||
		rs[0].Labels["__meta_clouddb_environment"] != "DEV" || rs[0].Labels["__meta_clouddb_service_name"] != "orders" {
		t.Fatalf("replica sets: %+v", rs)
	}

	poolers := Targets(KindPoolers, snaps)
	if len(poolers) != 2 || poolers[0].Targets[0] != "s1-pool.example:6432" || poolers[0].Labels["__meta_clouddb_target_kind"] != "service_pooler" ||
		poolers[1].Targets[0] != "r1-pool.example:6433" || poolers[1].Labels["__meta_clouddb_target_kind"] != "replica_set_pooler" {
		t.Fatalf("poolers: %+v", poolers)
	}
}

// TestHandlerNeverEmptyBecauseOfAFailure: an empty list is only answered
// for a fleet that was listed and is empty; an unknown fleet gets a 503,
// on which Prometheus keeps its previous targets.
func TestHandlerNeverEmptyBecauseOfAFailure(t *testing.T) {
	listed := func(ok bool) []fleet.PartHealth {
		return []fleet.PartHealth{{Name: fleet.PartServices, Success: ok}, {Name: fleet.PartReplicaSets, Success: ok}}
	}
	failingWithServices := &fleet.Snapshot{ProjectID: "p", Parts: listed(false), Services: []fleet.Service{{
		Service: &apiclient.Service{ServiceID: "s", Endpoint: &apiclient.Endpoint{Host: "h", Port: 5432}},
	}}}
	servicesOnly := []fleet.PartHealth{{Name: fleet.PartServices, Success: true}, {Name: fleet.PartReplicaSets, Success: false}}
	tests := []struct {
		name   string
		kind   string
		snaps  []*fleet.Snapshot
		status int
		body   string
	}{
		{"replica sets never listed", KindReplicaSets, []*fleet.Snapshot{{ProjectID: "p", Parts: servicesOnly}}, http.StatusServiceUnavailable, ""},
		{"services listed, replica sets failing", KindServices, []*fleet.Snapshot{{ProjectID: "p", Parts: servicesOnly}}, http.StatusOK, "[]\n"},
		{"no snapshot yet", KindServices, nil, http.StatusServiceUnavailable, ""},
		{"never listed", KindServices, []*fleet.Snapshot{{ProjectID: "p", Parts: listed(false)}}, http.StatusServiceUnavailable, ""},
		{"listed and empty", KindServices, []*fleet.Snapshot{{ProjectID: "p", Parts: listed(true)}}, http.StatusOK, "[]\n"},
		{"one project unknown", KindServices, []*fleet.Snapshot{{ProjectID: "p", Parts: listed(true)}, {ProjectID: "q", Parts: listed(false)}}, http.StatusServiceUnavailable, ""},
		{"outage with last known targets", KindServices, []*fleet.Snapshot{failingWithServices}, http.StatusOK, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			Handler(tt.kind, func() []*fleet.Snapshot { return tt.snaps }).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/sd/services", nil))
			if rec.Code != tt.status || rec.Header().Get("Content-Type") != "application/json" {
				t.Fatalf("status %d %q, want %d", rec.Code, rec.Body.String(), tt.status)
			}
			if tt.body != "" && rec.Body.String() != tt.body {
				t.Errorf("body %q, want %q", rec.Body.String(), tt.body)
			}
			if tt.status == http.StatusOK && tt.body == "" && !strings.Contains(rec.Body.String(), `"h:5432"`) {
				t.Errorf("last known target not served: %s", rec.Body.String())
			}
			if tt.status != http.StatusOK && !strings.Contains(rec.Body.String(), `"code":"FLEET_UNKNOWN"`) {
				t.Errorf("error body %s", rec.Body.String())
			}
		})
	}
}

// TestHandlerRendersOncePerSnapshot: requests share the rendering of the
// snapshots they see (an answer built per request let every slow reader
// pin one of its own; docs/security.md); a new snapshot renders anew.
func TestHandlerRendersOncePerSnapshot(t *testing.T) {
	first := snapshot()
	current := []*fleet.Snapshot{first}
	h := Handler(KindServices, func() []*fleet.Snapshot { return current })
	get := func() string {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/sd/services", nil))
		if rec.Code != http.StatusOK || rec.Header().Get("Content-Length") == "" {
			t.Fatalf("status %d, Content-Length %q", rec.Code, rec.Header().Get("Content-Length"))
		}
		return rec.Body.String()
	}
	before := get()
	// Snapshots are never modified once published; this one is, to tell
	// a cached rendering from a new one.
	first.Services[0].Name = "renamed"
	if got := get(); got != before {
		t.Fatalf("the same snapshot was rendered again:\n%s", got)
	}
	second := snapshot()
	second.Services[0].Name = "renamed"
	current = []*fleet.Snapshot{second}
	if got := get(); !strings.Contains(got, `"renamed"`) {
		t.Fatalf("a new snapshot was not rendered:\n%s", got)
	}
}
