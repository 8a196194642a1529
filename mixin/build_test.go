package mixin

import (
	"bytes"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-jsonnet/formatter"
)

var update = flag.Bool("update", false, "rewrite alerts/ and dashboards/ from the mixin")

// TestBuiltFilesUpToDate checks that alerts/clouddb.rules.yml and
// dashboards/*.json (and the Helm chart's copies) are exactly what the mixin
// builds with its default configuration, and that no dashboard is there
// that the mixin does not build. With -update it writes them instead.
func TestBuiltFilesUpToDate(t *testing.T) {
	files, err := Build("")
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(Dir(), "..")
	if *update {
		if err := Write(root, files); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Errorf("%s: %v (run `go test ./... -update` in mixin/)", name, err)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from the mixin's build: run `go test ./... -update` in mixin/ (and never edit it by hand)", name)
		}
	}
	for _, dir := range []string{DashboardsDir, filepath.Join(ChartFilesDir, DashboardsDir)} {
		onDisk, _ := filepath.Glob(filepath.Join(root, dir, "*.json"))
		for _, path := range onDisk {
			name := filepath.Join(dir, filepath.Base(path))
			if _, ok := files[name]; !ok {
				t.Errorf("%s is not built by the mixin", name)
			}
		}
	}
	var names []string
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	t.Logf("built %v", names)
}

// TestConfigOverrides checks that the selectors and thresholds users set in
// _config reach the built rules, the way a user's own jsonnet would set them.
func TestConfigOverrides(t *testing.T) {
	files, err := Build(`+ { _config+:: { exporterSelector: 'job="my-clouddb"', dataStaleThresholdSeconds: 1800, serviceUnstableFor: '10m', targetLabels: ['cluster', 'job', 'instance'] } }`)
	if err != nil {
		t.Fatal(err)
	}
	rules := string(files[RulesFile])
	for _, want := range []string{
		`up{job="my-clouddb"} == 0`,
		`clouddb_exporter_collector_last_success_timestamp_seconds > 1800`,
		`for: 10m`,
		`has been UNSTABLE for more than 10 minutes.`,
		`on (cluster, job, instance, project_id, service_id)`,
	} {
		if !strings.Contains(rules, want) {
			t.Errorf("rules built with overrides lack %q", want)
		}
	}
	for _, old := range []string{`up{job=~".*clouddb.*"}`, `> 900`} {
		if strings.Contains(rules, old) {
			t.Errorf("rules built with overrides still hold %q", old)
		}
	}
}

// TestKeepFiringForOff checks that an empty keepFiringFor leaves keep_firing_for
// out of every rule (for Prometheus before 2.42), and that the default puts
// it on every alert but the two on the scrape itself (CloudDBExporterDown
// and CloudDBExporterAbsent).
func TestKeepFiringForOff(t *testing.T) {
	on, err := Build("")
	if err != nil {
		t.Fatal(err)
	}
	off, err := Build(`+ { _config+:: { keepFiringFor: '' } }`)
	if err != nil {
		t.Fatal(err)
	}
	alerts := strings.Count(string(on[RulesFile]), "- alert: ")
	if got := strings.Count(string(on[RulesFile]), "keep_firing_for: 10m"); got != alerts-2 {
		t.Errorf("default: %d alerts with keep_firing_for: 10m, want %d (all but CloudDBExporterDown and CloudDBExporterAbsent)", got, alerts-2)
	}
	if strings.Contains(string(off[RulesFile]), "keep_firing_for") {
		t.Error("keepFiringFor: '' still builds keep_firing_for")
	}
}

// TestAdminPanelsOff checks that adminPanels: false leaves the admin row
// and its variable out of the exporter health dashboard, and only them.
func TestAdminPanelsOff(t *testing.T) {
	on, err := Build("")
	if err != nil {
		t.Fatal(err)
	}
	off, err := Build(`+ { _config+:: { adminPanels: false } }`)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(DashboardsDir, "exporter-health.json")
	for _, tc := range []struct {
		files map[string][]byte
		want  bool
	}{{on, true}, {off, false}} {
		d := string(tc.files[name])
		for _, s := range []string{`"repeat": "admin_instance"`, `"name": "admin_instance"`, "clouddb_exporter_admin_requests_total", "Process"} {
			want := tc.want || s == "Process"
			if got := strings.Contains(d, s); got != want {
				t.Errorf("adminPanels %v: %s holds %q: %v, want %v", tc.want, name, s, got, want)
			}
		}
	}
	for file := range on {
		if file != name && file != filepath.Join(ChartFilesDir, name) && !bytes.Equal(on[file], off[file]) {
			t.Errorf("adminPanels: false changed %s", file)
		}
	}
}

// TestDataPlanePanelsOff checks that dataPlanePanels: false leaves the node
// usage and log rows and their variables out of the service and fleet
// dashboards, and changes nothing else.
func TestDataPlanePanelsOff(t *testing.T) {
	on, err := Build("")
	if err != nil {
		t.Fatal(err)
	}
	off, err := Build(`+ { _config+:: { dataPlanePanels: false } }`)
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"service-detail.json", "fleet-overview.json"} {
		name := filepath.Join(DashboardsDir, file)
		for _, s := range []string{`"repeat": "usage_instance"`, `"repeat": "logs_instance"`, `"name": "usage_instance"`, "clouddb_service_log_entries_total", "clouddb_service_system_cpu_usage_cores"} {
			if !strings.Contains(string(on[name]), s) || strings.Contains(string(off[name]), s) {
				t.Errorf("%s: %q should be there by default and gone with dataPlanePanels: false", name, s)
			}
		}
	}
	for file := range on {
		if !strings.Contains(file, "service-detail.json") && !strings.Contains(file, "fleet-overview.json") && !bytes.Equal(on[file], off[file]) {
			t.Errorf("dataPlanePanels: false changed %s", file)
		}
	}
}

// TestFormatted keeps the jsonnet sources as jsonnetfmt formats them (its
// default options); -update rewrites them.
func TestFormatted(t *testing.T) {
	var files []string
	err := filepath.WalkDir(Dir(), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".libsonnet") || strings.HasSuffix(path, ".jsonnet")) {
			files = append(files, path)
		}
		return err
	})
	if err != nil || len(files) == 0 {
		t.Fatalf("no jsonnet files: %v", err)
	}
	for _, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		formatted, err := formatter.Format(path, string(b), formatter.DefaultOptions())
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if formatted == string(b) {
			continue
		}
		if *update {
			if err := os.WriteFile(path, []byte(formatted), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		t.Errorf("%s is not formatted as jsonnetfmt would: run go test ./... -update", path)
	}
}
