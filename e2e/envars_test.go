package e2e

import (
	"os"
	"path/filepath"
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

// TestBadBooleanNamesFlagAndVariable: a boolean flag or variable given a
// value that is not true or false stops the start with one line naming
// both; --flag=true and --flag=false are read as --flag and --no-flag.
func TestBadBooleanNamesFlagAndVariable(t *testing.T) {
	t.Parallel()
	bin := testbin.Build(t, ".")
	valid := []string{"CLOUDDB_API_URL=https://api.example.net/v1", "CLOUDDB_API_PROJECT_ID=p", "CLOUDDB_ACCESS_KEY=ak", "CLOUDDB_SECRET_KEY=topsecret-sk"}
	for _, tc := range []struct {
		env  []string
		args []string
	}{
		{args: []string{"--collect.usage=yes"}},
		{env: []string{"CLOUDDB_COLLECT_USAGE=yes"}},
	} {
		code, out := testbin.Run(t, bin, append(valid, tc.env...), append(tc.args, "--config.check")...)
		if code != 2 || !strings.Contains(out, "--collect.usage (CLOUDDB_COLLECT_USAGE) is true or false, not \"yes\"") || strings.Count(strings.TrimSpace(out), "\n") != 0 {
			t.Errorf("%v %v: exit code %d; want 2 and one line naming --collect.usage and CLOUDDB_COLLECT_USAGE:\n%s", tc.env, tc.args, code, out)
		}
	}
	if code, out := testbin.Run(t, bin, valid, "--config.check", "--collect.usage=true", "--web.enable-lifecycle=false"); code != 0 {
		t.Errorf("--collect.usage=true --web.enable-lifecycle=false: exit code %d, want 0:\n%s", code, out)
	}
}

// TestUnknownEnvarWarns: a misspelt CLOUDDB_ variable gets one WARN naming
// the variable it is nearest to, before the error it may have caused; the
// variables a configuration file names are not misspelt.
func TestUnknownEnvarWarns(t *testing.T) {
	t.Parallel()
	bin := testbin.Build(t, ".")
	env := []string{"CLOUDDB_API_ULR=https://api.example.net/v1", "CLOUDDB_API_PROJECT_ID=p", "CLOUDDB_ACCESS_KEY=ak", "CLOUDDB_SECRET_KEY=topsecret-sk"}
	code, out := testbin.Run(t, bin, env, "--config.check", "--log.format=logfmt")
	const warn = `msg="Environment variable matches no flag" variable=CLOUDDB_API_ULR nearest=CLOUDDB_API_URL`
	if code != 2 || strings.Count(out, "matches no flag") != 1 || !strings.Contains(out, warn) || strings.Index(out, warn) > strings.Index(out, "level=ERROR") {
		t.Errorf("exit code %d; want 2, and one WARN naming CLOUDDB_API_URL before the error:\n%s", code, out)
	}

	file := filepath.Join(t.TempDir(), "clouddb.yml")
	config := "projects:\n  - id: dev\n    access_key_env: CLOUDDB_DEV_ACCESS_KEY\n    secret_key_env: CLOUDDB_DEV_SECRET_KEY\n"
	if err := os.WriteFile(file, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	env = []string{"CLOUDDB_API_URL=https://api.example.net/v1", "CLOUDDB_DEV_ACCESS_KEY=ak", "CLOUDDB_DEV_SECRET_KEY=topsecret-sk"}
	if code, out := testbin.Run(t, bin, env, "--config.check", "--log.format=logfmt", "--config.file="+file); code != 0 || strings.Contains(out, "matches no flag") {
		t.Errorf("variables named by the configuration file: exit code %d, want 0 and no warning about them:\n%s", code, out)
	}
}
