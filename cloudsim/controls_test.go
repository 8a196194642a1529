package cloudsim

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

func TestControlsOverHTTP(t *testing.T) {
	e := newEnv(t, Timings{})
	svc := e.createService("a")
	rs := decode[apiclient.ReplicaSet](t, e.must(http.StatusAccepted, "POST", servicesPath+"/"+svc+"/replicaSets", rsBody())).ID
	v := e.createVPC("v")
	pr := e.createPeering(v)

	if got := decode[map[string]string](t, e.must(http.StatusOK, "GET", "/_sim/healthz", nil, noAuth)); got["status"] != "ok" {
		t.Errorf("healthz: %v", got)
	}
	counts := decode[map[string]int](t, e.must(http.StatusOK, "GET", "/_sim/requests", nil, noAuth))
	if counts[apiclient.OpCreateService] != 1 || counts[apiclient.OpCreatePeering] != 1 {
		t.Errorf("counts: %v", counts)
	}
	e.must(http.StatusNoContent, "DELETE", "/_sim/requests", nil, noAuth)
	if counts := decode[map[string]int](t, e.must(http.StatusOK, "GET", "/_sim/requests", nil, noAuth)); len(counts) != 0 {
		t.Errorf("counts after reset: %v", counts)
	}

	ctl := "/_sim/projects/" + testProject
	e.must(http.StatusNoContent, "POST", ctl+"/services/"+svc+"/status", `{"status":"UNSTABLE"}`, noAuth)
	if got := e.getService(svc).Status; got != apiclient.ServiceUnstable {
		t.Errorf("service status %s", got)
	}
	e.must(http.StatusNoContent, "POST", ctl+"/services/"+svc+"/status", `{"status":""}`, noAuth)
	if got := e.getService(svc).Status; got != apiclient.ServiceReady {
		t.Errorf("service status after clearing %s", got)
	}
	e.must(http.StatusNoContent, "POST", ctl+"/services/"+svc+"/replicaSets/"+rs+"/status", `{"status":"error"}`, noAuth)
	if l := decode[[]apiclient.ReplicaSet](t, e.must(http.StatusOK, "GET", servicesPath+"/"+svc+"/replicaSets", nil)); l[0].Status != "error" {
		t.Errorf("replica set status %s", l[0].Status)
	}
	peering := vpcsPath + "/" + v + "/peerings/" + pr
	e.must(http.StatusNoContent, "POST", ctl+"/vpcs/"+v+"/peerings/"+pr+"/status", `{"status":"pending"}`, noAuth)
	e.must(http.StatusNoContent, "POST", ctl+"/vpcs/"+v+"/peerings/"+pr+"/error", `{"error_message":"boom"}`, noAuth)
	got := decode[apiclient.Peering](t, e.must(http.StatusOK, "GET", peering, nil))
	if got.Status != "pending" || got.ErrorMessage == nil || *got.ErrorMessage != "boom" {
		t.Errorf("peering after controls: %+v", got)
	}
	e.must(http.StatusNoContent, "POST", ctl+"/vpcs/"+v+"/peerings/"+pr+"/error", `{"error_message":null}`, noAuth)
	if got := decode[apiclient.Peering](t, e.must(http.StatusOK, "GET", peering, nil)); got.ErrorMessage != nil {
		t.Errorf("error_message not cleared: %v", *got.ErrorMessage)
	}

	for _, tc := range []struct {
		path, body string
		status     int
		code       string
	}{
		{ctl + "/services/nosuchsvc0/status", `{"status":"READY"}`, 404, "NOT_FOUND"},
		{"/_sim/projects/nope/services/" + svc + "/status", `{"status":"READY"}`, 404, "NOT_FOUND"},
		{ctl + "/services/" + svc + "/replicaSets/nosuchrs00/status", `{"status":"active"}`, 404, "NOT_FOUND"},
		{ctl + "/vpcs/" + v + "/peerings/nosuchpr00/status", `{"status":"active"}`, 404, "NOT_FOUND"},
		{ctl + "/vpcs/nosuchvpc0/peerings/" + pr + "/error", `{"error_message":"x"}`, 404, "NOT_FOUND"},
		{ctl + "/services/" + svc + "/status", `{}`, 400, "INVALID_REQUEST"},
		{ctl + "/services/" + svc + "/status", `{"status":5}`, 400, "INVALID_REQUEST"},
		{ctl + "/vpcs/" + v + "/peerings/" + pr + "/error", `{}`, 400, "INVALID_REQUEST"},
		{ctl + "/vpcs/" + v + "/peerings/" + pr + "/error", `{"error_message":1}`, 400, "INVALID_REQUEST"},
		{ctl + "/services/" + svc + "/status", `nope`, 400, "INVALID_REQUEST"},
	} {
		e.mustError(tc.status, tc.code, "POST", tc.path, tc.body, noAuth)
	}
	// Controls are not operations: they are never counted.
	if counts := e.sim.RequestCounts(); len(counts) != 3 {
		t.Errorf("counts %v, want the three reads only", counts)
	}
}

// TestRotateCredentialAndAddProject: after a rotation the old keys are
// refused and the new ones accepted; an added project is listed to the
// user.
func TestRotateCredentialAndAddProject(t *testing.T) {
	user := Credential{AccessKey: "u", SecretKey: "us", Projects: []string{"pa"}}
	s := New(Options{Credentials: []Credential{user}})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	e := &env{t: t, sim: s, srv: srv}
	rotated := Credential{AccessKey: "u2", SecretKey: "us2"}

	e.mustError(http.StatusBadRequest, "INVALID_REQUEST", "POST", "/_sim/credentials/rotate", `{"access_key":"u","new_access_key":"","new_secret_key":"x","new_api_key":""}`, noAuth)
	e.mustError(http.StatusBadRequest, "INVALID_REQUEST", "POST", "/_sim/credentials/rotate", `{"access_key":"u"}`, noAuth)
	e.mustError(http.StatusNotFound, "NOT_FOUND", "POST", "/_sim/credentials/rotate", `{"access_key":"nope","new_access_key":"a","new_secret_key":"b","new_api_key":""}`, noAuth)
	e.must(http.StatusNoContent, "POST", "/_sim/credentials/rotate", `{"access_key":"u","new_access_key":"u2","new_secret_key":"us2","new_api_key":""}`, noAuth)
	e.mustError(http.StatusUnauthorized, "UNAUTHORIZED", "GET", "/v1/projects", nil, as(user))

	// Issued keys are accepted alongside the old ones until these are revoked.
	issued := Credential{AccessKey: "u3", SecretKey: "us3"}
	e.mustError(http.StatusBadRequest, "INVALID_REQUEST", "POST", "/_sim/credentials/issue", `{"access_key":"u2","new_access_key":"u3","new_secret_key":"","new_api_key":""}`, noAuth)
	e.mustError(http.StatusNotFound, "NOT_FOUND", "POST", "/_sim/credentials/issue", `{"access_key":"nope","new_access_key":"a","new_secret_key":"b","new_api_key":""}`, noAuth)
	e.must(http.StatusNoContent, "POST", "/_sim/credentials/issue", `{"access_key":"u2","new_access_key":"u3","new_secret_key":"us3","new_api_key":""}`, noAuth)
	e.must(http.StatusOK, "GET", "/v1/projects", nil, as(rotated))
	e.must(http.StatusOK, "GET", "/v1/projects", nil, as(issued))
	e.mustError(http.StatusNotFound, "NOT_FOUND", "POST", "/_sim/credentials/revoke", `{"access_key":"nope"}`, noAuth)
	e.must(http.StatusNoContent, "POST", "/_sim/credentials/revoke", `{"access_key":"u3"}`, noAuth)
	e.mustError(http.StatusUnauthorized, "UNAUTHORIZED", "GET", "/v1/projects", nil, as(issued))

	e.mustError(http.StatusBadRequest, "INVALID_REQUEST", "POST", "/_sim/projects", `{"project_id":" "}`, noAuth)
	e.must(http.StatusNoContent, "POST", "/_sim/projects", `{"project_id":"pb"}`, noAuth)
	got := decode[[]apiclient.Project](t, e.must(http.StatusOK, "GET", "/v1/projects", nil, as(rotated)))
	if len(got) != 2 || got[0].ID != "pa" || got[1].ID != "pb" {
		t.Errorf("projects after the rotation and the addition: %+v", got)
	}
	e.must(http.StatusOK, "GET", "/v1/projects/pb/services", nil, as(rotated))
}
