package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/clouddb/clouddb_exporter/dashboards"
	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

const (
	composePrometheusConfig = "deploy/docker-compose/prometheus/prometheus.yml"
	rulesFile               = "alerts/clouddb.rules.yml"
	job                     = "clouddb-exporter"
	// rateInterval stands for Grafana's $__rate_interval: at least four
	// scrape intervals (1s here) and a few exporter poll cycles (2s).
	rateInterval = "15s"
)

// errorPanels are the dashboard queries (file, panel title, refId) that
// count errors: 0 while the API answers every request, above 0 during the
// API fault.
var errorPanels = []string{
	"exporter-health.json/API errors by operation and code/A",
	"exporter-health.json/API error ratio/A",
}

// goneWithExporter are the dashboard queries that must show nothing, not a
// reassuring 0, for an exporter that is down.
var goneWithExporter = append([]string{"fleet-overview.json/Services not READY/A"}, errorPanels...)

// TestPrometheus runs the simulator, the exporter and a real Prometheus
// with the shipped rules, evaluates every dashboard query and drives faults
// through the simulator until the matching alerts are active.
func TestPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator, the exporter and Prometheus")
	}
	t.Parallel()
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("prometheus is missing: scripts/test.sh installs Debian's prometheus package")
		}
		t.Skip("prometheus not found: run scripts/test.sh, which installs it")
	}

	exp := testbin.StartWithAdmin(t, testbin.StartSim(t),
		"--collect.interval=2s", "--collect.transition-interval=1s", "--collect.max-staleness=1m",
		"--api.rate-limit=200", "--api.rate-burst=200",
		"--api.max-retries=1", "--api.retry-base-delay=10ms", "--api.retry-max-delay=50ms",
		"--collect.usage", "--collect.logs", "--collect.min-data-interval=1s", "--collect.usage.interval=2s", "--collect.logs.interval=2s",
		"--pricing.file=../deploy/pricing.example.yml", "--rightsizing.window=30m")
	prom := startPrometheus(t, promBin, exp.Addr)

	// Every rule of the shipped file is loaded and evaluates without error.
	rules := prom.rules(t)
	if want := countAlerts(t); len(rules) != want {
		t.Fatalf("Prometheus loaded %d alerting rules, the file has %d", len(rules), want)
	}

	testbin.WaitFor(t, 60*time.Second, "five scrapes of the exporter", func() bool {
		r, _ := prom.query(fmt.Sprintf(`count_over_time(up{job=%q} [1m]) >= 5 and up{job=%q} == 1`, job, job))
		return len(r) == 1
	})
	for _, r := range prom.rules(t) {
		if r.Health == "err" {
			t.Errorf("rule %s: %s", r.Name, r.LastError)
		}
	}

	// Pick the resources to break: a READY PROD service, an active replica
	// set and a peering without an error.
	fams := exp.Scrape(t)
	var service string
	for _, id := range testbin.LabelValues(fams, "clouddb_service_status", "service_id", "status", "READY") {
		if len(testbin.LabelValues(fams, "clouddb_service_info", "service_id", "service_id", id, "environment", "PROD")) == 1 {
			service = id
			break
		}
	}
	rsIDs := testbin.LabelValues(fams, "clouddb_replica_set_status", "replica_set_id", "status", "active")
	peeringIDs := testbin.LabelValues(fams, "clouddb_vpc_peering_info", "peering_id")
	if service == "" || len(rsIDs) == 0 || len(peeringIDs) == 0 {
		t.Fatal("the demo lacks a READY PROD service, an active replica set or a peering")
	}
	// The service dashboard is checked on this replica set's service: a
	// TIMESERIESDB one has background jobs for the job panels.
	replicaSet := rsIDs[0]
	for _, id := range rsIDs {
		svc := testbin.LabelValues(fams, "clouddb_replica_set_info", "service_id", "replica_set_id", id)[0]
		if len(testbin.LabelValues(fams, "clouddb_service_info", "service_id", "service_id", svc, "service_type", "TIMESERIESDB")) == 1 {
			replicaSet = id
			break
		}
	}
	rsService := testbin.LabelValues(fams, "clouddb_replica_set_info", "service_id", "replica_set_id", replicaSet)[0]
	var peering, vpc string
	for _, id := range peeringIDs {
		if len(testbin.LabelValues(fams, "clouddb_vpc_peering_error", "peering_id", "peering_id", id)) == 0 {
			peering = id
			vpc = testbin.LabelValues(fams, "clouddb_vpc_peering_info", "vpc_id", "peering_id", id)[0]
			break
		}
	}
	if peering == "" {
		t.Fatal("every demo peering already reports an error")
	}

	// For the admin panels; the service is one the faults below leave alone.
	exp.ExerciseAdmin(t, fams, service, rsService)

	// Dashboards, while the fleet and the API are healthy.
	vars := map[string]string{
		"$__rate_interval": rateInterval, "${datasource}": "", "$datasource": "",
		"$job": job, "$instance": exp.Addr, "$admin_instance": exp.Addr, "$usage_instance": exp.Addr, "$logs_instance": exp.Addr, "$project_id": testbin.SimProject, "$service_id": rsService,
	}
	// The storage forecast fits a line on a day's maxima: none within a test.
	checkDashboards(t, prom, vars, func(key string) bool { return strings.Contains(key, "(forecast)") })
	for _, key := range errorPanels {
		if r, err := prom.query(panelExpr(t, vars, key)); err != nil || !allValues(r, func(v float64) bool { return v == 0 }) {
			t.Errorf("%s on a healthy fleet: %v %v, want 0", key, r, err)
		}
	}

	// The demo's own faults (a peering in error, a pending peering, a
	// service in transition) have made some alerts pending by now: proof
	// that the rules evaluate the exporter's data. Our targets are absent.
	testbin.WaitFor(t, 30*time.Second, "the demo's peering error to be pending", func() bool {
		return len(prom.alerts(t, "CloudDBVPCPeeringError")) > 0
	})
	type want struct {
		alert  string
		labels []string
	}
	fleetAlerts := []want{
		{"CloudDBServiceUnstable", []string{"service_id", service}},
		{"CloudDBProdServiceNotReady", []string{"service_id", service}},
		{"CloudDBReplicaSetError", []string{"replica_set_id", replicaSet}},
		{"CloudDBVPCPeeringError", []string{"peering_id", peering}},
	}
	apiAlerts := []want{{"CloudDBAPIErrors", nil}, {"CloudDBCollectorFailing", []string{"collector", "services"}}}
	for _, w := range append(append(fleetAlerts, apiAlerts...), want{"CloudDBExporterDown", nil}, want{"CloudDBExporterAbsent", nil}) {
		if a := prom.alerts(t, w.alert, w.labels...); len(a) > 0 {
			t.Errorf("%s is active before any fault: %+v", w.alert, a)
		}
	}

	// Fleet faults through the simulator's controls.
	exp.Sim.ServiceStatus(t, service, "UNSTABLE")
	exp.Sim.ReplicaSetStatus(t, rsService, replicaSet, "error")
	exp.Sim.PeeringError(t, vpc, peering, "peer account rejected the request")
	// A PANIC in the service's log, counted by the log collector: the
	// data-plane rules match the exporter's real series too.
	exp.Sim.AddLogEntries(t, service, []map[string]string{{"severity": "PANIC", "message": "could not write to file"}}, -1)
	for _, w := range append(fleetAlerts, want{"CloudDBServiceFatalLogs", []string{"service_id", service}}) {
		prom.waitAlert(t, w.alert, w.labels...)
	}
	// The description template resolved the joined name.
	if a := prom.alerts(t, "CloudDBServiceUnstable", "service_id", service); len(a) != 1 || a[0].Labels["name"] == "" ||
		!strings.Contains(a[0].Annotations["description"], a[0].Labels["name"]) {
		t.Errorf("CloudDBServiceUnstable lacks the service name: %+v", a)
	}

	// The API failing for every operation.
	exp.Sim.Fault(t, `{"operation":"","status":500}`)
	for _, w := range apiAlerts {
		prom.waitAlert(t, w.alert, w.labels...)
	}
	for _, key := range errorPanels {
		testbin.WaitFor(t, 30*time.Second, key+" above 0", func() bool {
			r, err := prom.query(panelExpr(t, vars, key))
			return err == nil && !allValues(r, func(v float64) bool { return v == 0 })
		})
	}
	exp.Sim.ClearFaults(t)

	// The exporter gone.
	exp.Stop(t)
	prom.waitAlert(t, "CloudDBExporterDown", "instance", exp.Addr)
	if a := prom.alerts(t, "CloudDBExporterAbsent"); len(a) > 0 {
		t.Errorf("CloudDBExporterAbsent is active for a target that is down: %+v", a)
	}
	for _, key := range goneWithExporter {
		testbin.WaitFor(t, 60*time.Second, key+" to show nothing for the stopped exporter", func() bool {
			r, err := prom.query(panelExpr(t, vars, key))
			return err == nil && len(r) == 0
		})
	}
}

// panelExpr is the query of a dashboard panel (file/title/refId) with the
// variables substituted.
func panelExpr(t *testing.T, vars map[string]string, key string) string {
	t.Helper()
	ds, err := dashboards.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		for _, p := range d.AllPanels() {
			for _, tg := range p.Targets {
				if d.File+"/"+p.Title+"/"+tg.RefID == key {
					expr := tg.Expr
					for k, v := range vars {
						expr = strings.ReplaceAll(expr, k, v)
					}
					return expr
				}
			}
		}
	}
	t.Fatalf("no dashboard query %s", key)
	return ""
}

// allValues reports whether the result has samples and ok holds for each.
func allValues(result []sample, ok func(float64) bool) bool {
	for _, s := range result {
		v, err := strconv.ParseFloat(fmt.Sprint(s.Value[1]), 64)
		if err != nil || !ok(v) {
			return false
		}
	}
	return len(result) > 0
}

// startPrometheus writes the docker-compose demo's Prometheus configuration
// with loopback targets, 1s intervals, no Alertmanager and the repository's
// rule file (unchanged, by absolute path), and starts Prometheus on it.
func startPrometheus(t *testing.T, bin, exporterAddr string) *promAPI {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testbin.RepoRoot(), composePrometheusConfig))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	addr := testbin.FreeAddr(t)
	global, _ := cfg["global"].(map[string]any)
	if global == nil {
		t.Fatalf("%s has no global section", composePrometheusConfig)
	}
	global["scrape_interval"], global["evaluation_interval"] = "1s", "1s"
	delete(cfg, "alerting")
	rules, _ := cfg["rule_files"].([]any)
	if len(rules) != 1 || filepath.Base(fmt.Sprint(rules[0])) != filepath.Base(rulesFile) {
		t.Fatalf("%s: rule_files %v, want the one shipped rule file", composePrometheusConfig, rules)
	}
	cfg["rule_files"] = []any{filepath.Join(testbin.RepoRoot(), rulesFile)}
	scrapes, _ := cfg["scrape_configs"].([]any)
	found := false
	for _, s := range scrapes {
		sc := s.(map[string]any)
		delete(sc, "scrape_interval")
		target := addr // the prometheus job scrapes Prometheus itself
		if sc["job_name"] == job {
			target, found = exporterAddr, true
		}
		sc["static_configs"] = []any{map[string]any{"targets": []any{target}}}
	}
	if !found {
		t.Fatalf("%s has no job %q", composePrometheusConfig, job)
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(file, out, 0o600); err != nil {
		t.Fatal(err)
	}
	p := testbin.Start(t, bin, nil, "--config.file="+file, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	api := &promAPI{url: "http://" + addr}
	testbin.WaitFor(t, 60*time.Second, "Prometheus to be ready", func() bool {
		if p.Exited() {
			t.Fatalf("prometheus exited:\n%s", p.Output())
		}
		code, _ := testbin.Get(api.url + "/-/ready")
		return code == http.StatusOK
	})
	return api
}

func countAlerts(t *testing.T) int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testbin.RepoRoot(), rulesFile))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" { // recording rules are not alerts
				n++
			}
		}
	}
	return n
}

// checkDashboards evaluates every panel query and variable query of every
// dashboard; each must parse and return data, except those skip selects,
// which are returned for a later check.
func checkDashboards(t *testing.T, prom *promAPI, vars map[string]string, skip func(key string) bool) map[string]string {
	t.Helper()
	ds, err := dashboards.Load()
	if err != nil {
		t.Fatal(err)
	}
	substitute := func(expr string) string {
		for k, v := range vars {
			expr = strings.ReplaceAll(expr, k, v)
		}
		return expr
	}
	queries := map[string]string{} // key -> expr
	deferred := map[string]string{}
	for _, d := range ds {
		for _, v := range d.Templating.List {
			// label_values(expr, label), or query_result(expr) of a
			// variable named after the label its regex takes the value from.
			if expr, ok := dashboards.VariableQuery(v.Expr()); ok {
				label := v.Name
				if _, l, ok := dashboards.LabelValuesQuery(v.Expr()); ok {
					label = l
				}
				queries[d.File+"/variable "+v.Name+"/"+label] = substitute(expr)
			}
		}
		for _, p := range d.AllPanels() {
			for _, tg := range p.Targets {
				key := d.File + "/" + p.Title + "/" + tg.RefID
				if skip(key) {
					deferred[key] = substitute(tg.Expr)
					continue
				}
				queries[key] = substitute(tg.Expr)
			}
		}
	}
	if len(queries) < 40 {
		t.Fatalf("only %d dashboard queries found", len(queries))
	}
	// Rates need a few samples: retry until all return data or the deadline.
	var missing []string
	deadline := time.Now().Add(60 * time.Second)
	for {
		missing = missing[:0]
		for key, expr := range queries {
			result, err := prom.query(expr)
			if err != nil {
				t.Errorf("%s: %v\n%s", key, err, expr)
				delete(queries, key)
				continue
			}
			if !hasData(key, result) {
				missing = append(missing, key)
			}
		}
		if len(missing) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	slices.Sort(missing)
	t.Logf("%d dashboard queries evaluated, %d deferred", len(queries), len(deferred))
	for _, key := range missing {
		t.Errorf("dashboard query returns no data: %s\n%s", key, queries[key])
	}
	for key := range deferred {
		t.Logf("not evaluated: %s", key)
	}
	return deferred
}

// hasData reports whether a query result has samples; for a variable's
// label_values query, samples carrying the label.
func hasData(key string, result []sample) bool {
	label := ""
	if strings.Contains(key, "/variable ") {
		label = key[strings.LastIndex(key, "/")+1:]
	}
	for _, s := range result {
		if label == "" || s.Metric[label] != "" {
			return true
		}
	}
	return false
}

// promAPI is a minimal client of Prometheus' HTTP API.
type promAPI struct{ url string }

type sample struct {
	Metric map[string]string `json:"metric"`
	Value  []any             `json:"value"`
}

func (p *promAPI) get(path string, out any) error {
	code, body := testbin.Get(p.url + path)
	var env struct {
		Status string          `json:"status"`
		Error  string          `json:"error"`
		Data   json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &env); err != nil {
		return fmt.Errorf("GET %s: %d %s", path, code, body)
	}
	if env.Status != "success" {
		return fmt.Errorf("GET %s: %d %s", path, code, env.Error)
	}
	return json.Unmarshal(env.Data, out)
}

// query runs an instant query; an error is a query Prometheus refused.
func (p *promAPI) query(expr string) ([]sample, error) {
	var data struct {
		Result []sample `json:"result"`
	}
	err := p.get("/api/v1/query?query="+url.QueryEscape(expr), &data)
	return data.Result, err
}

type ruleState struct {
	Name      string `json:"name"`
	Type      string `json:"type"`
	Health    string `json:"health"`
	LastError string `json:"lastError"`
}

func (p *promAPI) rules(t *testing.T) []ruleState {
	t.Helper()
	var data struct {
		Groups []struct {
			Rules []ruleState `json:"rules"`
		} `json:"groups"`
	}
	if err := p.get("/api/v1/rules?type=alert", &data); err != nil {
		t.Fatal(err)
	}
	var out []ruleState
	for _, g := range data.Groups {
		out = append(out, g.Rules...)
	}
	return out
}

type alert struct {
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
	State       string            `json:"state"`
}

// alerts returns the pending or firing alerts called name whose labels
// include labels (name, value pairs).
func (p *promAPI) alerts(t *testing.T, name string, labels ...string) []alert {
	t.Helper()
	var data struct {
		Alerts []alert `json:"alerts"`
	}
	if err := p.get("/api/v1/alerts", &data); err != nil {
		t.Fatal(err)
	}
	var out []alert
	for _, a := range data.Alerts {
		ok := a.Labels["alertname"] == name
		for i := 0; i+1 < len(labels); i += 2 {
			ok = ok && a.Labels[labels[i]] == labels[i+1]
		}
		if ok {
			out = append(out, a)
		}
	}
	return out
}

// waitAlert waits until alert name with labels is pending or firing, in
// /api/v1/alerts and in the ALERTS series. Firing would take the rule's
// whole for: (minutes); pending proves the expression matched, and the
// promtool tests in alerts/tests prove the for: timing.
func (p *promAPI) waitAlert(t *testing.T, name string, labels ...string) {
	t.Helper()
	matchers := []string{fmt.Sprintf("alertname=%q", name)}
	for i := 0; i+1 < len(labels); i += 2 {
		matchers = append(matchers, fmt.Sprintf("%s=%q", labels[i], labels[i+1]))
	}
	what := "ALERTS{" + strings.Join(matchers, ",") + "}"
	testbin.WaitFor(t, 60*time.Second, what, func() bool {
		a := p.alerts(t, name, labels...)
		if len(a) == 0 || (a[0].State != "pending" && a[0].State != "firing") {
			return false
		}
		r, err := p.query(what)
		return err == nil && len(r) > 0
	})
}

// TestPrometheusProjectDown: the key pair revoked under a running
// exporter, a real Prometheus with the shipped rules makes
// CloudDBProjectDown active, its description naming the cause the
// exporter sees (clouddb_project_down_cause) and its fix.
func TestPrometheusProjectDown(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator, the exporter and Prometheus")
	}
	t.Parallel()
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("prometheus is missing: scripts/test.sh installs Debian's prometheus package")
		}
		t.Skip("prometheus not found: run scripts/test.sh, which installs it")
	}
	sim := testbin.SimAt(testbin.StartSim(t))
	_, addr := testbin.StartExporter(t, sim.Env(), "--collect.interval=1s", "--collect.transition-interval=1s", "--api.max-retries=0")
	prom := startPrometheus(t, promBin, strings.TrimPrefix(addr, "http://"))
	testbin.WaitFor(t, 60*time.Second, "clouddb_up 1 in Prometheus", func() bool {
		r, _ := prom.query(`clouddb_up == 1`)
		return len(r) == 1
	})
	if a := prom.alerts(t, "CloudDBProjectDown"); len(a) > 0 {
		t.Errorf("CloudDBProjectDown active while the API answers: %+v", a)
	}
	sim.RevokeCredential(t, testbin.SimAccessKey)
	prom.waitAlert(t, "CloudDBProjectDown", "project_id", testbin.SimProject)
	a := prom.alerts(t, "CloudDBProjectDown", "project_id", testbin.SimProject)
	if len(a) != 1 || !strings.Contains(a[0].Annotations["description"], "the API refuses the key pair (401)") {
		t.Errorf("CloudDBProjectDown: %+v, want one naming the refused key pair", a)
	}
}
