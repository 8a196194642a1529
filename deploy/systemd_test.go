package deploy

import (
	"bufio"
	"slices"
	"strings"
	"testing"
)

// parseUnit returns the unit's settings by key (repeated keys in order),
// continuation lines joined.
func parseUnit(t *testing.T) map[string][]string {
	t.Helper()
	text := strings.ReplaceAll(string(readFile(t, "deploy/systemd/clouddb_exporter.service")), "\\\n", " ")
	out := map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "[") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("unit line %q", line)
		}
		out[k] = append(out[k], strings.TrimSpace(v))
	}
	return out
}

func TestSystemdHardening(t *testing.T) {
	u := parseUnit(t)
	for k, want := range map[string]string{
		"DynamicUser": "yes", "NoNewPrivileges": "yes", "ProtectSystem": "strict", "ProtectHome": "yes",
		"PrivateTmp": "yes", "PrivateDevices": "yes", "CapabilityBoundingSet": "", "RestrictSUIDSGID": "yes",
		"MemoryDenyWriteExecute": "yes", "ProtectKernelTunables": "yes", "ProtectControlGroups": "yes",
	} {
		if v, ok := u[k]; !ok || v[len(v)-1] != want {
			t.Errorf("%s=%v, want %q", k, v, want)
		}
	}
	if !slices.Contains(u["ExecReload"], "/bin/kill -HUP $MAINPID") {
		t.Errorf("ExecReload %v: SIGHUP reloads --config.file", u["ExecReload"])
	}
	if len(u["EnvironmentFile"]) != 1 {
		t.Errorf("EnvironmentFile %v", u["EnvironmentFile"])
	}
}

// TestSystemdExecStart runs ExecStart's command line with the unit's
// Environment= defaults, then the example environment file over them (as
// systemd orders them; its API URL pointed at a simulator of its project),
// and the credentials LoadCredential= would provide, until the exporter is
// ready. ExecStart passes no flag: a flag would silently win over the
// environment file's variable of the same setting.
func TestSystemdExecStart(t *testing.T) {
	u := parseUnit(t)
	exec := strings.Fields(u["ExecStart"][0])
	if exec[0] != "/usr/local/bin/clouddb_exporter" {
		t.Errorf("ExecStart runs %s", exec[0])
	}
	if len(exec) != 1 {
		t.Errorf("ExecStart passes %v: set them with Environment=, which the environment file overrides", exec[1:])
	}
	if testing.Short() {
		t.Skip("runs the binaries")
	}
	creds := writeCredentials(t)
	loaded := map[string]bool{}
	for _, lc := range u["LoadCredential"] {
		name, _, _ := strings.Cut(lc, ":")
		loaded[name] = true
	}
	var env []string
	for _, e := range u["Environment"] {
		if _, name, ok := strings.Cut(e, "%d/"); ok && !loaded[name] {
			t.Errorf("Environment=%s reads credential %s that no LoadCredential= provides", e, name)
		}
		env = append(env, strings.ReplaceAll(e, "%d", creds))
	}
	project := ""
	for _, line := range strings.Split(string(readFile(t, "deploy/systemd/clouddb_exporter.env")), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || !strings.HasPrefix(k, "CLOUDDB_") {
			t.Errorf("environment file line %q", line)
			continue
		}
		if strings.Contains(k, "_KEY") && !strings.HasSuffix(k, "_FILE") {
			t.Errorf("the environment file holds a credential: %s", k)
		}
		if k == "CLOUDDB_API_PROJECT_ID" {
			project = v
		}
		env = append(env, line)
	}
	if project == "" {
		t.Fatal("the environment file sets no CLOUDDB_API_PROJECT_ID")
	}
	sim := startSim(t, nil, "--project-id="+project)
	runExporterReady(t, append(env, "CLOUDDB_API_URL=http://"+sim+"/v1"), exec[1:]...)
}
