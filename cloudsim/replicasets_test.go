package cloudsim

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

func rsBody() map[string]any {
	return map[string]any{"name": "read", "cpu_millis": 1000, "memory_gbs": 4, "nodes": 2}
}

func TestReplicaSetOperations(t *testing.T) {
	e := newEnv(t, Timings{ReplicaSet: time.Minute})
	svc := e.createService("a")
	base := servicesPath + "/" + svc + "/replicaSets"

	raw := e.must(http.StatusAccepted, "POST", base, rsBody())
	k := keys(t, raw)
	for _, f := range []string{"id", "name", "status", "nodes", "cpu_millis", "memory_gbs"} {
		if !k[f] {
			t.Errorf("create response lacks %s: %s", f, raw)
		}
	}
	if len(k) != 6 {
		t.Errorf("create response has other fields than the six of the spec: %s", raw)
	}
	rs := decode[apiclient.ReplicaSet](t, raw)
	if rs.Status != apiclient.ReplicaSetCreating || rs.Nodes != 2 {
		t.Errorf("create response: %s", raw)
	}
	one := base + "/" + rs.ID

	e.mustError(http.StatusConflict, "CONFLICT", "POST", one+"/enablePooler", nil)
	e.mustError(http.StatusConflict, "CONFLICT", "DELETE", one, nil)
	e.clock.Advance(time.Minute)

	list := decode[[]apiclient.ReplicaSet](t, e.must(http.StatusOK, "GET", base, nil))
	if len(list) != 1 || list[0].Status != apiclient.ReplicaSetActive || list[0].Endpoint == nil ||
		list[0].Environment() != apiclient.EnvironmentProd || list[0].ConnectionPooler != nil {
		t.Fatalf("list: %+v", list)
	}

	msg := decode[apiclient.Message](t, e.must(http.StatusAccepted, "POST", one+"/resize", map[string]any{"cpu_millis": 2000, "memory_gbs": 8, "nodes": 3}))
	if msg.Message == "" {
		t.Error("resize: empty message")
	}
	get := func() apiclient.ReplicaSet {
		t.Helper()
		l := decode[[]apiclient.ReplicaSet](t, e.must(http.StatusOK, "GET", base, nil))
		if len(l) != 1 {
			t.Fatalf("%d replica sets", len(l))
		}
		return l[0]
	}
	if got := get(); got.Status != apiclient.ReplicaSetResizing || got.Nodes != 3 || got.CPUMillis != 2000 || got.MemoryGBs != 8 {
		t.Errorf("after resize: %+v", got)
	}
	e.mustError(http.StatusConflict, "CONFLICT", "POST", one+"/setEnvironment", map[string]any{"environment": "DEV"})
	e.clock.Advance(time.Minute)

	for _, tc := range []struct {
		path  string
		body  any
		check func(apiclient.ReplicaSet) bool
	}{
		{"/enablePooler", nil, func(r apiclient.ReplicaSet) bool { return r.ConnectionPooler != nil }},
		{"/disablePooler", nil, func(r apiclient.ReplicaSet) bool { return r.ConnectionPooler == nil }},
		{"/setEnvironment", map[string]any{"environment": "DEV"}, func(r apiclient.ReplicaSet) bool { return r.Environment() == "DEV" }},
	} {
		if m := decode[apiclient.Message](t, e.must(http.StatusOK, "POST", one+tc.path, tc.body)); m.Message == "" {
			t.Errorf("%s: empty message", tc.path)
		}
		if got := get(); !tc.check(got) {
			t.Errorf("%s: after: %+v", tc.path, got)
		}
	}

	if raw := e.must(http.StatusAccepted, "DELETE", one, nil); len(raw) != 0 {
		t.Errorf("delete body %q", raw)
	}
	if got := get(); got.Status != apiclient.ReplicaSetDeleting {
		t.Errorf("after delete: %s", got.Status)
	}
	e.mustError(http.StatusConflict, "CONFLICT", "DELETE", one, nil)
	e.clock.Advance(time.Minute)
	if l := e.must(http.StatusOK, "GET", base, nil); string(l) != "[]" {
		t.Errorf("list after deletion: %s", l)
	}
	for _, tc := range []struct {
		method, path string
		body         any
	}{
		{"DELETE", one, nil},
		{"POST", one + "/resize", map[string]any{"cpu_millis": 1, "memory_gbs": 1, "nodes": 1}},
		{"POST", one + "/enablePooler", nil},
		{"POST", one + "/disablePooler", nil},
		{"POST", one + "/setEnvironment", map[string]any{"environment": "DEV"}},
		{"POST", servicesPath + "/nosuchsvc0/replicaSets", rsBody()},
	} {
		e.mustError(http.StatusNotFound, "NOT_FOUND", tc.method, tc.path, tc.body)
	}
}

func TestReplicaSetValidationAndConflicts(t *testing.T) {
	e := newEnv(t, Timings{})
	svc := e.createService("a")
	base := servicesPath + "/" + svc + "/replicaSets"
	rs := decode[apiclient.ReplicaSet](t, e.must(http.StatusAccepted, "POST", base, rsBody()))
	if rs.Status != apiclient.ReplicaSetActive {
		t.Errorf("zero timing create status %s, want active", rs.Status)
	}
	for _, tc := range []struct {
		path  string
		body  map[string]any
		field string
	}{
		{base, map[string]any{"name": "r", "cpu_millis": 1, "memory_gbs": 1}, "nodes"},
		{base, map[string]any{"name": "r", "cpu_millis": 1, "memory_gbs": 1, "nodes": 0}, "nodes"},
		{base, map[string]any{"name": "", "cpu_millis": 1, "memory_gbs": 1, "nodes": 1}, "name"},
		{base + "/" + rs.ID + "/resize", map[string]any{"cpu_millis": 1, "memory_gbs": "1GB", "nodes": 1}, "memory_gbs"},
		{base + "/" + rs.ID + "/resize", map[string]any{"cpu_millis": 1, "memory_gbs": 1}, "nodes"}, // the first revision requires nodes
		{base + "/" + rs.ID + "/setEnvironment", map[string]any{"environment": "STAGING"}, "environment"},
	} {
		if eb := e.mustError(http.StatusBadRequest, "INVALID_REQUEST", "POST", tc.path, tc.body); !strings.Contains(eb.Message, tc.field) {
			t.Errorf("%s: message %q does not name %s", tc.path, eb.Message, tc.field)
		}
	}
	// Forced replica set statuses are visible and block writes when
	// transitional.
	if err := e.sim.SetReplicaSetStatus(testProject, svc, rs.ID, apiclient.ReplicaSetResizing); err != nil {
		t.Fatal(err)
	}
	e.mustError(http.StatusConflict, "CONFLICT", "POST", base+"/"+rs.ID+"/enablePooler", nil)
	if err := e.sim.SetReplicaSetStatus(testProject, svc, rs.ID, apiclient.ReplicaSetError); err != nil {
		t.Fatal(err)
	}
	e.must(http.StatusOK, "POST", base+"/"+rs.ID+"/enablePooler", nil)
	// Replica sets need a READY service and die with it.
	if err := e.sim.SetServiceStatus(testProject, svc, apiclient.ServiceUnstable); err != nil {
		t.Fatal(err)
	}
	e.mustError(http.StatusConflict, "CONFLICT", "POST", base, rsBody())
	e.must(http.StatusAccepted, "DELETE", servicesPath+"/"+svc, nil)
	e.mustError(http.StatusNotFound, "NOT_FOUND", "GET", base, nil)
}

// TestResizeReplicaSet2026 sends revision 2026's body: resizeService's,
// digit strings and no nodes, which keeps the replica set's node count.
func TestResizeReplicaSet2026(t *testing.T) {
	e := newEnvRev(t, Timings{}, Revision2026)
	svc := create2026(e, "a", "1000", "4", nil).ServiceID
	base := servicesPath + "/" + svc + "/replicaSets"
	rs := decode[apiclient.ReplicaSet](t, e.must(http.StatusAccepted, "POST", base, rsBody()))
	e.must(http.StatusAccepted, "POST", base+"/"+rs.ID+"/resize", map[string]any{"cpu_millis": "2000", "memory_gbs": "8"})
	list := decode[[]apiclient.ReplicaSet](t, e.must(http.StatusOK, "GET", base, nil))
	if len(list) != 1 || int64(list[0].CPUMillis) != 2000 || int64(list[0].MemoryGBs) != 8 || int64(list[0].Nodes) != int64(rs.Nodes) {
		t.Fatalf("after resize: %+v, want 2000m, 8 GB and the nodes unchanged (%d)", list, int64(rs.Nodes))
	}
	e.must(http.StatusAccepted, "POST", base+"/"+rs.ID+"/resize", map[string]any{"cpu_millis": 1000, "memory_gbs": "4", "nodes": 3})
	if list := decode[[]apiclient.ReplicaSet](t, e.must(http.StatusOK, "GET", base, nil)); int64(list[0].Nodes) != 3 {
		t.Errorf("nodes given: %d, want 3", int64(list[0].Nodes))
	}
	eb := e.mustError(http.StatusBadRequest, "INVALID_REQUEST", "POST", base+"/"+rs.ID+"/resize", map[string]any{"cpu_millis": "2000"})
	if !strings.Contains(eb.Message, "memory_gbs") {
		t.Errorf("message %q does not name memory_gbs", eb.Message)
	}
}
