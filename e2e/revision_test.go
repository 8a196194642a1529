package e2e

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// envWithoutBearer is the exporter's environment for the simulator at sim
// without a bearer API key: /auth/info then goes with Basic.
func envWithoutBearer(sim string, withProject bool) []string {
	var env []string
	for _, kv := range testbin.ExporterEnv(sim) {
		if strings.HasPrefix(kv, "CLOUDDB_API_KEY=") || (!withProject && strings.HasPrefix(kv, "CLOUDDB_API_PROJECT_ID=")) {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// TestRevisionCallsPerCycle: one full cycle costs 2 + VPCs (+1 for the auth
// info) calls in revision 2026, which carries the replica sets inline, and
// 2 + services + VPCs (+1) in the first revision. Long intervals keep the
// count to the first cycle.
func TestRevisionCallsPerCycle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rev           string
		listRS, total int
	}{
		{"2026", 0, 2 + 2 + 1},     // services, VPCs, 2 peering lists, auth info (Basic)
		{"2024", 7, 2 + 7 + 2 + 1}, // and one replica set list per service; auth info refused once
	} {
		t.Run(tc.rev, func(t *testing.T) {
			sim := testbin.StartSim(t, "--api.revision="+tc.rev)
			startExporter(t, envWithoutBearer(sim, true), "--collect.interval=1h", "--collect.transition-interval=1h")
			got := testbin.SimAt(sim).Requests(t)
			total := 0
			for _, n := range got {
				total += n
			}
			if got[apiclient.OpListReplicaSets] != tc.listRS || got[apiclient.OpGetAuthInfo] != 1 || total != tc.total {
				t.Errorf("revision %s: first cycle made %v (%d calls), want %d listReplicaSets and %d calls", tc.rev, got, total, tc.listRS, tc.total)
			}
		})
	}
}

// TestRevision2026Metrics: every metric revision 2026 adds shows the value
// the API sends, converted as HELP says, and a null gives no series.
func TestRevision2026Metrics(t *testing.T) {
	t.Parallel()
	sim := testbin.StartSim(t)
	_, url := startExporter(t, envWithoutBearer(sim, true), "--collect.interval=1s", "--api.rate-limit=100")

	// Usage moves every minute: poll until the exporter shows what the
	// API answers now.
	var mismatch string
	testbin.WaitFor(t, 60*time.Second, "the exporter to show the API's revision 2026 fields", func() bool {
		var svcs []apiclient.Service
		testbin.SimAt(sim).APIGet(t, "/projects/"+testbin.SimProject+"/services", &svcs)
		_, fams := testbin.Scrape(t, url)
		mismatch = revision2026Mismatch(svcs, fams)
		return mismatch == ""
	})
	if mismatch != "" {
		t.Fatal(mismatch)
	}
	_, fams := testbin.Scrape(t, url)
	if len(testbin.LabelValues(fams, "clouddb_api_key_info", "name")) != 1 {
		t.Error("no clouddb_api_key_info: /auth/info was not read with Basic")
	}
	if v, ok := testbin.Value(fams, "clouddb_project_info", "project_id", testbin.SimProject, "name", testbin.SimProject); !ok || v != 1 {
		t.Error("no clouddb_project_info for the demo project")
	}
}

// revision2026Mismatch compares the exporter's families with the services
// the API answered; "" when everything matches.
func revision2026Mismatch(svcs []apiclient.Service, fams map[string]*dto.MetricFamily) string {
	var shared, forks, usage, nulls int
	for _, s := range svcs {
		l := []string{"project_id", testbin.SimProject, "service_id", s.ServiceID}
		check := func(name string, v *apiclient.Int, scale float64) string {
			got, ok := testbin.Value(fams, name, l...)
			switch {
			case v == nil && ok:
				return fmt.Sprintf("%s of %s: %v exported for null", name, s.Name, got)
			case v != nil && (!ok || got != float64(*v)*scale):
				return fmt.Sprintf("%s of %s: %v (exported %t), API says %d", name, s.Name, got, ok, *v)
			}
			return ""
		}
		m := s.Metrics
		if m == nil {
			m = &apiclient.ServiceMetrics{}
		}
		for _, msg := range []string{
			check("clouddb_service_cpu_usage_cores", m.MilliCPU, 1.0/1000),
			check("clouddb_service_memory_usage_bytes", m.MemoryMB, 1<<20),
			check("clouddb_service_storage_usage_bytes", m.StorageMB, 1<<20),
			check("clouddb_service_ha_replicas", s.HAReplicas.ReplicaCount, 1),
			check("clouddb_service_ha_sync_replicas", s.HAReplicas.SyncReplicaCount, 1),
		} {
			if msg != "" {
				return msg
			}
		}
		if m.MilliCPU == nil {
			nulls++
		} else {
			usage++
		}
		sharedV, _ := testbin.Value(fams, "clouddb_service_shared_resources", l...)
		_, hasCPU := testbin.Value(fams, "clouddb_service_cpu_cores", l...)
		if s.Shared() != (sharedV == 1) || (s.Shared() && hasCPU) {
			return fmt.Sprintf("%s: shared_resources %v, cpu_cores series %t", s.Name, sharedV, hasCPU)
		}
		if s.Shared() {
			shared++
		}
		paused, _ := testbin.Value(fams, "clouddb_service_paused", l...)
		if (paused == 1) != s.IsPaused() {
			return fmt.Sprintf("%s: paused %v, status %s", s.Name, paused, s.Status)
		}
		if f := s.ForkedFrom; f != nil {
			forks++
			if _, ok := testbin.Value(fams, "clouddb_service_fork_info", append(l, "parent_service_id", f.ServiceID, "standby", strconv.FormatBool(f.IsStandby))...); !ok {
				return fmt.Sprintf("%s: no fork_info for its parent %s", s.Name, f.ServiceID)
			}
		}
		if e := s.VPCAddress(); e != nil {
			if _, ok := testbin.Value(fams, "clouddb_service_vpc_endpoint_info", append(l, "vpc_id", e.VPCID, "host", e.Host)...); !ok {
				return fmt.Sprintf("%s: no vpc_endpoint_info", s.Name)
			}
		}
	}
	if shared == 0 || forks == 0 || usage == 0 || nulls == 0 {
		return fmt.Sprintf("the demo lacks a case: %d shared, %d forks, %d with usage, %d with null usage", shared, forks, usage, nulls)
	}
	return ""
}

// TestProjectDiscovery: with credentials of a user with two projects and
// no --api.project-id, the exporter polls both.
func TestProjectDiscovery(t *testing.T) {
	t.Parallel()
	sim := testbin.StartSim(t, "--extra-project-id=second-project")
	_, url := startExporter(t, envWithoutBearer(sim, false))
	_, fams := testbin.Scrape(t, url)
	got := testbin.LabelValues(fams, "clouddb_project_info", "project_id")
	if !slices.Equal(got, []string{testbin.SimProject, "second-project"}) {
		t.Errorf("projects polled: %v, want both of the user's", got)
	}
	for _, p := range []string{testbin.SimProject, "second-project"} {
		if len(testbin.LabelValues(fams, "clouddb_service_info", "service_id", "project_id", p)) == 0 {
			t.Errorf("no services of project %s", p)
		}
	}
}

// TestAdminRevision2026Routes: start, stop and rename reach the API once
// each, as do the new bodies of create, fork and setHA.
func TestAdminRevision2026Routes(t *testing.T) {
	t.Parallel()
	// forkService is not allowed by default: its answer holds a password.
	e := testbin.StartWithAdmin(t, testbin.StartSim(t, "--timing.configure=0s", "--timing.provision=0s"),
		"--admin.allow=stopService,startService,renameService,setHA,forkService,createService")
	fams := e.Scrape(t)
	dev := testbin.LabelValues(fams, "clouddb_service_info", "service_id", "name", "dev-sandbox")
	search := testbin.LabelValues(fams, "clouddb_service_info", "service_id", "name", "search-ai")
	if len(dev) != 1 || len(search) != 1 {
		t.Fatalf("demo services: dev-sandbox %v, search-ai %v", dev, search)
	}
	base := e.AdminURL + "/api/v1/projects/" + testbin.SimProject + "/services"
	e.Sim.ResetRequests(t)
	for _, c := range []struct{ op, path, body string }{
		{apiclient.OpStopService, "/" + dev[0] + "/stop", ``},
		{apiclient.OpStartService, "/" + dev[0] + "/start", ``},
		{apiclient.OpRenameService, "/" + dev[0] + "/rename", `{"name":"dev-sandbox-2"}`},
		{apiclient.OpSetHA, "/" + search[0] + "/setHA", `{"replica_count":2,"sync_replica_count":1}`},
		{apiclient.OpForkService, "/" + search[0] + "/forkService", `{"fork_strategy":"NOW","name":"search-fork"}`},
		{apiclient.OpCreateService, "", `{"name":"free","addons":[],"cpu_millis":"shared","memory_gbs":"shared"}`},
	} {
		r, _ := http.NewRequest(http.MethodPost, base+c.path, strings.NewReader(c.body))
		r.Header.Set("Authorization", "Bearer "+e.AdminToken)
		if c.body != "" {
			r.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			t.Errorf("%s: %d %s", c.op, resp.StatusCode, body)
		}
		// Let the stop settle (PAUSED) before the start.
		testbin.WaitFor(t, 30*time.Second, c.op+" to settle", func() bool {
			return e.Sim.Requests(t)[c.op] >= 1
		})
	}
	got := e.Sim.Requests(t)
	for _, op := range []string{apiclient.OpStopService, apiclient.OpStartService, apiclient.OpRenameService, apiclient.OpSetHA, apiclient.OpForkService, apiclient.OpCreateService} {
		if got[op] != 1 {
			t.Errorf("%s reached the API %d times, want once (%v)", op, got[op], got)
		}
	}
}
