package cloudsim

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/fakeclock"
)

// FuzzRequestBody throws arbitrary bodies at every write endpoint and
// asserts that none panics or answers 5xx.
func FuzzRequestBody(f *testing.F) {
	for _, seed := range []string{
		``, `{}`, `null`, `[]`, `"x"`, `{"name":`, `{"name":"a","addons":[],"region_code":"r","cpu_millis":1,"memory_gbs":1}`,
		`{"cpu_millis":1e400,"memory_gbs":-0}`, `{"replica_count":5.0}`, `{"environment":"DEV"}`,
		`{"addons":["ai","time-series","ai"]}`, `{"cidr":"255.255.255.255/32","name":"\u0000","region_code":" "}`,
		`{"vpc_id":{}}`, `{"password":"\ud800"}`, `{"nodes":9223372036854775808}`,
		`{"peer_account_id":"a","peer_region_code":"b","peer_vpc_id":"c"}`,
	} {
		f.Add([]byte(seed))
	}
	clock := fakeclock.New(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	sim := New(Options{Credentials: []Credential{rwCred}, Seed: 1, Clock: clock.Now})
	sim.LoadDemo(testProject)
	sim.mu.Lock()
	p := sim.projects[testProject]
	svc := p.services[p.serviceOrder[0]]
	rsID := svc.rsOrder[0]
	vpcID := p.vpcOrder[0]
	sim.mu.Unlock()
	one := servicesPath + "/" + svc.id
	paths := []string{
		servicesPath, one + "/resize", one + "/updatePassword", one + "/setEnvironment", one + "/setHA",
		one + "/enablePooler", one + "/forkService", one + "/attachToVPC", one + "/detachFromVPC",
		one + "/replicaSets", one + "/replicaSets/" + rsID + "/resize", one + "/replicaSets/" + rsID + "/setEnvironment",
		vpcsPath, vpcsPath + "/" + vpcID + "/rename", vpcsPath + "/" + vpcID + "/peerings",
		"/_sim/faults", "/_sim/projects/" + testProject + "/services/" + svc.id + "/status",
		"/_sim/projects/" + testProject + "/vpcs/" + vpcID + "/peerings/x/error",
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, path := range paths {
			req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
			req.SetBasicAuth(rwCred.AccessKey, rwCred.SecretKey)
			rec := httptest.NewRecorder()
			sim.ServeHTTP(rec, req)
			if rec.Code >= 500 {
				t.Fatalf("POST %s %q: status %d %s", path, body, rec.Code, rec.Body)
			}
			if rec.Code >= 400 && !bytes.Contains(rec.Body.Bytes(), []byte(`"code"`)) {
				t.Fatalf("POST %s %q: error without a JSON code: %s", path, body, rec.Body)
			}
		}
		// Keep the fuzzer's faults from leaking into the next input.
		sim.ClearFaults()
	})
}
