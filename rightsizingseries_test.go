package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/pricing"
)

// TestRightsizingNeedsItsSeries: a usage series selection without the
// primary's CPU or memory use would leave every finding insufficient_data
// forever, without a word; the start, --config.check and a reload refuse it,
// naming the setting, what it leaves out and both ways out.
func TestRightsizingNeedsItsSeries(t *testing.T) {
	// The single project's keys; the file's own; none for the demo.
	keys := map[string]string{"CLOUDDB_ACCESS_KEY": "ak", "CLOUDDB_SECRET_KEY": "sk"}
	fileKeys := map[string]string{"A_KEY": "ak", "A_SECRET": "sk"}
	file := filepath.Join(t.TempDir(), "config.yml")
	if err := os.WriteFile(file, []byte(`projects:
  - {id: a, access_key_env: A_KEY, secret_key_env: A_SECRET, collect: {usage: {enabled: true}}}
  - {id: b, access_key_env: A_KEY, secret_key_env: A_SECRET, collect: {usage: {enabled: true, series: [system_memory_usage_bytes, system_disk_usage_bytes]}}}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	single := []string{"--api.url=http://127.0.0.1:1/v1", "--api.project-id=p", "--collect.usage"}
	for _, c := range []struct {
		name string
		args []string
		want []string // in the error; none: valid
	}{
		{"memory left out", append(single, "--collect.usage.series=system_cpu_usage_millicores"),
			[]string{"--collect.usage.series (CLOUDDB_COLLECT_USAGE_SERIES)", "system_memory_usage_bytes", "--no-rightsizing"}},
		{"both left out", append(single, "--collect.usage.series=system_disk_usage_bytes"),
			[]string{"system_cpu_usage_millicores, system_memory_usage_bytes"}},
		{"the demo", []string{"--simulate", "--collect.usage.series=system_cpu_usage_millicores"},
			[]string{"--collect.usage.series", "system_memory_usage_bytes"}},
		{"a project of the file", []string{"--config.file=" + file, "--api.url=http://127.0.0.1:1/v1"},
			[]string{"--config.file: projects[1].collect.usage.series", "system_cpu_usage_millicores", "--no-rightsizing"}},
		{"rightsizing off", append(single, "--collect.usage.series=system_disk_usage_bytes", "--no-rightsizing"), nil},
		{"both read", append(single, "--collect.usage.series=system_cpu_usage_millicores", "--collect.usage.series=system_memory_usage_bytes"), nil},
		{"every series", single, nil},
		{"usage off", []string{"--api.url=http://127.0.0.1:1/v1", "--api.project-id=p"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			vars := keys
			switch {
			case strings.HasPrefix(c.args[0], "--config.file"):
				vars = fileKeys
			case c.args[0] == "--simulate":
				vars = nil
			}
			env := func(name string) string { return vars[name] }
			f, err := parseFlags(c.args, env)
			if err != nil {
				t.Fatal(err)
			}
			_, err = checkConfig(f, env)
			switch {
			case c.want == nil && err != nil:
				t.Errorf("%v", err)
			case c.want != nil && err == nil:
				t.Errorf("no error; want one saying %q", c.want)
			case c.want != nil:
				for _, w := range c.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("%v; want it to say %q", err, w)
					}
				}
			}
		})
	}
}

// TestReloadChecksRightsizingSeries: a reload whose projects leave the
// memory use out fails, as the start would.
func TestReloadChecksRightsizingSeries(t *testing.T) {
	f, err := parseFlags(nil, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	f.config.ConfigFile = "config.yml" // a reload re-reads the file's projects
	_, collect := f.config.Defaults()
	narrow, err := parseFlags([]string{"--collect.usage", "--collect.usage.series=system_cpu_usage_millicores"}, func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	_, narrowCollect := narrow.config.Defaults()
	projects := []config.Project{{ID: "a", Collect: collect}}
	load := pricedLoad(func() ([]config.Project, error) { return projects, nil }, f, pricing.NewEstimator(discardPublisher{}, nil, nil))
	if _, err := load(); err != nil {
		t.Fatalf("first load: %v", err)
	}
	projects = append(projects, config.Project{ID: "b", Collect: narrowCollect})
	if _, err := load(); err == nil || !strings.Contains(err.Error(), "system_memory_usage_bytes") {
		t.Errorf("reload with project b leaving memory out: %v; want an error naming system_memory_usage_bytes", err)
	}
}
