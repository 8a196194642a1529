package dataplane

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/clouddb/clouddb_exporter/config"
)

func TestUsageFlags(t *testing.T) {
	parse := func(args ...string) (*config.Flags, error) {
		app := kingpin.New("test", "")
		f := config.AddFlags(app)
		_, err := app.Parse(args)
		return f, err
	}
	f, err := parse()
	if err != nil {
		t.Fatal(err)
	}
	u := usageKey.Of(f.Collect)
	if u.Enabled || u.Interval != 5*time.Minute || u.MaxJobs != 50 || u.Timestamps || len(u.Series) != 0 || len(u.selectedSeries()) != 15 || u.selectedSeries()[0] != "system_cpu_total_millicores" {
		t.Errorf("defaults = %+v", u)
	}
	f, err = parse("--collect.usage", "--collect.usage.series=database_qps", "--collect.usage.series=system_cpu_usage_millicores",
		"--collect.usage.environment=PROD", "--collect.usage.service-name-regex=db-.*", "--collect.usage.interval=2m")
	if err != nil {
		t.Fatal(err)
	}
	u = usageKey.Of(f.Collect)
	if !u.Enabled || !slices.Equal(u.Series, []string{"database_qps", "system_cpu_usage_millicores"}) || !slices.Equal(u.Environments, []string{"PROD"}) {
		t.Errorf("flags = %+v", u)
	}
	if m := u.NameMatcher(); m == nil || !m.MatchString("db-1") || m.MatchString("x-db-1") {
		t.Error("the name regex is not anchored")
	}
	for _, bad := range [][]string{
		{"--collect.usage", "--collect.usage.interval=30s"},
		{"--collect.usage", "--collect.usage.service-name-regex=("},
		{"--collect.usage", "--collect.usage.environment=prod"}, // would select nothing
		{"--collect.usage", "--collect.usage.max-jobs=-1"},
		{"--collect.usage", "--collect.usage.series=cpu_usage"}, // no documented series ends so: no metric
	} {
		f, err := parse(append(bad, "--api.url=https://x/v1", "--api.project-id=p")...)
		if err != nil {
			t.Fatalf("%v: %v", bad, err)
		}
		_, err = f.SingleProject(func(k string) string { return "k" })
		if err == nil || !strings.Contains(err.Error(), "--collect.usage.") {
			t.Errorf("%v: err = %v, want one naming the flag", bad, err)
		}
	}
	// Off, the usage settings are not checked.
	f, _ = parse("--collect.usage.interval=1s", "--api.url=https://x/v1", "--api.project-id=p")
	if _, err := f.SingleProject(func(string) string { return "k" }); err != nil {
		t.Errorf("usage off: %v", err)
	}
}

func TestUsageInFile(t *testing.T) {
	file := `projects:
- id: a
  access_key_env: K
  secret_key_env: K
  collect:
    usage:
      enabled: true
      interval: 10m
      series: [database_qps]
      environments: [PROD]
      service_name_regex: "orders-.*"
      max_jobs: 3
      timestamps: true
- id: b
  access_key_env: K
  secret_key_env: K
`
	collect := withReader(config.Collect{Interval: time.Minute, TransitionInterval: time.Second, Concurrency: 1}, usageKey, usageSettings{Interval: 5 * time.Minute, Series: documentedSeries, MaxJobs: 50})
	ps, err := parseFile(t, []byte(file), config.API{URL: "https://x/v1", Timeout: time.Second, RateLimit: 1}, collect, func(string) string { return "k" })
	if err != nil {
		t.Fatal(err)
	}
	a, b := usageKey.Of(ps[0].Collect), usageKey.Of(ps[1].Collect)
	if !a.Enabled || a.Interval != 10*time.Minute || !slices.Equal(a.Series, []string{"database_qps"}) || a.MaxJobs != 3 || !a.Timestamps || a.ServiceNameRegex != "orders-.*" {
		t.Errorf("project a's usage = %+v", a)
	}
	if b.Enabled || len(b.selectedSeries()) != 15 {
		t.Errorf("project b's usage = %+v, want the flags'", b)
	}
	_, err = parseFile(t, []byte(strings.Replace(file, "interval: 10m", "interval: 10s", 1)), config.API{URL: "https://x/v1", Timeout: time.Second, RateLimit: 1}, collect, func(string) string { return "k" })
	if err == nil || !strings.Contains(err.Error(), "projects[0].collect.usage.interval") {
		t.Errorf("a 10s usage interval: %v", err)
	}
	for _, c := range []struct{ from, to, key string }{
		{"series: [database_qps]", "series: [database_qps, database_qpm]", "projects[0].collect.usage.series"},
		{`service_name_regex: "orders-.*"`, `service_name_regex: "orders-("`, "projects[0].collect.usage.service_name_regex"},
	} {
		_, err = parseFile(t, []byte(strings.Replace(file, c.from, c.to, 1)), config.API{URL: "https://x/v1", Timeout: time.Second, RateLimit: 1}, collect, func(string) string { return "k" })
		if err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%s: %v, want an error naming %s", c.to, err, c.key)
		}
	}
	// A leading underscore is the same series.
	if _, err = parseFile(t, []byte(strings.Replace(file, "series: [database_qps]", "series: [_database_qps]", 1)), config.API{URL: "https://x/v1", Timeout: time.Second, RateLimit: 1}, collect, func(string) string { return "k" }); err != nil {
		t.Errorf("_database_qps: %v", err)
	}
}

// TestLogsDelayFlag: --collect.logs.delay is read as given, and one
// outside 0s to an hour is an error naming the flag.
func TestLogsDelayFlag(t *testing.T) {
	for _, bad := range []string{"-1s", "2h"} {
		f := parseFlags(t, "--collect.logs", "--collect.logs.delay="+bad, "--api.url=https://x/v1", "--api.project-id=p")
		if _, err := f.SingleProject(func(string) string { return "k" }); err == nil || !strings.Contains(err.Error(), "--collect.logs.delay") {
			t.Errorf("--collect.logs.delay=%s: err = %v, want one naming the flag", bad, err)
		}
	}
	f := parseFlags(t, "--collect.logs", "--collect.logs.delay=30s", "--api.url=https://x/v1", "--api.project-id=p")
	p, err := f.SingleProject(func(string) string { return "k" })
	if err != nil || logsKey.Of(p.Collect).Delay != 30*time.Second {
		t.Errorf("delay = %v, %v; want 30s", logsKey.Of(p.Collect).Delay, err)
	}
}

func parseFlags(t *testing.T, args ...string) *config.Flags {
	t.Helper()
	app := kingpin.New("test", "")
	f := config.AddFlags(app)
	if _, err := app.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestDemoTurnsReadersOn: the simulator's demo turns both readers on, unless
// the command line or the environment chose.
func TestDemoTurnsReadersOn(t *testing.T) {
	for _, tc := range []struct {
		args        []string
		env         map[string]string
		usage, logs bool
	}{
		{nil, nil, true, true},
		{[]string{"--no-collect.usage"}, nil, false, true},
		{[]string{"--no-collect.logs"}, nil, true, false},
		{nil, map[string]string{"CLOUDDB_COLLECT_USAGE": "false", "CLOUDDB_COLLECT_LOGS": "false"}, false, false},
	} {
		_, c := parseFlags(t, tc.args...).DemoDefaults(func(k string) string { return tc.env[k] })
		if Enabled(c, PartUsage) != tc.usage || Enabled(c, PartLogs) != tc.logs {
			t.Errorf("%v %v: usage %v logs %v, want %v %v", tc.args, tc.env, Enabled(c, PartUsage), Enabled(c, PartLogs), tc.usage, tc.logs)
		}
	}
}

// parseFile loads a configuration file of content b.
func parseFile(t *testing.T, b []byte, api config.API, collect config.Collect, getenv func(string) string) ([]config.Project, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "projects.yaml")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return config.LoadFile(path, api, collect, getenv)
}
