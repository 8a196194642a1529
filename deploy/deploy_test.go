// Package deploy holds the deployment files (docker-compose demo,
// Kubernetes manifests, systemd unit) and, in its tests, checks them
// against the real binaries: every command line they contain is run until
// the exporter is ready, every mounted path exists, and the generated
// Kubernetes manifests match their sources.
package deploy

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// startSim starts the standalone simulator with args (a --web.listen-address
// in args is replaced by a free loopback address) and env, and returns its
// address.
func startSim(t *testing.T, env []string, args ...string) string {
	t.Helper()
	addr := testbin.FreeAddr(t)
	args = append(withoutFlag(args, "--web.listen-address"), "--web.listen-address="+addr)
	testbin.Start(t, testbin.Build(t, "./cmd/cloudsim"), env, args...)
	testbin.WaitFor(t, 30*time.Second, "the simulator", func() bool {
		code, _ := testbin.Get("http://" + addr + "/_sim/healthz")
		return code == http.StatusOK
	})
	return addr
}

// runExporterReady starts the exporter with args and env exactly as a
// deployment file gives them, except for the listen address (a free
// loopback one), and waits until /-/ready answers 200: the flags parse, the
// credentials are found and the first poll cycle succeeded.
func runExporterReady(t *testing.T, env []string, args ...string) {
	t.Helper()
	_, url := testbin.StartExporter(t, env, withoutFlag(args, "--web.listen-address")...)
	code, body := testbin.Get(url + "/metrics")
	if code != http.StatusOK || !strings.Contains(body, `clouddb_exporter_collector_success{collector="services"`) {
		t.Errorf("/metrics after ready: %d, no services collector", code)
	}
}

func withoutFlag(args []string, flag string) []string {
	var out []string
	for _, a := range args {
		if a != flag && !strings.HasPrefix(a, flag+"=") {
			out = append(out, a)
		}
	}
	return out
}

func flagValue(args []string, flag string) (string, bool) {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			return v, true
		}
	}
	return "", false
}

func readFile(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testbin.RepoRoot(), rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The simulator's default credentials, used by tests that run deployment
// files whose credentials are files.
var simCredentials = map[string]string{"access_key": "demo-access-key", "secret_key": "demo-secret-key", "api_key": "demo-api-key"}

func writeCredentials(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, v := range simCredentials {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
