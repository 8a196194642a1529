package apiclient_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/cloudsim"
)

// fleetNamed are the reads whose catalog example names what the demo fleet
// lacks (a series name): their success is TestSimRevision2026Operations'.
var fleetNamed = []string{apiclient.OpGetServiceMetricsSeries}

// TestSimEveryReadChecksCredentials sends every read of the catalog, with no
// case per operation, to the simulator with the demo fleet in each revision
// that routes it (revision 2026 routes them all): a wrong secret is a 401
// that does not show it, another project a 403, and a read-only credential
// gets an answer that decodes.
func TestSimEveryReadChecksCredentials(t *testing.T) {
	for _, rev := range []string{cloudsim.Revision2026, cloudsim.Revision2024} {
		t.Run(rev, func(t *testing.T) {
			sim := cloudsim.New(cloudsim.Options{Credentials: []cloudsim.Credential{readWrite, readOnly}, Seed: 1, Revision: rev})
			sim.LoadDemo(simProject)
			srv := httptest.NewServer(sim)
			t.Cleanup(srv.Close)
			wrong := readWrite
			wrong.SecretKey, wrong.APIKey = "wrong-secret", "wrong-api-key"
			bad, _ := simClient(t, srv.URL+"/v1", wrong, nil)
			other, _ := simClient(t, srv.URL+"/v1", readWrite, func(cfg *apiclient.Config) { cfg.ProjectID = "someone-elses" })
			ro, _ := simClient(t, srv.URL+"/v1", readOnly, nil)
			idOf := demoIDs(t, ro)
			for _, o := range apiclient.Catalog() {
				if !o.Write {
					checkRead(t, sim, rev, o, idOf, bad, other, ro)
				}
			}
		})
	}
}

func checkRead(t *testing.T, sim *cloudsim.Sim, rev string, o apiclient.Operation, idOf func(string) string, bad, other, ro *apiclient.Client) {
	t.Helper()
	before := sim.RequestCount(o.Name)
	_, err := apiclient.CallForTest(t, bad, o, idOf)
	if sim.RequestCount(o.Name) == before {
		if rev == cloudsim.Revision2026 {
			t.Errorf("%s did not reach its route in revision 2026: %v", o.Name, err)
		}
		return
	}
	if !apiclient.IsUnauthorized(err) || strings.Contains(err.Error(), "wrong-secret") || strings.Contains(err.Error(), "wrong-api-key") {
		t.Errorf("%s with a wrong secret: err = %v, want 401 without it", o.Name, err)
	}
	if strings.Contains(o.Path, "{project_id}") {
		if _, err := apiclient.CallForTest(t, other, o, idOf); apiclient.StatusCode(err) != http.StatusForbidden {
			t.Errorf("%s of another project: err = %v, want 403", o.Name, err)
		}
	}
	got, err := apiclient.CallForTest(t, ro, o, idOf)
	if !slices.Contains(fleetNamed, o.Name) && (err != nil || got == nil) {
		t.Errorf("read-only %s: %v, %v, want its answer", o.Name, got, err)
	}
}

// demoIDs gives each path placeholder a resource of the demo fleet: a
// service with a replica set, a VPC with a peering.
func demoIDs(t *testing.T, c *apiclient.Client) func(string) string {
	t.Helper()
	ctx := t.Context()
	ids := map[string]string{}
	for _, s := range must[[]apiclient.Service](t, "ListServices")(c.ListServices(ctx)) {
		if rs := must[[]apiclient.ReplicaSet](t, "ListReplicaSets")(c.ListReplicaSets(ctx, s.ServiceID)); len(rs) > 0 {
			ids["service_id"], ids["replica_set_id"] = s.ServiceID, rs[0].ID
			break
		}
	}
	for _, v := range must[[]apiclient.VPC](t, "ListVPCs")(c.ListVPCs(ctx)) {
		if pe := must[[]apiclient.Peering](t, "ListPeerings")(c.ListPeerings(ctx, v.ID)); len(pe) > 0 {
			ids["vpc_id"], ids["peering_id"] = v.ID, pe[0].ID
			break
		}
	}
	if len(ids) != 4 {
		t.Fatalf("the demo fleet lacks a service with a replica set or a VPC with a peering: %v", ids)
	}
	return func(name string) string { return ids[name] }
}
