package apiclient_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/cloudsim"
)

// TestSimEveryWriteChecksCredentials calls every write of the catalog,
// with no case per operation, against the simulator in revision 2026
// (which serves them all): a wrong secret is a 401 that does not show it,
// a read-only credential a 403, whatever the body.
func TestSimEveryWriteChecksCredentials(t *testing.T) {
	sim := cloudsim.New(cloudsim.Options{Credentials: []cloudsim.Credential{readWrite, readOnly}, Seed: 1})
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	wrong := readWrite
	wrong.SecretKey = "wrong-secret"
	bad, _ := simClient(t, srv.URL+"/v1", wrong, nil)
	ro, _ := simClient(t, srv.URL+"/v1", readOnly, nil)
	anyID := func(string) string { return "x1" }
	for _, o := range apiclient.Catalog() {
		if !o.Write {
			continue
		}
		_, err := apiclient.CallForTest(t, bad, o, anyID)
		if !apiclient.IsUnauthorized(err) || strings.Contains(err.Error(), "wrong-secret") {
			t.Errorf("%s with a wrong secret: err = %v, want 401 without it", o.Name, err)
		}
		if _, err := apiclient.CallForTest(t, ro, o, anyID); apiclient.StatusCode(err) != http.StatusForbidden {
			t.Errorf("read-only %s: err = %v, want 403", o.Name, err)
		}
		if n := sim.RequestCount(o.Name); n != 2 {
			t.Errorf("the simulator saw %d requests of %s, want 2", n, o.Name)
		}
	}
}
