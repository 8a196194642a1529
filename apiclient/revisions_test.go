package apiclient

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixtureServer answers each path with a file of testdata/<dir>, as the
// simulator recorded it (cloudsim --api.revision=<rev>, demo scenario) or as
// written by hand for variants the simulator does not produce.
func fixtureServer(t *testing.T, dir string, files map[string]string) *testServer {
	t.Helper()
	return newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		for suffix, file := range files {
			if strings.HasSuffix(r.URL.Path, suffix) {
				data, err := os.ReadFile(filepath.Join("testdata", dir, file))
				if err != nil {
					t.Error(err)
				}
				status := http.StatusOK
				if strings.HasPrefix(file, "error") {
					status = http.StatusBadRequest
				}
				writeJSON(w, status, string(data))
				return
			}
		}
		writeJSON(w, http.StatusNotFound, `{"code":"NOT_FOUND","message":"no fixture"}`)
	})
}

func intp(n int64) *Int { v := Int(n); return &v }

func boolp(b bool) *bool { return &b }

func ptrValue(p *Int) int64 {
	if p == nil {
		return -1
	}
	return int64(*p)
}

func TestGoldenRevision2024(t *testing.T) {
	srv := fixtureServer(t, "revision2024", map[string]string{
		"/services": "services.json", "/vpcs": "vpcs.json", "/peerings": "peerings.json", "/auth/info": "auth_info.json",
	})
	c, _, obs := newTestClient(t, srv, nil)
	ctx := t.Context()
	svcs, err := c.ListServices(ctx)
	if err != nil || len(svcs) != 7 {
		t.Fatalf("ListServices: %d services, %v", len(svcs), err)
	}
	paused := 0
	for _, s := range svcs {
		if s.Paused == nil {
			t.Errorf("%s: paused not read", s.ServiceID)
		}
		if s.IsPaused() {
			paused++
		}
		if s.Metrics != nil || s.HAReplicas != nil || s.ReadReplicaSets != nil || s.Shared() {
			t.Errorf("%s: revision 2024 fields invented: %+v", s.ServiceID, s)
		}
		if spec := s.Resources[0].Spec; ptrValue(spec.CPUMillis) <= 0 || ptrValue(spec.MemoryGBs) <= 0 {
			t.Errorf("%s: sizes %+v", s.ServiceID, spec)
		}
	}
	if paused != 1 || svcs[0].ServiceType != ServiceTypeTimeSeries {
		t.Errorf("paused services %d, first type %s", paused, svcs[0].ServiceType)
	}
	info, err := c.GetAuthInfo(ctx)
	if err != nil || info.Key() == nil || info.Key().Name != "cloudsim-demo" || info.Key().PublicKey == "" {
		t.Fatalf("auth info %+v, %v", info, err)
	}
	vpcs, err := c.ListVPCs(ctx)
	if err != nil || len(vpcs) == 0 {
		t.Fatalf("ListVPCs: %v", err)
	}
	if _, err := c.ListPeerings(ctx, vpcs[0].ID); err != nil {
		t.Fatal(err)
	}
	if len(obs.decodeErrors) != 0 {
		t.Errorf("decode errors: %v", obs.decodeErrors)
	}
}

func TestGoldenRevision2026(t *testing.T) {
	srv := fixtureServer(t, "revision2026", map[string]string{
		"/services": "services.json", "/vpcs": "vpcs.json", "/peerings": "peerings.json", "/auth/info": "auth_info.json",
		"/projects": "projects.json",
	})
	c, _, obs := newTestClient(t, srv, func(cfg *Config) { cfg.APIKey = "" })
	ctx := t.Context()
	svcs, err := c.ListServices(ctx)
	if err != nil || len(svcs) != 7 {
		t.Fatalf("ListServices: %d services, %v", len(svcs), err)
	}
	var paused, inline, vpcEndpoints int
	for _, s := range svcs {
		if s.Paused != nil {
			t.Errorf("%s: paused read from an answer without it", s.ServiceID)
		}
		if s.IsPaused() {
			paused++
		}
		if s.ReadReplicaSets != nil {
			inline++
		}
		if s.VPCAddress() != nil {
			vpcEndpoints++
			if strings.Trim(s.VPCAddress().VPCID, "0123456789") != "" {
				t.Errorf("vpc_id %q", s.VPCAddress().VPCID)
			}
		}
		if s.HAReplicas == nil || s.HAReplicas.ReplicaCount == nil {
			t.Errorf("%s: ha_replicas not read", s.ServiceID)
		}
	}
	if paused != 1 || inline != 7 || vpcEndpoints == 0 || svcs[0].ServiceType != ServiceTypeTimescaleDB {
		t.Errorf("paused %d, inline replica sets %d, vpc endpoints %d", paused, inline, vpcEndpoints)
	}
	if m := svcs[0].Metrics; m == nil || ptrValue(m.MilliCPU) <= 0 || ptrValue(m.MemoryMB) <= 0 || ptrValue(m.StorageMB) <= 0 {
		t.Errorf("metrics %+v", m)
	}
	// Basic on /auth/info when no bearer key is configured.
	info, err := c.GetAuthInfo(ctx)
	if err != nil || info.Key() == nil || info.Key().Name != "cloudsim-demo" {
		t.Fatalf("auth info %+v, %v", info, err)
	}
	projects, err := c.ListProjects(ctx)
	if err != nil || len(projects) != 1 || projects[0].ID != "demo-project" {
		t.Fatalf("ListProjects %+v, %v", projects, err)
	}
	for _, r := range srv.requests() {
		if !strings.HasPrefix(r.Auth, "Basic ") {
			t.Errorf("%s sent %q, want Basic", r.URI, r.Auth)
		}
	}
	if len(obs.decodeErrors) != 0 {
		t.Errorf("decode errors: %v", obs.decodeErrors)
	}
}

func TestGoldenRevision2026Variants(t *testing.T) {
	srv := fixtureServer(t, "revision2026", map[string]string{
		"/services": "services_variants.json", "/auth/info": "auth_info_deprecated_apiKey.json", "/oauth": "auth_info_oauth.json",
		"/error": "error.json",
	})
	c, _, obs := newTestClient(t, srv, nil)
	svcs, err := c.ListServices(t.Context())
	if err != nil || len(svcs) != 3 {
		t.Fatalf("ListServices: %+v, %v", svcs, err)
	}
	shared, digits, bad := svcs[0], svcs[1], svcs[2]
	if !shared.Shared() || !shared.IsPaused() || shared.Metrics.MilliCPU != nil || ptrValue(shared.Metrics.StorageMB) != 300 ||
		shared.ConnectionPooler == nil || shared.ConnectionPooler.Endpoint != nil || shared.ReadReplicaSets == nil {
		t.Errorf("shared service: %+v", shared)
	}
	if digits.Shared() || ptrValue(digits.Resources[0].Spec.CPUMillis) != 2000 || ptrValue(digits.Resources[0].Spec.MemoryGBs) != 8 ||
		digits.Metrics != nil || digits.VPCAddress() == nil || digits.VPCAddress().VPCID != "1234567890" ||
		digits.ForkedFrom == nil || !digits.ForkedFrom.IsStandby || ptrValue(digits.HAReplicas.SyncReplicaCount) != 1 ||
		len(digits.ReadReplicaSets) != 1 || digits.ReadReplicaSets[0].CPUMillis != 1000 || digits.Endpoint != nil {
		t.Errorf("digit-string service: %+v", digits)
	}
	// A bad usage value costs that value only.
	if !bad.FieldDropped("metrics.memory_mb") || bad.Metrics == nil || bad.Metrics.MemoryMB != nil || ptrValue(bad.Metrics.MilliCPU) != 5 ||
		bad.ReadReplicaSets != nil {
		t.Errorf("bad usage: %+v dropped %v", bad.Metrics, bad.Dropped)
	}
	if len(obs.decodeErrors) != 1 {
		t.Errorf("decode errors %v, want one", obs.decodeErrors)
	}
	info, err := c.GetAuthInfo(t.Context())
	if err != nil || info.Key() == nil || info.Key().Name != "legacy" || info.Key().Project.PlanType != "SCALE" {
		t.Errorf("deprecated apiKey: %+v, %v", info, err)
	}
}
