package apiclient_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/cloudsim"
)

// TestServicesDecodeMatchesEncodingJSONOnSim: the services answers of the
// simulator's demo and a generated fleet, in both revisions, decode as
// with encoding/json, and so do 1,000 mutations of them.
func TestServicesDecodeMatchesEncodingJSONOnSim(t *testing.T) {
	var answers [][]byte
	for _, rev := range []string{cloudsim.Revision2026, cloudsim.Revision2024} {
		sim := cloudsim.New(cloudsim.Options{Credentials: []cloudsim.Credential{readWrite}, Seed: 1, Revision: rev})
		sim.LoadDemo(simProject)
		sim.LoadFleet(simProject, cloudsim.Fleet{Services: 40, ReplicaSetsPerService: 2})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			sim.ServeHTTP(rec, r)
			if strings.HasSuffix(r.URL.Path, "/services") {
				answers = append(answers, rec.Body.Bytes())
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.WriteHeader(rec.Code)
			_, _ = w.Write(rec.Body.Bytes())
		}))
		c, _ := simClient(t, srv.URL+"/v1", readWrite, nil)
		if services := must[[]apiclient.Service](t, "list services")(c.ListServices(t.Context())); len(services) < 40 {
			t.Fatalf("%s: %d services", rev, len(services))
		}
		srv.Close()
	}
	if len(answers) != 2 {
		t.Fatalf("recorded %d services answers, want 2", len(answers))
	}
	n := 1000
	if testing.Short() {
		n = 200
	}
	apiclient.CheckServicesDecodeForTest(t, answers, n)
}
