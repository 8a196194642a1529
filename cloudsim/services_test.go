package cloudsim

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

func TestServiceOperations(t *testing.T) {
	e := newEnv(t, Timings{})

	// Create: 202, READY at once with zero timings, initial_password.
	raw := e.must(http.StatusAccepted, "POST", servicesPath, createBody("main", "time-series"))
	svc := decode[apiclient.Service](t, raw)
	if svc.Status != apiclient.ServiceReady || svc.ServiceType != apiclient.ServiceTypeTimeSeries ||
		svc.InitialPassword == "" || svc.Endpoint == nil || svc.Metadata.Environment != apiclient.EnvironmentProd ||
		svc.ProjectID != testProject || svc.Name != "main" || svc.RegionCode != "us-east-1" || len(svc.Resources) != 1 ||
		size(svc.Resources[0].Spec.CPUMillis) != 1000 || size(svc.Resources[0].Spec.MemoryGBs) != 4 || svc.ConnectionPooler != nil {
		t.Fatalf("create response: %s", raw)
	}
	if len(svc.ServiceID) != 10 || strings.Trim(svc.ServiceID, idAlphabet) != "" {
		t.Errorf("service id %q is not 10 lowercase alphanumerics", svc.ServiceID)
	}
	if !strings.Contains(string(raw), `"created":"2025-03-01T12:00:00.`) {
		t.Errorf("created lacks fractional seconds: %s", raw)
	}
	id := svc.ServiceID
	one := servicesPath + "/" + id

	// Get: no initial_password, no forked_from.
	raw = e.must(http.StatusOK, "GET", one, nil)
	if k := keys(t, raw); k["initial_password"] || k["forked_from"] || !k["endpoint"] || !k["resources"] {
		t.Errorf("get response fields: %s", raw)
	}

	// List: an array holding the service.
	list := decode[[]apiclient.Service](t, e.must(http.StatusOK, "GET", servicesPath, nil))
	if len(list) != 1 || list[0].ServiceID != id || list[0].InitialPassword != "" {
		t.Errorf("list: %+v", list)
	}

	// Resize: 202 without a body; the spec changes.
	if raw := e.must(http.StatusAccepted, "POST", one+"/resize", map[string]any{"cpu_millis": 2000, "memory_gbs": 8}); len(raw) != 0 {
		t.Errorf("resize body %q, want none", raw)
	}
	if got := e.getService(id).Resources[0].Spec; size(got.CPUMillis) != 2000 || size(got.MemoryGBs) != 8 {
		t.Errorf("spec after resize: %+v", got)
	}

	// setHA: HA replicas are extra resources with the same spec.
	e.must(http.StatusAccepted, "POST", one+"/setHA", map[string]any{"replica_count": 2})
	got := e.getService(id)
	if len(got.Resources) != 3 || size(got.Resources[2].Spec.CPUMillis) != 2000 {
		t.Errorf("resources after setHA 2: %+v", got.Resources)
	}
	e.must(http.StatusAccepted, "POST", one+"/setHA", map[string]any{"replica_count": 0})
	if n := len(e.getService(id).Resources); n != 1 {
		t.Errorf("%d resources after setHA 0, want 1", n)
	}

	// updatePassword: 204 without a body.
	if raw := e.must(http.StatusNoContent, "POST", one+"/updatePassword", map[string]any{"password": "s3cret"}); len(raw) != 0 {
		t.Errorf("updatePassword body %q", raw)
	}

	// setEnvironment and poolers: 200 with a message.
	for _, tc := range []struct {
		path  string
		body  any
		check func(apiclient.Service) bool
	}{
		{"/setEnvironment", map[string]any{"environment": "DEV"}, func(s apiclient.Service) bool { return s.Environment() == "DEV" }},
		{"/enablePooler", nil, func(s apiclient.Service) bool {
			return s.ConnectionPooler != nil && s.ConnectionPooler.Endpoint.Port == poolerPort
		}},
		{"/disablePooler", nil, func(s apiclient.Service) bool { return s.ConnectionPooler == nil }},
	} {
		msg := decode[apiclient.Message](t, e.must(http.StatusOK, "POST", one+tc.path, tc.body))
		if msg.Message == "" {
			t.Errorf("%s: empty message", tc.path)
		}
		if s := e.getService(id); !tc.check(s) {
			t.Errorf("%s: service after: %+v", tc.path, s)
		}
	}

	// Fork: 202, a new service with forked_from and initial_password.
	raw = e.must(http.StatusAccepted, "POST", one+"/forkService",
		map[string]any{"name": "fork", "region_code": "eu-west-1", "cpu_millis": 500, "memory_gbs": 2})
	fork := decode[apiclient.Service](t, raw)
	if fork.ServiceID == id || fork.ForkedFrom == nil || fork.ForkedFrom.ServiceID != id || fork.ForkedFrom.ProjectID != testProject ||
		fork.InitialPassword == "" || fork.ServiceType != apiclient.ServiceTypeTimeSeries || fork.Name != "fork" ||
		fork.Environment() != "DEV" || fork.Status != apiclient.ServiceReady {
		t.Errorf("fork response: %s", raw)
	}
	if k := keys(t, e.must(http.StatusOK, "GET", servicesPath+"/"+fork.ServiceID, nil)); k["forked_from"] || k["initial_password"] {
		t.Error("get of a fork shows forked_from or initial_password")
	}

	// Attach and detach.
	v := e.createVPC("v")
	e.must(http.StatusAccepted, "POST", one+"/attachToVPC", map[string]any{"vpc_id": v})
	e.must(http.StatusAccepted, "POST", one+"/detachFromVPC", map[string]any{"vpc_id": v})

	// Delete: 202 without a body, then 404 with zero timings.
	if raw := e.must(http.StatusAccepted, "DELETE", one, nil); len(raw) != 0 {
		t.Errorf("delete body %q", raw)
	}
	e.mustError(http.StatusNotFound, "NOT_FOUND", "GET", one, nil)
	if list := decode[[]apiclient.Service](t, e.must(http.StatusOK, "GET", servicesPath, nil)); len(list) != 1 {
		t.Errorf("list after delete has %d services, want the fork only", len(list))
	}
}

func TestServiceTypeFromAddons(t *testing.T) {
	e := newEnv(t, Timings{})
	for _, tc := range []struct {
		addons []string
		want   string
	}{
		{[]string{}, apiclient.ServiceTypePostgres},
		{[]string{"time-series"}, apiclient.ServiceTypeTimeSeries},
		{[]string{"ai"}, apiclient.ServiceTypeVector},
		{[]string{"time-series", "ai"}, apiclient.ServiceTypeTimeSeries},
		{[]string{"ai", "time-series"}, apiclient.ServiceTypeTimeSeries},
	} {
		if got := e.getService(e.createService("s", tc.addons...)).ServiceType; got != tc.want {
			t.Errorf("addons %v: type %s, want %s", tc.addons, got, tc.want)
		}
	}
	// An extra service_type is tolerated and does not override the addons.
	body := createBody("s", "ai")
	body["service_type"] = "TIMESERIESDB"
	body["unknown_field"] = map[string]any{"x": 1}
	if svc := decode[apiclient.Service](t, e.must(http.StatusAccepted, "POST", servicesPath, body)); svc.ServiceType != apiclient.ServiceTypeVector {
		t.Errorf("type %s with extra service_type, want VECTOR", svc.ServiceType)
	}
}

func TestServiceValidation(t *testing.T) {
	e := newEnv(t, Timings{})
	id := e.createService("a")
	one := servicesPath + "/" + id
	with := func(field string, value any) map[string]any {
		b := createBody("n")
		if value == nil {
			delete(b, field)
		} else {
			b[field] = value
		}
		return b
	}
	tests := []struct {
		name, path string
		body       any
		field      string
	}{
		{"malformed JSON", servicesPath, `{"name":`, "JSON"},
		{"empty body", servicesPath, "", "body"},
		{"array body", servicesPath, `[]`, "object"},
		{"null body", servicesPath, `null`, "object"},
		{"trailing garbage", servicesPath, `{"name":"a"} x`, "JSON"},
		{"missing name", servicesPath, with("name", nil), "name"},
		{"null name", servicesPath, `{"name":null,"addons":[],"region_code":"r","cpu_millis":1,"memory_gbs":1}`, "name"},
		{"blank name", servicesPath, with("name", "   "), "name"},
		{"long name", servicesPath, with("name", strings.Repeat("x", 129)), "name"},
		{"name not a string", servicesPath, with("name", 5), "name"},
		{"missing addons", servicesPath, with("addons", nil), "addons"},
		{"addons not an array", servicesPath, with("addons", "ai"), "addons"},
		{"unknown addon", servicesPath, with("addons", []string{"gpu"}), "addons"},
		{"repeated addon", servicesPath, with("addons", []string{"ai", "ai"}), "addons"},
		{"missing region", servicesPath, with("region_code", nil), "region_code"},
		{"cpu as a non-digit string", servicesPath, with("cpu_millis", "1k"), "cpu_millis"},
		{"cpu shared in the first revision", servicesPath, with("cpu_millis", "shared"), "cpu_millis"},
		{"cpu zero", servicesPath, with("cpu_millis", 0), "cpu_millis"},
		{"cpu negative", servicesPath, with("cpu_millis", -5), "cpu_millis"},
		{"cpu fraction", servicesPath, with("cpu_millis", 1.5), "cpu_millis"},
		{"cpu huge", servicesPath, `{"name":"a","addons":[],"region_code":"r","cpu_millis":99999999999999999999999,"memory_gbs":1}`, "cpu_millis"},
		{"missing memory", servicesPath, with("memory_gbs", nil), "memory_gbs"},
		{"too large", servicesPath, `{"name":"` + strings.Repeat("x", maxBodyBytes) + `"}`, "1 MiB"},
		{"resize missing memory", one + "/resize", map[string]any{"cpu_millis": 1000}, "memory_gbs"},
		{"resize bool cpu", one + "/resize", map[string]any{"cpu_millis": true, "memory_gbs": 1}, "cpu_millis"},
		{"password empty", one + "/updatePassword", map[string]any{"password": ""}, "password"},
		{"password missing", one + "/updatePassword", map[string]any{}, "password"},
		{"environment lower case", one + "/setEnvironment", map[string]any{"environment": "prod"}, "environment"},
		{"environment missing", one + "/setEnvironment", `{}`, "environment"},
		{"replica_count 6", one + "/setHA", map[string]any{"replica_count": 6}, "replica_count"},
		{"replica_count -1", one + "/setHA", map[string]any{"replica_count": -1}, "replica_count"},
		{"replica_count missing", one + "/setHA", map[string]any{}, "replica_count"},
		{"fork missing region", one + "/forkService", map[string]any{"name": "f", "cpu_millis": 1, "memory_gbs": 1}, "region_code"},
		{"attach missing vpc_id", one + "/attachToVPC", map[string]any{}, "vpc_id"},
		{"detach vpc_id number", one + "/detachFromVPC", map[string]any{"vpc_id": 3}, "vpc_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.t = t
			eb := e.mustError(http.StatusBadRequest, "INVALID_REQUEST", "POST", tt.path, tt.body)
			if !strings.Contains(eb.Message, tt.field) {
				t.Errorf("message %q does not name %q", eb.Message, tt.field)
			}
		})
	}
}

func TestServiceNotFound(t *testing.T) {
	e := newEnv(t, Timings{})
	one := servicesPath + "/nosuchsvc0"
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"GET", one, nil},
		{"DELETE", one, nil},
		{"POST", one + "/resize", map[string]any{"cpu_millis": 1, "memory_gbs": 1}},
		{"POST", one + "/updatePassword", map[string]any{"password": "x"}},
		{"POST", one + "/setEnvironment", map[string]any{"environment": "DEV"}},
		{"POST", one + "/setHA", map[string]any{"replica_count": 1}},
		{"POST", one + "/enablePooler", nil},
		{"POST", one + "/disablePooler", nil},
		{"POST", one + "/forkService", map[string]any{"name": "f", "region_code": "r", "cpu_millis": 1, "memory_gbs": 1}},
		{"POST", one + "/attachToVPC", map[string]any{"vpc_id": "x"}},
		{"POST", one + "/detachFromVPC", map[string]any{"vpc_id": "x"}},
		{"GET", one + "/replicaSets", nil},
	} {
		e.mustError(http.StatusNotFound, "NOT_FOUND", tc.method, tc.path, tc.body)
	}
	// An unknown VPC on attach is 404 too.
	id := e.createService("a")
	e.mustError(http.StatusNotFound, "NOT_FOUND", "POST", servicesPath+"/"+id+"/attachToVPC", map[string]any{"vpc_id": "nosuchvpc0"})
}

func TestServiceLifecycle(t *testing.T) {
	timings := Timings{Provision: time.Minute, Configure: 2 * time.Minute, Delete: 3 * time.Minute}
	e := newEnv(t, timings)
	svc := decode[apiclient.Service](t, e.must(http.StatusAccepted, "POST", servicesPath, createBody("a")))
	id := svc.ServiceID
	one := servicesPath + "/" + id
	if svc.Status != apiclient.ServiceQueued || svc.Endpoint != nil {
		t.Fatalf("new service: status %s endpoint %v, want QUEUED without endpoint", svc.Status, svc.Endpoint)
	}
	step := func(d time.Duration, want string) {
		t.Helper()
		e.clock.Advance(d)
		if got := e.getService(id); got.Status != want {
			t.Fatalf("status %s, want %s", got.Status, want)
		}
	}
	// Transitions refuse changes while the service is provisioning.
	e.mustError(http.StatusConflict, "CONFLICT", "POST", one+"/resize", map[string]any{"cpu_millis": 2, "memory_gbs": 2})
	e.mustError(http.StatusConflict, "CONFLICT", "POST", servicesPath+"/"+id+"/replicaSets",
		map[string]any{"name": "r", "cpu_millis": 1, "memory_gbs": 1, "nodes": 1})
	step(59*time.Second, apiclient.ServiceQueued)
	step(time.Second, apiclient.ServiceConfiguring)
	if e.getService(id).Endpoint == nil {
		t.Error("no endpoint once CONFIGURING")
	}
	for _, p := range []string{"/setHA", "/forkService", "/attachToVPC", "/detachFromVPC"} {
		body := map[string]any{"replica_count": 1, "name": "f", "region_code": "r", "cpu_millis": 1, "memory_gbs": 1, "vpc_id": e.createVPC("v" + p)}
		e.mustError(http.StatusConflict, "CONFLICT", "POST", one+p, body)
	}
	// Writes without a transition are accepted during one.
	e.must(http.StatusOK, "POST", one+"/enablePooler", nil)
	step(time.Minute, apiclient.ServiceReady)

	e.must(http.StatusAccepted, "POST", one+"/resize", map[string]any{"cpu_millis": 2, "memory_gbs": 2})
	step(0, apiclient.ServiceConfiguring)
	step(2*time.Minute, apiclient.ServiceReady)

	// Delete: DELETING, every write but delete is a conflict, then gone.
	e.must(http.StatusAccepted, "DELETE", one, nil)
	step(0, apiclient.ServiceDeleting)
	e.mustError(http.StatusConflict, "CONFLICT", "POST", one+"/enablePooler", nil)
	e.mustError(http.StatusConflict, "CONFLICT", "POST", one+"/setEnvironment", map[string]any{"environment": "DEV"})
	e.mustError(http.StatusConflict, "CONFLICT", "POST", one+"/updatePassword", map[string]any{"password": "x"})
	e.clock.Advance(2 * time.Minute)
	e.must(http.StatusAccepted, "DELETE", one, nil) // accepted, does not restart the clock
	e.clock.Advance(time.Minute)
	e.mustError(http.StatusNotFound, "NOT_FOUND", "GET", one, nil)
	if list := decode[[]apiclient.Service](t, e.must(http.StatusOK, "GET", servicesPath, nil)); len(list) != 0 {
		t.Errorf("list after deletion: %d services", len(list))
	}
}

func TestServiceConflicts(t *testing.T) {
	e := newEnv(t, Timings{})
	id := e.createService("a")
	one := servicesPath + "/" + id
	v1, v2 := e.createVPC("v1"), e.createVPC("v2")

	e.mustError(http.StatusConflict, "CONFLICT", "POST", one+"/detachFromVPC", map[string]any{"vpc_id": v1})
	e.must(http.StatusAccepted, "POST", one+"/attachToVPC", map[string]any{"vpc_id": v1})
	e.mustError(http.StatusConflict, "CONFLICT", "POST", one+"/attachToVPC", map[string]any{"vpc_id": v1})
	e.mustError(http.StatusConflict, "CONFLICT", "POST", one+"/attachToVPC", map[string]any{"vpc_id": v2})
	e.mustError(http.StatusConflict, "CONFLICT", "POST", one+"/detachFromVPC", map[string]any{"vpc_id": v2})
	// A VPC with an attached service cannot be deleted.
	e.mustError(http.StatusConflict, "CONFLICT", "DELETE", "/v1/projects/p1/vpcs/"+v1, nil)

	// PAUSED does not accept changes; a forced status is visible and
	// sticks until a write.
	if err := e.sim.SetServiceStatus(testProject, id, apiclient.ServicePaused); err != nil {
		t.Fatal(err)
	}
	if got := e.getService(id); got.Status != apiclient.ServicePaused || !got.IsPaused() {
		t.Errorf("forced PAUSED: status %s", got.Status)
	}
	e.mustError(http.StatusConflict, "CONFLICT", "POST", one+"/resize", map[string]any{"cpu_millis": 1, "memory_gbs": 1})
	// UNSTABLE accepts changes, and the write ends the forced status.
	if err := e.sim.SetServiceStatus(testProject, id, apiclient.ServiceUnstable); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Hour)
	if got := e.getService(id).Status; got != apiclient.ServiceUnstable {
		t.Errorf("forced status did not stick: %s", got)
	}
	e.must(http.StatusAccepted, "POST", one+"/resize", map[string]any{"cpu_millis": 1, "memory_gbs": 1})
	if got := e.getService(id).Status; got != apiclient.ServiceReady {
		t.Errorf("status after a write on a forced service: %s, want READY", got)
	}
	if err := e.sim.SetServiceStatus(testProject, "nosuchsvc0", "READY"); err == nil {
		t.Error("SetServiceStatus on an unknown service: no error")
	}
}

// size reads a nullable size, -1 for null.
func size(p *apiclient.Int) int64 {
	if p == nil {
		return -1
	}
	return int64(*p)
}
