package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

const composeDir = "deploy/docker-compose"

type composeFile struct {
	Services map[string]struct {
		Image string `yaml:"image"`
		Build *struct {
			Context string `yaml:"context"`
			Target  string `yaml:"target"`
		} `yaml:"build"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
	} `yaml:"services"`
}

func loadCompose(t *testing.T) composeFile {
	t.Helper()
	var c composeFile
	if err := yaml.Unmarshal(readFile(t, composeDir+"/docker-compose.yml"), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func envList(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// TestComposeFiles checks that every path the compose file mounts or builds
// exists, that Prometheus mounts the shipped rules where its configuration
// reads them, and that Grafana mounts the dashboards where its provisioning
// looks.
func TestComposeFiles(t *testing.T) {
	c := loadCompose(t)
	for _, name := range []string{"cloudsim", "clouddb-exporter", "prometheus", "alertmanager", "grafana"} {
		if _, ok := c.Services[name]; !ok {
			t.Errorf("service %s is missing", name)
		}
	}
	mounts := map[string]string{} // container path -> repository path
	stages := map[string]bool{}
	for _, s := range parseDockerfile(t) {
		stages[s.name] = true
	}
	for name, s := range c.Services {
		if s.Build != nil {
			if _, err := os.Stat(filepath.Join(testbin.RepoRoot(), composeDir, s.Build.Context, "Dockerfile")); err != nil {
				t.Errorf("%s: build context %s has no Dockerfile", name, s.Build.Context)
			}
			if !stages[s.Build.Target] {
				t.Errorf("%s: build target %q is not a Dockerfile stage", name, s.Build.Target)
			}
		} else if !strings.Contains(s.Image, ":") || strings.HasSuffix(s.Image, ":latest") {
			t.Errorf("%s: image %q is not pinned to a version", name, s.Image)
		}
		for _, v := range s.Volumes {
			parts := strings.Split(v, ":")
			if !strings.HasPrefix(parts[0], ".") {
				continue
			}
			rel := filepath.Join(composeDir, parts[0])
			if _, err := os.Stat(filepath.Join(testbin.RepoRoot(), rel)); err != nil {
				t.Errorf("%s mounts %s, which does not exist in the repository", name, parts[0])
			}
			mounts[parts[1]] = filepath.Clean(rel)
		}
	}
	var prom struct {
		RuleFiles []string `yaml:"rule_files"`
	}
	if err := yaml.Unmarshal(readFile(t, composeDir+"/prometheus/prometheus.yml"), &prom); err != nil {
		t.Fatal(err)
	}
	for _, rf := range prom.RuleFiles {
		if mounts[rf] != "alerts/clouddb.rules.yml" {
			t.Errorf("prometheus.yml reads rules from %s, mounted from %q, want alerts/clouddb.rules.yml", rf, mounts[rf])
		}
	}
	if mounts["/etc/prometheus/prometheus.yml"] != composeDir+"/prometheus/prometheus.yml" {
		t.Errorf("Prometheus does not mount prometheus/prometheus.yml: %v", mounts)
	}
	var provider struct {
		Providers []struct {
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	if err := yaml.Unmarshal(readFile(t, composeDir+"/grafana/provisioning/dashboards/clouddb.yml"), &provider); err != nil {
		t.Fatal(err)
	}
	if len(provider.Providers) != 1 || mounts[provider.Providers[0].Options.Path] != "dashboards" {
		t.Errorf("Grafana's dashboard provider does not read the mounted dashboards/: %+v %v", provider, mounts)
	}
	if mounts["/etc/grafana/provisioning"] == "" {
		t.Error("Grafana does not mount its provisioning")
	}
}

// TestComposeCommands runs the simulator and the exporter with the compose
// file's commands and environments (only the addresses moved to loopback)
// until the exporter is ready.
func TestComposeCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binaries")
	}
	c := loadCompose(t)
	sim, exp := c.Services["cloudsim"], c.Services["clouddb-exporter"]
	if v, _ := flagValue(sim.Command, "--web.listen-address"); v != "0.0.0.0:8090" {
		t.Errorf("the simulator listens on %q, want 0.0.0.0:8090 inside the compose network", v)
	}
	if v, _ := flagValue(exp.Command, "--api.url"); v != "http://cloudsim:8090/v1" {
		t.Errorf("the exporter polls %q, want http://cloudsim:8090/v1", v)
	}
	for _, k := range []string{"ACCESS_KEY", "SECRET_KEY", "API_KEY"} {
		if exp.Environment["CLOUDDB_"+k] == "" || exp.Environment["CLOUDDB_"+k] != sim.Environment["CLOUDSIM_"+k] {
			t.Errorf("CLOUDDB_%s %q is not the simulator's CLOUDSIM_%s %q", k, exp.Environment["CLOUDDB_"+k], k, sim.Environment["CLOUDSIM_"+k])
		}
	}
	simAddr := startSim(t, envList(sim.Environment), sim.Command...)
	args := append(withoutFlag(exp.Command, "--api.url"), fmt.Sprintf("--api.url=http://%s/v1", simAddr))
	runExporterReady(t, envList(exp.Environment), args...)
}
