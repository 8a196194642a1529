package testbin

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Sim is a running simulator (standalone or embedded) seen by a test. A
// refused control fails the test.
type Sim struct {
	Addr, URL string
	// Project is what the resource controls address: the demo project by default.
	Project string
}

// SimAt returns the simulator listening at addr (host:port).
func SimAt(addr string) *Sim {
	return &Sim{Addr: addr, URL: "http://" + addr, Project: SimProject}
}

// Env is the environment that points the exporter at this simulator.
func (s *Sim) Env() []string { return ExporterEnv(s.Addr) }

// Requests returns the API requests per operation since start or ResetRequests.
func (s *Sim) Requests(t testing.TB) map[string]int {
	t.Helper()
	var counts map[string]int
	s.call(t, http.MethodGet, "/_sim/requests", "", http.StatusOK, &counts)
	return counts
}

// WriteRequests returns the counts of writes: the poller keeps reading.
func (s *Sim) WriteRequests(t testing.TB) map[string]int {
	t.Helper()
	out := map[string]int{}
	for op, n := range s.Requests(t) {
		if !strings.HasPrefix(op, "get") && !strings.HasPrefix(op, "list") {
			out[op] = n
		}
	}
	return out
}

// ResetRequests sets the request counts back to zero.
func (s *Sim) ResetRequests(t testing.TB) {
	t.Helper()
	s.call(t, http.MethodDelete, "/_sim/requests", "", http.StatusNoContent, nil)
}

// Fault injects a fault given as the JSON body of POST /_sim/faults.
func (s *Sim) Fault(t testing.TB, fault string) {
	t.Helper()
	s.call(t, http.MethodPost, "/_sim/faults", fault, http.StatusCreated, nil)
}

// ClearFaults removes every injected fault.
func (s *Sim) ClearFaults(t testing.TB) {
	t.Helper()
	s.call(t, http.MethodDelete, "/_sim/faults", "", http.StatusNoContent, nil)
}

// ServiceStatus forces a service's status ("" removes the override).
func (s *Sim) ServiceStatus(t testing.TB, serviceID, status string) {
	t.Helper()
	s.status(t, "/services/"+serviceID, status)
}

// ReplaceNode replaces a service's primary node: its ordinal leaves the
// usage series and a new ordinal joins them.
func (s *Sim) ReplaceNode(t testing.TB, serviceID string) {
	t.Helper()
	s.call(t, http.MethodPost, s.projectPath()+"/services/"+serviceID+"/replaceNode", "", http.StatusNoContent, nil)
}

// ReplicaSetStatus forces the status of a replica set.
func (s *Sim) ReplicaSetStatus(t testing.TB, serviceID, replicaSetID, status string) {
	t.Helper()
	s.status(t, "/services/"+serviceID+"/replicaSets/"+replicaSetID, status)
}

// PeeringError sets the error_message of a peering.
func (s *Sim) PeeringError(t testing.TB, vpcID, peeringID, message string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"error_message": message})
	s.call(t, http.MethodPost, s.projectPath()+"/vpcs/"+vpcID+"/peerings/"+peeringID+"/error", string(body), http.StatusNoContent, nil)
}

// RotateCredential gives a credential new keys and refuses its old ones.
func (s *Sim) RotateCredential(t testing.TB, accessKey, newAccessKey, newSecretKey, newAPIKey string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{
		"access_key": accessKey, "new_access_key": newAccessKey, "new_secret_key": newSecretKey, "new_api_key": newAPIKey,
	})
	s.call(t, http.MethodPost, "/_sim/credentials/rotate", string(body), http.StatusNoContent, nil)
}

// IssueCredential gives a credential new keys, the old ones still accepted.
func (s *Sim) IssueCredential(t testing.TB, accessKey, newAccessKey, newSecretKey, newAPIKey string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{
		"access_key": accessKey, "new_access_key": newAccessKey, "new_secret_key": newSecretKey, "new_api_key": newAPIKey,
	})
	s.call(t, http.MethodPost, "/_sim/credentials/issue", string(body), http.StatusNoContent, nil)
}

// RevokeCredential makes the simulator refuse the keys of accessKey.
func (s *Sim) RevokeCredential(t testing.TB, accessKey string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"access_key": accessKey})
	s.call(t, http.MethodPost, "/_sim/credentials/revoke", string(body), http.StatusNoContent, nil)
}

// AddProject adds an empty project that the user credentials can access.
func (s *Sim) AddProject(t testing.TB, projectID string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"project_id": projectID})
	s.call(t, http.MethodPost, "/_sim/projects", string(body), http.StatusNoContent, nil)
}

// APIGet decodes the JSON at path below /v1, read with the exporter's credentials.
func (s *Sim) APIGet(t testing.TB, path string, out any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, s.URL+"/v1"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(SimAccessKey, SimSecretKey)
	s.do(t, req, http.StatusOK, out)
}

// APIPost posts body as APIGet reads: for the reads that are POSTs.
func (s *Sim) APIPost(t testing.TB, path, body string, out any) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, s.URL+"/v1"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth(SimAccessKey, SimSecretKey)
	s.do(t, req, http.StatusOK, out)
}

// AddLogEntries adds log entries and sets the rate unless ratePerMinute < 0.
func (s *Sim) AddLogEntries(t testing.TB, serviceID string, entries []map[string]string, ratePerMinute int) {
	t.Helper()
	body := map[string]any{"entries": entries}
	if ratePerMinute >= 0 {
		body["rate_per_minute"] = ratePerMinute
	}
	b, _ := json.Marshal(body)
	s.call(t, http.MethodPost, s.projectPath()+"/services/"+serviceID+"/logs", string(b), http.StatusNoContent, nil)
}

// ServiceIDs lists the ids of the services of s.Project, in the API's order.
func (s *Sim) ServiceIDs(t testing.TB) []string {
	t.Helper()
	var list []struct {
		ServiceID string `json:"service_id"`
	}
	s.APIGet(t, "/projects/"+s.Project+"/services", &list)
	out := make([]string, len(list))
	for i, svc := range list {
		out[i] = svc.ServiceID
	}
	return out
}

func (s *Sim) projectPath() string { return "/_sim/projects/" + s.Project }

func (s *Sim) status(t testing.TB, resource, status string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"status": status})
	s.call(t, http.MethodPost, s.projectPath()+resource+"/status", string(body), http.StatusNoContent, nil)
}

func (s *Sim) call(t testing.TB, method, path, body string, want int, out any) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	s.do(t, req, want, out)
}

func (s *Sim) do(t testing.TB, req *http.Request, want int, out any) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("simulator %s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("simulator %s %s: %d %s, want %d", req.Method, req.URL.Path, resp.StatusCode, b, want)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("simulator %s %s: %v in %s", req.Method, req.URL.Path, err, b)
		}
	}
}

// APIWrite sends a write as the exporter's credentials would and wants status.
func (s *Sim) APIWrite(t testing.TB, method, path, body string, want int, out any) {
	t.Helper()
	req, err := http.NewRequest(method, s.URL+"/v1"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.SetBasicAuth(SimAccessKey, SimSecretKey)
	s.do(t, req, want, out)
}
