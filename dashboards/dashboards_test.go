package dashboards_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/dashboards"
	"github.com/clouddb/clouddb_exporter/internal/testbin"
	"go.yaml.in/yaml/v3"
)

// dataPlaneFlags turn on the opt-in usage and log collectors whose series
// the dashboards' data-plane rows show, reading every 2 s.
var dataPlaneFlags = []string{"--collect.usage", "--collect.logs", "--collect.min-data-interval=1s", "--collect.usage.interval=2s", "--collect.logs.interval=2s"}

// notFromExporter are the names a dashboard may use that the exporter does
// not serve: up is added by Prometheus to every scrape.
var notFromExporter = []string{"up"}

func load(t *testing.T) []dashboards.Dashboard {
	t.Helper()
	ds, err := dashboards.Load()
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) < 3 {
		t.Fatalf("%d dashboards, want fleet overview, service detail and exporter health", len(ds))
	}
	return ds
}

func TestStyle(t *testing.T) {
	wantUIDs := map[string]string{
		"fleet-overview.json":  "clouddb-fleet-overview",
		"service-detail.json":  "clouddb-service-detail",
		"exporter-health.json": "clouddb-exporter-health",
	}
	titles := map[string]bool{}
	for _, d := range load(t) {
		t.Run(d.File, func(t *testing.T) {
			if want, ok := wantUIDs[d.File]; !ok || d.UID != want {
				t.Errorf("uid %q, want the fixed uid %q", d.UID, want)
			}
			if !strings.HasPrefix(d.Title, "CloudDB / ") || titles[d.Title] {
				t.Errorf("title %q: want a unique title starting with 'CloudDB / '", d.Title)
			}
			titles[d.Title] = true
			if !slices.Contains(d.Tags, "clouddb") {
				t.Errorf("tags %v lack clouddb", d.Tags)
			}
			if d.Editable == nil || *d.Editable {
				t.Error("editable must be false")
			}

			vars := map[string]dashboards.Variable{}
			for _, v := range d.Templating.List {
				vars[v.Name] = v
			}
			want := []string{"datasource", "job", "instance", "project_id"}
			if d.File == "service-detail.json" {
				want = append(want, "service_id")
			}
			for _, name := range want {
				v, ok := vars[name]
				switch {
				case !ok:
					t.Errorf("variable %s is missing", name)
				case name == "datasource":
					if v.Type != "datasource" || v.Expr() != "prometheus" {
						t.Errorf("variable datasource: type %q query %q, want a prometheus datasource variable", v.Type, v.Expr())
					}
				case name == "service_id":
					// Services are picked by name, the value is the id.
					if _, ok := dashboards.VariableQuery(v.Expr()); v.Type != "query" || !ok || v.Datasource == nil || v.Datasource.UID != "${datasource}" ||
						!strings.Contains(v.Regex, "(?<text>") || !strings.Contains(v.Regex, "(?<value>") || !strings.Contains(v.Expr(), "clouddb_service_info") {
						t.Errorf("variable %s: want a query of clouddb_service_info with a regex naming text and value, got %q %q", name, v.Expr(), v.Regex)
					}
				default:
					if _, _, ok := dashboards.LabelValuesQuery(v.Expr()); v.Type != "query" || !ok || v.Datasource == nil || v.Datasource.UID != "${datasource}" {
						t.Errorf("variable %s: want a label_values query on ${datasource}, got %q", name, v.Expr())
					}
				}
			}

			panels := d.AllPanels()
			if len(panels) == 0 {
				t.Fatal("no panels")
			}
			ids := map[int]bool{}
			for _, p := range panels {
				if ids[p.ID] {
					t.Errorf("panel %q: id %d used twice", p.Title, p.ID)
				}
				ids[p.ID] = true
				if p.Title == "" || p.Description == "" || p.FieldConfig.Defaults.Unit == "" {
					t.Errorf("panel %q: title, description and unit are all required (unit %q)", p.Title, p.FieldConfig.Defaults.Unit)
				}
				if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
					t.Errorf("panel %q: datasource %+v, want ${datasource}", p.Title, p.Datasource)
				}
				if len(p.Targets) == 0 {
					t.Errorf("panel %q has no query", p.Title)
				}
				for _, tg := range p.Targets {
					if strings.TrimSpace(tg.Expr) == "" {
						t.Errorf("panel %q: query %s is empty", p.Title, tg.RefID)
					}
					// A constant fallback shows a healthy value for an exporter
					// that is down; a 0 must come from the exporter's own series.
					if strings.Contains(tg.Expr, "vector(") {
						t.Errorf("panel %q query %s falls back on a constant vector(): key a 0 on a series of the exporter instead: %s", p.Title, tg.RefID, tg.Expr)
					}
					for _, problem := range dashboards.RateIntervalProblems(tg.Expr) {
						t.Errorf("panel %q query %s: %s", p.Title, tg.RefID, problem)
					}
					if !strings.Contains(tg.Expr, `job=~"$job"`) || !strings.Contains(tg.Expr, `instance=~"`+instanceVar(t, d, p)+`"`) {
						t.Errorf("panel %q query %s does not filter on $job and %s: %s", p.Title, tg.RefID, instanceVar(t, d, p), tg.Expr)
					}
				}
			}
		})
	}
}

// instanceVar is the variable a panel's queries filter the instance label
// on: $instance, or in a row repeated over a variable, that variable, whose
// own query must then filter on $instance.
func instanceVar(t *testing.T, d dashboards.Dashboard, p dashboards.Panel) string {
	t.Helper()
	row, ok := d.RowOf(p.ID)
	if !ok || row.Repeat == "" {
		return "$instance"
	}
	v, ok := d.Variable(row.Repeat)
	if !ok {
		t.Fatalf("row %q repeats over $%s, which does not exist", row.Title, row.Repeat)
	}
	if !strings.Contains(v.Expr(), `instance=~"$instance"`) {
		t.Errorf("variable %s does not filter on $instance: %s", v.Name, v.Expr())
	}
	return "$" + v.Name
}

func TestMetricNames(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`sum by (operation, code) (rate(clouddb_exporter_api_requests_total{job=~"$job", code!~"2.."}[$__rate_interval]))`, []string{"clouddb_exporter_api_requests_total"}},
		{`(clouddb_service_status{status="READY"} == 0) * on (job, instance, project_id, service_id) group_left (name) clouddb_service_info`, []string{"clouddb_service_status", "clouddb_service_info"}},
		{`count(x{a="b"} == 0) or vector(0)`, []string{"x"}},
		{`time() - clouddb_exporter_snapshot_timestamp_seconds * 1e3`, []string{"clouddb_exporter_snapshot_timestamp_seconds"}},
		{`histogram_quantile(0.99, sum by (le) (rate(h_bucket[$__rate_interval])))`, []string{"h_bucket"}},
	} {
		if got := dashboards.MetricNames(tc.expr); !slices.Equal(got, tc.want) {
			t.Errorf("MetricNames(%s) = %v, want %v", tc.expr, got, tc.want)
		}
	}
	for expr, bad := range map[string]bool{
		`rate(x[$__rate_interval])`: false, `rate(x[5m])`: true, `increase(x[1h])`: true, `irate(x[$__rate_interval])`: false,
		`max_over_time(x[10m])`: true, `x`: false,
	} {
		if got := len(dashboards.RateIntervalProblems(expr)) > 0; got != bad {
			t.Errorf("RateIntervalProblems(%s): problems %v, want %v", expr, got, bad)
		}
	}
}

// TestExportedMetrics checks that every metric a dashboard names is one the
// real exporter serves: it runs the built binary on its embedded simulator
// (with the admin surface enabled and used once)
// and reads the names from /metrics.
func TestExportedMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the exporter")
	}
	exp := testbin.StartWithAdmin(t, "", append([]string{"--simulate"}, dataPlaneFlags...)...)
	fams := exp.Scrape(t)
	exp.ExerciseAdmin(t, fams)
	// The admin metrics come with the request, the usage series one read
	// each: wait for every name of the admin and data-plane rows, and
	// then report whatever is still missing.
	var wanted []string
	for _, d := range load(t) {
		for _, p := range d.AllPanels() {
			if row, ok := d.RowOf(p.ID); ok && row.Repeat != "" {
				for _, tg := range p.Targets {
					wanted = append(wanted, dashboards.MetricNames(tg.Expr)...)
				}
			}
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		names := testbin.MetricNames(exp.Scrape(t))
		if !slices.ContainsFunc(wanted, func(n string) bool { return !names[n] }) || time.Now().After(deadline) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	allowed := testbin.MetricNames(exp.Scrape(t))
	for _, name := range notFromExporter {
		allowed[name] = true
	}
	for _, name := range recordingRules(t) {
		allowed[name] = true
	}
	if code, _ := testbin.Get(exp.URL + "/-/healthy"); code != http.StatusOK {
		t.Fatalf("exporter not healthy: %d", code)
	}

	for _, d := range load(t) {
		check := func(where, expr string) {
			names := dashboards.MetricNames(expr)
			if len(names) == 0 {
				t.Errorf("%s %s: no metric found in %s", d.File, where, expr)
			}
			for _, name := range names {
				if !allowed[name] {
					t.Errorf("%s %s: %s is not exported by clouddb_exporter", d.File, where, name)
				}
			}
		}
		for _, p := range d.AllPanels() {
			for _, tg := range p.Targets {
				check("panel "+p.Title+" "+tg.RefID, tg.Expr)
			}
		}
		for _, v := range d.Templating.List {
			if expr, ok := dashboards.VariableQuery(v.Expr()); ok {
				check("variable "+v.Name, expr)
			}
		}
	}
}

// recordingRules returns the names the shipped rule file records: the
// dashboards may use them (the rule file is loaded next to them).
func recordingRules(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "alerts", "clouddb.rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Rules []struct {
				Record string `yaml:"record"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range f.Groups {
		for _, r := range g.Rules {
			if r.Record != "" {
				names = append(names, r.Record)
			}
		}
	}
	if len(names) == 0 {
		t.Fatal("the rule file records nothing")
	}
	return names
}

// TestServiceLinks checks that the fleet tables link to the service
// dashboard with the row's target, project and service.
func TestServiceLinks(t *testing.T) {
	raw, err := dashboards.Raw("fleet-overview.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []json.RawMessage `json:"panels"`
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"table/Services not READY":                "/d/clouddb-service-detail?var-job=${__data.fields.job}&var-instance=${__data.fields.instance}&var-project_id=${__data.fields.project_id}&var-service_id=${__data.fields.service_id}",
		"table/Replica sets":                      "var-service_id=${__data.fields.service_id}",
		"table/Connection poolers":                "var-service_id=${__data.fields.service_id}",
		"table/Services by storage used":          "var-service_id=${__data.fields.service_id}",
		"state-timeline/Service status over time": "/d/clouddb-service-detail?var-job=${__field.labels.job}&var-instance=${__field.labels.instance}&var-project_id=${__field.labels.project_id}&var-service_id=${__field.labels.service_id}",
		"table/Services by CPU saturation":        "var-service_id=${__data.fields.service_id}",
		"table/Services by error logs":            "var-service_id=${__data.fields.service_id}",
	}
	// The panels, those of collapsed rows included (instead of their row).
	var panels []json.RawMessage
	for _, p := range d.Panels {
		var row struct {
			Panels []json.RawMessage `json:"panels"`
		}
		_ = json.Unmarshal(p, &row)
		if len(row.Panels) > 0 {
			panels = append(panels, row.Panels...)
		} else {
			panels = append(panels, p)
		}
	}
	for _, p := range panels {
		var head struct{ Type, Title string }
		_ = json.Unmarshal(p, &head)
		key := head.Type + "/" + head.Title
		if link, ok := want[key]; ok {
			if !strings.Contains(string(p), link) {
				t.Errorf("fleet-overview.json %s: no link %s", key, link)
			}
			delete(want, key)
		} else if strings.Contains(string(p), "clouddb-service-detail") {
			t.Errorf("fleet-overview.json %s links to the service dashboard, but has no service per row", key)
		}
	}
	for key := range want {
		t.Errorf("fleet-overview.json has no panel %s", key)
	}
	for _, d := range load(t) {
		for _, p := range d.AllPanels() {
			// A saturation is a share of the CPU, the rest are amounts.
			if d.File != "exporter-health.json" && strings.Contains(p.Title, "CPU") && !strings.Contains(p.Title, "saturation") && p.FieldConfig.Defaults.Unit != "suffix: cores" {
				t.Errorf("%s panel %q: unit %q, want cores", d.File, p.Title, p.FieldConfig.Defaults.Unit)
			}
		}
	}
}

// TestAdminRow checks that every panel on the admin surface's metrics is in
// a row repeated over a hidden variable that lists the instances exporting
// one admin metric, and, with the binary, that the exporter exports that
// metric from its start with --admin.listen-address and never without it:
// the row is there for the exporters whose admin surface is on, and for no
// other.
func TestAdminRow(t *testing.T) {
	var d dashboards.Dashboard
	for _, x := range load(t) {
		if x.File == "exporter-health.json" {
			d = x
		}
	}
	metrics := map[string]bool{}
	panels := 0
	for _, p := range d.AllPanels() {
		admin := false
		for _, tg := range p.Targets {
			for _, name := range dashboards.MetricNames(tg.Expr) {
				admin = admin || strings.HasPrefix(name, "clouddb_exporter_admin_")
			}
		}
		if !admin {
			continue
		}
		panels++
		row, ok := d.RowOf(p.ID)
		if !ok || row.Repeat == "" {
			t.Errorf("panel %q queries the admin metrics outside a repeated row", p.Title)
			continue
		}
		v, _ := d.Variable(row.Repeat)
		expr, label, ok := dashboards.LabelValuesQuery(v.Expr())
		names := dashboards.MetricNames(expr)
		if !ok || label != "instance" || len(names) != 1 || !strings.HasPrefix(names[0], "clouddb_exporter_admin_") {
			t.Errorf("row %q repeats over $%s = %q, want label_values(<an admin metric>, instance)", row.Title, v.Name, v.Expr())
			continue
		}
		if v.Hide != 2 || !v.Multi || !v.IncludeAll {
			t.Errorf("variable %s: hide %d multi %v includeAll %v, want a hidden variable with all its values", v.Name, v.Hide, v.Multi, v.IncludeAll)
		}
		metrics[names[0]] = true
	}
	if panels < 3 || len(metrics) != 1 {
		t.Fatalf("%d admin panels over %d row variables, want the admin panels in one repeated row", panels, len(metrics))
	}
	if testing.Short() {
		t.Skip("builds and runs the exporter")
	}
	var metric string
	for m := range metrics {
		metric = m
	}
	_, offURL := testbin.StartExporter(t, nil, "--simulate", "--no-collect.usage", "--no-collect.logs")
	_, off := testbin.Scrape(t, offURL)
	if testbin.MetricNames(off)[metric] {
		t.Errorf("without --admin.listen-address the exporter exports %s: the admin row would show", metric)
	}
	on := testbin.StartWithAdmin(t, "", "--simulate").Scrape(t)
	if !testbin.MetricNames(on)[metric] {
		t.Errorf("with --admin.listen-address and before any admin request the exporter lacks %s: the admin row would be hidden", metric)
	}
}

// TestDataPlaneRows checks that every panel on the series of the opt-in
// usage and log collectors is in a row repeated over a hidden variable
// listing the instances that report that collector's part: the rows are
// there for the exporters that run the collector, and for no other.
func TestDataPlaneRows(t *testing.T) {
	parts := map[string]string{} // dashboard/part -> panels seen
	for _, d := range load(t) {
		for _, p := range d.AllPanels() {
			part := ""
			for _, tg := range p.Targets {
				for _, name := range dashboards.MetricNames(tg.Expr) {
					switch {
					case strings.HasPrefix(name, "clouddb_service_system_"), strings.HasPrefix(name, "clouddb_service_database_"):
						part = "usage"
					case name == "clouddb_service_log_entries_total":
						part = "logs"
					}
				}
			}
			if part == "" {
				continue
			}
			parts[d.File+"/"+part] = p.Title
			row, ok := d.RowOf(p.ID)
			if !ok || row.Repeat == "" {
				t.Errorf("%s panel %q queries the %s collector's series outside a repeated row", d.File, p.Title, part)
				continue
			}
			v, _ := d.Variable(row.Repeat)
			if v.Hide != 2 || !strings.Contains(v.Expr(), `collector="`+part+`"`) {
				t.Errorf("%s panel %q: row repeated over $%s (%q, hide %d), want a hidden variable of the instances reporting the %s part", d.File, p.Title, row.Repeat, v.Expr(), v.Hide, part)
			}
		}
	}
	for _, want := range []string{"service-detail.json/usage", "service-detail.json/logs", "fleet-overview.json/usage", "fleet-overview.json/logs"} {
		if _, ok := parts[want]; !ok {
			t.Errorf("no panel for %s", want)
		}
	}
	if testing.Short() {
		return
	}
	// The variables' part: reported with the collector's flag only.
	for _, part := range []string{"usage", "logs"} {
		_, offURL := testbin.StartExporter(t, nil, "--simulate", "--no-collect.usage", "--no-collect.logs")
		_, on := testbin.StartExporter(t, nil, append([]string{"--simulate"}, dataPlaneFlags...)...)
		if has := partReported(t, offURL, part); has {
			t.Errorf("without --collect.%s the exporter reports collector=%q: its rows would show", part, part)
		}
		testbin.WaitFor(t, 30*time.Second, "collector="+part, func() bool { return partReported(t, on, part) })
	}
}

// partReported reports whether the exporter at url reports part in
// clouddb_exporter_collector_success.
func partReported(t *testing.T, url, part string) bool {
	t.Helper()
	_, fams := testbin.Scrape(t, url)
	for _, m := range fams["clouddb_exporter_collector_success"].GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == "collector" && lp.GetValue() == part {
				return true
			}
		}
	}
	return false
}
