package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// startExporter starts the exporter at debug level: tests read its logs.
func startExporter(t *testing.T, env []string, args ...string) (*testbin.Process, string) {
	t.Helper()
	return testbin.StartExporter(t, env, append([]string{"--log.level=debug"}, args...)...)
}

func TestStartupErrors(t *testing.T) {
	t.Parallel()
	bin := testbin.Build(t, ".")
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	badYAML := filepath.Join(t.TempDir(), "bad.yml")
	if err := os.WriteFile(badYAML, []byte("projects:\n  - id: a\n    colect: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	okEnv := []string{"CLOUDDB_API_URL=https://api.example.net/v1", "CLOUDDB_API_PROJECT_ID=p", "CLOUDDB_ACCESS_KEY=ak", "CLOUDDB_SECRET_KEY=topsecret-sk"}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want []string
	}{
		{"nothing configured", nil, nil, []string{"--api.url (CLOUDDB_API_URL) is required", "CLOUDDB_ACCESS_KEY or --api.access-key-file is required"}},
		{"env and file for one credential", okEnv, []string{"--api.access-key-file=" + keyFile}, []string{"both CLOUDDB_ACCESS_KEY and --api.access-key-file are set"}},
		{"simulate with a URL", okEnv[:1], []string{"--simulate"}, []string{"--simulate polls its own simulator", "--api.url (CLOUDDB_API_URL)"}},
		{"simulate with a config file", nil, []string{"--simulate", "--config.file=" + badYAML}, []string{"--simulate and --config.file"}},
		{"config file with single-project credentials", okEnv[2:], []string{"--config.file=" + badYAML}, []string{"--config.file (CLOUDDB_CONFIG_FILE) lists the projects", "CLOUDDB_ACCESS_KEY"}},
		{"config file with an unknown key", nil, []string{"--config.file=" + badYAML}, []string{"--config.file", "projects[0].colect: unknown key (did you mean collect?)"}},
		{"unknown log format", okEnv, []string{"--log.format=xml"}, []string{`--log.format ($CLOUDDB_LOG_FORMAT): "xml" is not one of auto, console, logfmt, json`}},
		{"bad duration", okEnv, []string{"--collect.interval=soon"}, []string{`--collect.interval ($CLOUDDB_COLLECT_INTERVAL): "soon" is not a duration`}},
		{"bad duration from env", append(okEnv, "CLOUDDB_API_TIMEOUT=x"), nil, []string{`--api.timeout ($CLOUDDB_API_TIMEOUT): "x" is not a duration`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := testbin.Run(t, bin, tc.env, tc.args...)
			if code != 2 {
				t.Errorf("exit code %d, want 2; output:\n%s", code, out)
			}
			for _, want := range tc.want {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "topsecret-sk") {
				t.Errorf("a secret is in the output:\n%s", out)
			}
		})
	}
}

func TestVersionAndHelp(t *testing.T) {
	t.Parallel()
	bin := testbin.Build(t, ".")
	code, out := testbin.Run(t, bin, nil, "--version")
	if code != 0 || !strings.Contains(out, "clouddb_exporter, version") {
		t.Errorf("--version: %d %q", code, out)
	}
	code, out = testbin.Run(t, bin, []string{"CLOUDDB_SECRET_KEY=topsecret-sk"}, "--help")
	if code != 0 || !strings.Contains(out, "--collect.transition-interval") || strings.Contains(out, "topsecret-sk") {
		t.Errorf("--help: %d, secret shown or flags missing:\n%s", code, out)
	}
}

// TestSimulateDemo runs the README's first command (go run . --simulate) as
// the built binary and checks what a new user sees.
func TestSimulateDemo(t *testing.T) {
	t.Parallel()
	p, url := startExporter(t, nil, "--simulate")
	body, fams := testbin.Scrape(t, url)

	for _, name := range []string{
		"clouddb_exporter_build_info", "clouddb_exporter_api_requests_total", "clouddb_exporter_api_request_duration_seconds",
		"clouddb_exporter_api_retries_total", "clouddb_exporter_api_rate_limit_wait_seconds_total",
		"clouddb_exporter_collector_success", "clouddb_exporter_collector_duration_seconds",
		"clouddb_exporter_collector_last_success_timestamp_seconds", "clouddb_exporter_config_last_reload_successful",
		"clouddb_service_info", "clouddb_service_status", "clouddb_service_paused", "clouddb_service_created_timestamp_seconds",
		"clouddb_service_status_changed_timestamp_seconds", "clouddb_service_cpu_cores", "clouddb_service_memory_bytes",
		"clouddb_service_volume_info", "clouddb_service_connection_pooler_enabled", "clouddb_replica_set_info",
		"clouddb_replica_set_status", "clouddb_replica_set_nodes", "clouddb_replica_set_cpu_cores", "clouddb_replica_set_memory_bytes",
		"clouddb_replica_set_connection_pooler_enabled", "clouddb_vpc_info", "clouddb_vpc_peering_info", "clouddb_vpc_peering_status",
		"clouddb_vpc_peering_error", "clouddb_api_key_info", "clouddb_api_key_created_timestamp_seconds",
		// The demo prices its fleet with deploy/pricing.example.yml.
		"clouddb_service_estimated_cost_per_hour", "clouddb_pricing_info", "clouddb_pricing_unpriced_resources",
	} {
		if _, ok := fams[name]; !ok {
			t.Errorf("/metrics lacks %s", name)
		}
	}
	if v, ok := testbin.Value(fams, "clouddb_pricing_unpriced_resources"); !ok || v != 0 {
		t.Errorf("the example price file leaves %v components of the demo unpriced (%v); want 0", v, ok)
	}
	want, _ := os.ReadFile(filepath.Join(testbin.RepoRoot(), "VERSION"))
	if _, ok := testbin.Value(fams, "clouddb_exporter_build_info", "version", strings.TrimSpace(string(want))); !ok {
		t.Errorf("build_info lacks the version of the VERSION file: %v", fams["clouddb_exporter_build_info"])
	}
	if v, ok := testbin.Value(fams, "clouddb_exporter_api_requests_total", "operation", "listServices", "code", "200"); !ok || v < 1 {
		t.Errorf("API request metrics not counted: %v %v", v, ok)
	}
	for _, part := range []string{"services", "replica_sets", "vpcs", "peerings", "auth"} {
		if v, ok := testbin.Value(fams, "clouddb_exporter_collector_success", "collector", part); !ok || v != 1 {
			t.Errorf("collector %s success = %v (%v)", part, v, ok)
		}
	}

	// Lint the whole output twice: with client_golang's promlint and with
	// promtool, which the test command installs.
	problems, err := promlint.New(strings.NewReader(body)).Lint()
	if err != nil || len(problems) > 0 {
		t.Errorf("promlint: %v %+v", err, problems)
	}
	if promtool, err := exec.LookPath("promtool"); err == nil {
		cmd := exec.Command(promtool, "check", "metrics")
		cmd.Stdin = strings.NewReader(body)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("promtool check metrics: %v\n%s", err, out)
		}
	} else if os.Getenv("CI") != "" {
		t.Error("promtool is missing: the test command must install it")
	}

	for path, want := range map[string]string{
		"/-/healthy": "Healthy", "/-/ready": "Ready", "/": "CloudDB Exporter",
	} {
		if code, body := testbin.Get(url + path); code != http.StatusOK || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d %q", path, code, body)
		}
	}
	for _, kind := range []string{"services", "replica-sets", "poolers"} {
		code, body := testbin.Get(url + "/sd/" + kind)
		var groups []struct {
			Targets []string          `json:"targets"`
			Labels  map[string]string `json:"labels"`
		}
		if err := json.Unmarshal([]byte(body), &groups); code != http.StatusOK || err != nil || len(groups) == 0 {
			t.Fatalf("GET /sd/%s: %d %v %s", kind, code, err, body)
		}
		if g := groups[0]; len(g.Targets) != 1 || g.Labels["__meta_clouddb_project_id"] != "demo-project" || g.Labels["__meta_clouddb_service_id"] == "" {
			t.Errorf("/sd/%s target group %+v", kind, g)
		}
	}

	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.Wait(t, 15*time.Second); code != 0 {
		t.Errorf("exit code after SIGTERM: %d", code)
	}
	if !strings.Contains(p.Output(), "Shutting down") {
		t.Error("no shutdown log line")
	}
}

// TestChangesReachMetrics forces faults through the standalone simulator's
// controls and waits for each to show on /metrics.
func TestChangesReachMetrics(t *testing.T) {
	t.Parallel()
	sim := testbin.SimAt(testbin.StartSim(t, "--timing.provision=2s", "--timing.configure=2s"))

	// Full cycles every second, with the rate limit to match (the call
	// budget of a cycle is 90% of rate x interval): forced statuses on
	// settled resources are seen by the next cycle.
	_, url := startExporter(t, sim.Env(), "--collect.interval=1s", "--collect.transition-interval=300ms", "--api.rate-limit=100")
	_, fams := testbin.Scrape(t, url)
	services := testbin.LabelValues(fams, "clouddb_service_status", "service_id", "status", "READY")
	// The replica set and its service from one series: two lists of label
	// values need not be in the same order.
	var replicaSets, rsServices []string
	for _, m := range fams["clouddb_replica_set_status"].GetMetric() {
		labels := map[string]string{}
		for _, lp := range m.GetLabel() {
			labels[lp.GetName()] = lp.GetValue()
		}
		if labels["status"] == "active" && m.GetGauge().GetValue() == 1 {
			replicaSets, rsServices = append(replicaSets, labels["replica_set_id"]), append(rsServices, labels["service_id"])
		}
	}
	peerings := testbin.LabelValues(fams, "clouddb_vpc_peering_error", "peering_id")
	if len(services) == 0 || len(replicaSets) == 0 || len(fams["clouddb_vpc_peering_info"].GetMetric()) == 0 {
		t.Fatalf("demo scenario lacks ready services, active replica sets or peerings")
	}
	var peeringID, vpcID string
	for _, m := range fams["clouddb_vpc_peering_error"].GetMetric() {
		if m.GetGauge().GetValue() == 0 {
			for _, lp := range m.GetLabel() {
				switch lp.GetName() {
				case "peering_id":
					peeringID = lp.GetValue()
				case "vpc_id":
					vpcID = lp.GetValue()
				}
			}
			break
		}
	}
	if peeringID == "" {
		t.Fatalf("no peering without an error in the demo (errors: %v)", peerings)
	}

	sim.ServiceStatus(t, services[0], "UNSTABLE")
	sim.ReplicaSetStatus(t, rsServices[0], replicaSets[0], "error")
	sim.PeeringError(t, vpcID, peeringID, "peer account rejected the request")

	for _, want := range []struct {
		name   string
		labels []string
	}{
		{"clouddb_service_status", []string{"service_id", services[0], "status", "UNSTABLE"}},
		{"clouddb_replica_set_status", []string{"replica_set_id", replicaSets[0], "status", "error"}},
		{"clouddb_vpc_peering_error", []string{"peering_id", peeringID}},
	} {
		testbin.WaitFor(t, 30*time.Second, testbin.Describe(want.name, want.labels...)+" = 1",
			testbin.MetricEquals(url+"/metrics", want.name, 1, want.labels...))
	}
	// The peering's message is free text: only the bounded message label
	// of its one clouddb_vpc_peering_error_info series carries it.
	testbin.WaitFor(t, 30*time.Second, "the peering's error message on /metrics",
		testbin.MetricEquals(url+"/metrics", "clouddb_vpc_peering_error_info", 1, "peering_id", peeringID, "message", "peer account rejected the request"))
	_, body := testbin.Get(url + "/metrics")
	for _, line := range strings.Split(body, "\n") {
		if strings.Contains(line, "peer account rejected") && !strings.HasPrefix(line, "clouddb_vpc_peering_error_info{") {
			t.Errorf("the error message is outside clouddb_vpc_peering_error_info: %s", line)
		}
	}
}

// TestTransitionsFollowedBetweenCycles proves the fast path: with full
// cycles an hour apart, a service that the demo has in CONFIGURING and that
// then settles can only be seen READY through getService calls of the
// transition follow-up.
func TestTransitionsFollowedBetweenCycles(t *testing.T) {
	t.Parallel()
	sim := testbin.SimAt(testbin.StartSim(t))
	_, url := startExporter(t, sim.Env(), "--collect.interval=1h", "--collect.max-staleness=2h", "--collect.transition-interval=300ms")
	_, fams := testbin.Scrape(t, url)
	var transitional []string
	for _, status := range []string{"QUEUED", "CONFIGURING"} {
		transitional = append(transitional, testbin.LabelValues(fams, "clouddb_service_status", "service_id", "status", status)...)
	}
	if len(transitional) == 0 {
		t.Fatal("the demo has no service in transition at startup")
	}
	sim.ServiceStatus(t, transitional[0], "READY")
	testbin.WaitFor(t, 60*time.Second, "the transitional service to be seen READY",
		testbin.MetricEquals(url+"/metrics", "clouddb_service_status", 1, "service_id", transitional[0], "status", "READY"))

	if requests := sim.Requests(t); requests["listServices"] != 1 || requests["getService"] == 0 {
		t.Errorf("requests %v: want one full cycle (listServices=1) and getService calls", requests)
	}
}

func TestConfigReload(t *testing.T) {
	t.Parallel()
	sim := testbin.StartSim(t)
	dir := t.TempDir()
	for name, content := range map[string]string{"access": testbin.SimAccessKey, "secret": testbin.SimSecretKey} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(dir, "clouddb.yml")
	project := func(id string) string {
		return fmt.Sprintf("  - id: %s\n    access_key_file: %s\n    secret_key_file: %s\n", id, filepath.Join(dir, "access"), filepath.Join(dir, "secret"))
	}
	write := func(content string) {
		t.Helper()
		if err := os.WriteFile(cfg, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("projects:\n" + project("demo-project"))
	p, url := startExporter(t, []string{"CLOUDDB_API_URL=http://" + sim + "/v1"}, "--config.file="+cfg, "--collect.interval=1s", "--web.enable-lifecycle")
	reloadOK := func(want float64) func() bool {
		return testbin.MetricEquals(url+"/metrics", "clouddb_exporter_config_last_reload_successful", want)
	}
	testbin.WaitFor(t, 10*time.Second, "a successful initial load", reloadOK(1))

	// A broken file is refused and the old configuration keeps running;
	// the reason is logged, and not answered (it names files).
	write("projects:\n  - id: [\n")
	if code, body := testbin.Post(url+"/-/reload", ""); code != http.StatusBadRequest || !strings.Contains(body, "RELOAD_FAILED") || strings.Contains(body, dir) {
		t.Errorf("reload of a broken file: %d %q, want 400 RELOAD_FAILED without the file's path", code, body)
	}
	testbin.WaitFor(t, 10*time.Second, "the reason in the log", func() bool {
		return strings.Contains(p.Output(), "Configuration not applied")
	})
	testbin.WaitFor(t, 10*time.Second, "the failed reload to be reported", reloadOK(0))
	testbin.WaitFor(t, 10*time.Second, "the old project to keep polling", testbin.MetricEquals(url+"/metrics",
		"clouddb_exporter_collector_success", 1, "project_id", "demo-project", "collector", "services"))

	// SIGHUP applies a good file: a second project appears (the demo
	// credentials do not belong to it, so its collectors fail: visibly).
	write("projects:\n" + project("demo-project") + project("other-project"))
	if err := p.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testbin.WaitFor(t, 10*time.Second, "the reload by SIGHUP", reloadOK(1))
	testbin.WaitFor(t, 10*time.Second, "the second project's failing collector", testbin.MetricEquals(url+"/metrics",
		"clouddb_exporter_collector_success", 0, "project_id", "other-project", "collector", "services"))

	// Removing a project removes its series.
	// At most one reload every 5 s over HTTP: retried until accepted.
	write("projects:\n" + project("demo-project"))
	testbin.WaitFor(t, 20*time.Second, "the reload to be accepted", func() bool {
		code, body := testbin.Post(url+"/-/reload", "")
		if code != http.StatusOK && code != http.StatusTooManyRequests {
			t.Fatalf("reload: %d %s", code, body)
		}
		return code == http.StatusOK
	})
	if _, body := testbin.Get(url + "/metrics"); strings.Contains(body, `project_id="other-project"`) {
		t.Error("series of a removed project remain")
	}
	if strings.Contains(p.Output(), testbin.SimSecretKey) {
		t.Error("the secret key is in the log")
	}
}
