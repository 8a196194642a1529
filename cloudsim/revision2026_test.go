package cloudsim

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

func create2026(e *env, name, cpu, mem string, extra map[string]any) apiclient.Service {
	e.t.Helper()
	body := map[string]any{"name": name, "addons": []string{"time-series"}, "cpu_millis": cpu, "memory_gbs": mem}
	for k, v := range extra {
		body[k] = v
	}
	return decode[apiclient.Service](e.t, e.must(http.StatusAccepted, "POST", servicesPath, body))
}

func TestRevision2026ServiceAnswer(t *testing.T) {
	e := newEnvRev(t, Timings{}, Revision2026)
	svc := create2026(e, "main", "1000", "4", map[string]any{"replica_count": 2, "environment_tag": "PROD"})
	raw := e.must(http.StatusOK, "GET", servicesPath+"/"+svc.ServiceID, nil)
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	if _, ok := fields["paused"]; ok {
		t.Errorf("revision 2026 sent paused: %s", raw)
	}
	for _, f := range []string{"metrics", "ha_replicas", "read_replica_sets"} {
		if _, ok := fields[f]; !ok {
			t.Errorf("revision 2026 answer lacks %s: %s", f, raw)
		}
	}
	got := e.getService(svc.ServiceID)
	if got.ServiceType != apiclient.ServiceTypeTimescaleDB || got.Environment() != apiclient.EnvironmentProd ||
		got.HAReplicas == nil || size(got.HAReplicas.ReplicaCount) != 2 || len(got.Resources) != 3 ||
		got.Metrics == nil || size(got.Metrics.MilliCPU) <= 0 || size(got.Metrics.MilliCPU) > 1000 ||
		size(got.Metrics.MemoryMB) <= 0 || size(got.Metrics.StorageMB) <= 0 || got.ReadReplicaSets == nil {
		t.Fatalf("service: %s", raw)
	}
	// Usage moves with time; storage grows.
	storage := size(got.Metrics.StorageMB)
	e.clock.Advance(48 * time.Hour)
	if later := e.getService(svc.ServiceID); size(later.Metrics.StorageMB) <= storage {
		t.Errorf("storage did not grow in 48h: %d then %d", storage, size(later.Metrics.StorageMB))
	}

	// Inline replica sets are the listReplicaSets objects.
	e.must(http.StatusAccepted, "POST", servicesPath+"/"+svc.ServiceID+"/replicaSets",
		map[string]any{"name": "r", "cpu_millis": 1000, "memory_gbs": 4, "nodes": 1})
	if got := e.getService(svc.ServiceID); len(got.ReadReplicaSets) != 1 || got.ReadReplicaSets[0].Name != "r" {
		t.Errorf("inline replica sets: %+v", got.ReadReplicaSets)
	}
}

func TestRevision2026SharedService(t *testing.T) {
	e := newEnvRev(t, Timings{}, Revision2026)
	svc := create2026(e, "free", "shared", "shared", nil)
	raw := e.must(http.StatusOK, "GET", servicesPath+"/"+svc.ServiceID, nil)
	if !strings.Contains(string(raw), `"cpu_millis":null,"memory_gbs":null`) {
		t.Errorf("shared service sizes are not null: %s", raw)
	}
	if got := decode[apiclient.Service](t, raw); !got.Shared() || got.Metrics == nil || size(got.Metrics.MilliCPU) > sharedMilliCPU {
		t.Errorf("shared service: %s", raw)
	}
	e.mustError(http.StatusBadRequest, "INVALID_REQUEST", "POST", servicesPath,
		map[string]any{"name": "x", "cpu_millis": "shared", "memory_gbs": "4"})
}

func TestRevision2026StartStopRename(t *testing.T) {
	e := newEnvRev(t, Timings{Configure: time.Minute}, Revision2026)
	id := create2026(e, "main", "1000", "4", nil).ServiceID
	one := servicesPath + "/" + id
	e.mustError(http.StatusConflict, "CONFLICT", "POST", one+"/start", nil)

	if got := decode[apiclient.Service](t, e.must(http.StatusAccepted, "POST", one+"/stop", nil)); got.Status != apiclient.ServicePausing {
		t.Errorf("stop answered status %s, want PAUSING", got.Status)
	}
	if got := e.getService(id); !got.IsPaused() || got.Metrics == nil || got.Metrics.MilliCPU != nil {
		t.Errorf("pausing service: status %s metrics %+v", got.Status, got.Metrics)
	}
	e.clock.Advance(2 * time.Minute)
	if got := e.getService(id); got.Status != apiclient.ServicePaused {
		t.Errorf("status %s, want PAUSED", got.Status)
	}
	e.mustError(http.StatusConflict, "CONFLICT", "POST", one+"/resize", map[string]any{"cpu_millis": "2000", "memory_gbs": "8"})
	if got := decode[apiclient.Service](t, e.must(http.StatusAccepted, "POST", one+"/start", nil)); got.Status != apiclient.ServiceResuming {
		t.Errorf("start answered status %s, want RESUMING", got.Status)
	}
	e.clock.Advance(2 * time.Minute)
	if got := e.getService(id); got.Status != apiclient.ServiceReady {
		t.Errorf("status %s, want READY", got.Status)
	}
	if got := decode[apiclient.Service](t, e.must(http.StatusOK, "POST", one+"/rename", map[string]any{"name": "renamed"})); got.Name != "renamed" {
		t.Errorf("rename answered %q", got.Name)
	}
	e.mustError(http.StatusBadRequest, "INVALID_REQUEST", "POST", one+"/rename", map[string]any{"name": ""})
}

func TestRevision2026Fork(t *testing.T) {
	e := newEnvRev(t, Timings{}, Revision2026)
	src := create2026(e, "main", "1000", "4", nil)
	one := servicesPath + "/" + src.ServiceID
	eb := e.mustError(http.StatusBadRequest, "INVALID_REQUEST", "POST", one+"/forkService", map[string]any{"name": "f"})
	if !strings.Contains(string(eb.Details), "fork_strategy") {
		t.Errorf("error details %s do not name fork_strategy", eb.Details)
	}
	e.mustError(http.StatusBadRequest, "INVALID_REQUEST", "POST", one+"/forkService", map[string]any{"fork_strategy": "PITR"})
	e.mustError(http.StatusBadRequest, "INVALID_REQUEST", "POST", one+"/forkService",
		map[string]any{"fork_strategy": "PITR", "target_time": e.clock.Now().Add(time.Hour).Format(time.RFC3339)})
	e.clock.Advance(time.Hour)
	fork := decode[apiclient.Service](t, e.must(http.StatusAccepted, "POST", one+"/forkService",
		map[string]any{"fork_strategy": "PITR", "target_time": e.clock.Now().Add(-30 * time.Minute).Format(time.RFC3339)}))
	if fork.ForkedFrom == nil || fork.ForkedFrom.ServiceID != src.ServiceID || fork.Name != "main-fork" ||
		size(fork.Resources[0].Spec.CPUMillis) != 1000 || size(fork.HAReplicas.ReplicaCount) != 0 {
		t.Fatalf("fork answer: %+v", fork)
	}
	// Every later answer carries the lineage, not only the fork's.
	if got := e.getService(fork.ServiceID); got.ForkedFrom == nil || got.ForkedFrom.ProjectID != testProject {
		t.Errorf("forked_from not kept: %+v", got.ForkedFrom)
	}
	e.must(http.StatusAccepted, "POST", one+"/forkService", map[string]any{"fork_strategy": "NOW", "name": "n", "cpu_millis": "shared", "memory_gbs": "shared"})
}

func TestRevision2026SetHA(t *testing.T) {
	e := newEnvRev(t, Timings{}, Revision2026)
	one := servicesPath + "/" + create2026(e, "main", "1000", "4", nil).ServiceID
	e.mustError(http.StatusBadRequest, "INVALID_REQUEST", "POST", one+"/setHA", map[string]any{})
	e.mustError(http.StatusBadRequest, "INVALID_REQUEST", "POST", one+"/setHA", map[string]any{"replica_count": 1, "sync_replica_count": 2})
	e.must(http.StatusAccepted, "POST", one+"/setHA", map[string]any{"replica_count": 2, "sync_replica_count": 1})
	got := decode[apiclient.Service](t, e.must(http.StatusOK, "GET", one, nil))
	if size(got.HAReplicas.ReplicaCount) != 2 || size(got.HAReplicas.SyncReplicaCount) != 1 {
		t.Errorf("ha_replicas %+v", got.HAReplicas)
	}
}

func TestRevision2026NetworkAndAuth(t *testing.T) {
	e := newEnvRev(t, Timings{}, Revision2026)
	vpcID := e.createVPC("net")
	if strings.Trim(vpcID, "0123456789") != "" {
		t.Errorf("VPC id %q is not a numeric string", vpcID)
	}
	if strings.Trim(e.createPeering(vpcID), "0123456789") != "" {
		t.Error("peering id is not a numeric string")
	}
	msg := decode[apiclient.Message](t, e.must(http.StatusOK, "POST", "/v1/projects/"+testProject+"/vpcs/"+vpcID+"/rename", map[string]any{"name": "n2"}))
	if msg.Message == "" {
		t.Error("renameVPC answered no message")
	}
	svc := create2026(e, "main", "1000", "4", nil)
	e.mustError(http.StatusBadRequest, "INVALID_REQUEST", "POST", servicesPath+"/"+svc.ServiceID+"/attachToVPC", map[string]any{"vpc_id": "vpc-1"})
	e.must(http.StatusAccepted, "POST", servicesPath+"/"+svc.ServiceID+"/attachToVPC", map[string]any{"vpc_id": vpcID})
	if got := e.getService(svc.ServiceID); got.VPCAddress() == nil || got.VPCAddress().VPCID != vpcID {
		t.Errorf("vpc_endpoint %+v", got.VPCEndpoint)
	}

	// Basic works on /auth/info and the answer is in snake case.
	raw := e.must(http.StatusOK, "GET", "/v1/auth/info", nil)
	if info := decode[apiclient.AuthInfo](t, raw); info.APIKey == nil || info.APIKey.Name != rwCred.Name {
		t.Errorf("auth info: %s", raw)
	}
	e.must(http.StatusOK, "GET", "/v1/auth/info", nil, bearer(rwCred.APIKey))
	if got := decode[[]apiclient.Project](t, e.must(http.StatusOK, "GET", "/v1/projects", nil)); len(got) != 1 || got[0].ID != testProject {
		t.Errorf("key pair's projects: %+v", got)
	}
}

func TestRevision2026UserProjects(t *testing.T) {
	user := Credential{AccessKey: "u", SecretKey: "us", Projects: []string{"pa", "pb"}}
	s := New(Options{Credentials: []Credential{user}})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	e := &env{t: t, sim: s, srv: srv}
	got := decode[[]apiclient.Project](t, e.must(http.StatusOK, "GET", "/v1/projects", nil, as(user)))
	if len(got) != 2 || got[0].ID != "pa" || got[1].ID != "pb" || got[0].Name == "" {
		t.Errorf("user's projects: %+v", got)
	}
	if info := decode[apiclient.AuthInfo](t, e.must(http.StatusOK, "GET", "/v1/auth/info", nil, as(user))); info.Type != "oauth" || info.OAuth == nil {
		t.Errorf("user's auth info: %+v", info)
	}
	e.must(http.StatusOK, "GET", "/v1/projects/pb/services", nil, as(user))
	e.mustError(http.StatusForbidden, "FORBIDDEN", "GET", "/v1/projects/pc/services", nil, as(user))
}

func TestRevision2024HasNoNewOperations(t *testing.T) {
	e := newEnv(t, Timings{})
	e.mustError(http.StatusNotFound, "NOT_FOUND", "GET", "/v1/projects", nil)
	id := e.createService("main")
	e.mustError(http.StatusNotFound, "NOT_FOUND", "POST", servicesPath+"/"+id+"/stop", nil)
	eb := e.mustError(http.StatusBadRequest, "INVALID_REQUEST", "POST", servicesPath, map[string]any{})
	if eb.Details != nil {
		t.Errorf("revision 2024 error carries details: %s", eb.Details)
	}
	e.mustError(http.StatusUnauthorized, "UNAUTHORIZED", "GET", "/v1/auth/info", nil)
}
