package e2e

import (
	"strings"
	"testing"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestDiscoveryModeSaysSo: without a project id or a configuration file
// the exporter polls every project the keys reach; one INFO line at
// startup says so and how to pin one project.
func TestDiscoveryModeSaysSo(t *testing.T) {
	t.Parallel()
	sim := testbin.StartSim(t)
	p, _ := testbin.StartExporter(t, envWithoutBearer(sim, false), "--log.format=logfmt", "--collect.interval=1h")
	var lines []string
	for _, line := range strings.Split(p.Output(), "\n") {
		if strings.Contains(line, "project discovery") {
			lines = append(lines, line)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], "level=INFO") || !strings.Contains(lines[0], "--api.project-id (CLOUDDB_API_PROJECT_ID)") {
		t.Errorf("want one INFO line about project discovery naming --api.project-id (CLOUDDB_API_PROJECT_ID), got %q:\n%s", lines, p.Output())
	}
}

// TestDeprecatedEnvarWarns: a variable of an earlier release still sets
// its flag, with one WARN line naming the new variable.
func TestDeprecatedEnvarWarns(t *testing.T) {
	t.Parallel()
	bin := testbin.Build(t, ".")
	env := []string{"CLOUDDB_API_URL=https://api.example.net/v1", "CLOUDDB_PROJECT_ID=p", "CLOUDDB_ACCESS_KEY=ak", "CLOUDDB_SECRET_KEY=topsecret-sk"}
	code, out := testbin.Run(t, bin, env, "--config.check", "--log.format=logfmt")
	// The tests may run as root, which is warned about too.
	if code != 0 || strings.Count(out, "level=WARN")-strings.Count(out, `msg="Unsafe setting" setting=user`) != 1 || !strings.Contains(out, `msg="Deprecated environment variable" variable=CLOUDDB_PROJECT_ID use=CLOUDDB_API_PROJECT_ID`) {
		t.Errorf("exit code %d; want 0 and one WARN naming CLOUDDB_API_PROJECT_ID:\n%s", code, out)
	}
}
