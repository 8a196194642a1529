package e2e

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestLandingPageLinks follows every link of the landing page: each must
// answer 200. The profiler is linked and served only with --web.enable-pprof.
func TestLandingPageLinks(t *testing.T) {
	t.Parallel()
	href := regexp.MustCompile(`href="([^"]+)"`)
	for _, pprof := range []bool{false, true} {
		args := []string{"--simulate"}
		if pprof {
			args = append(args, "--web.enable-pprof")
		}
		_, url := testbin.StartExporter(t, nil, args...)
		code, page := testbin.Get(url + "/")
		if code != http.StatusOK {
			t.Fatalf("GET /: %d", code)
		}
		var links []string
		for _, m := range href.FindAllStringSubmatch(page, -1) {
			if strings.HasPrefix(m[1], "http") { // the toolkit's links to the outside world
				continue
			}
			links = append(links, m[1])
			// A service discovery page may answer 503 until the replica
			// sets are listed: the link must lead to a 200 by then.
			testbin.WaitFor(t, 30*time.Second, fmt.Sprintf("pprof=%v: the landing page's link %s to answer 200", pprof, m[1]), func() bool {
				code, _ := testbin.Get(url + "/" + strings.TrimPrefix(m[1], "/"))
				return code == http.StatusOK
			})
		}
		if !pprof {
			// The status page: the demo project, its parts, the data plane on.
			testbin.WaitFor(t, 30*time.Second, "the status page to show the demo project's first cycle", func() bool {
				_, page = testbin.Get(url + "/")
				return strings.Contains(page, "demo-project") && strings.Contains(page, "<td>services</td><td><span class=\"ok\">success</span>")
			})
			for _, want := range []string{"API access (clouddb_up)</th><td><span class=\"ok\">up", "Usage series</th><td>on", "Log counts</th><td>on", "calls per cycle", "<td>peerings</td>"} {
				if !strings.Contains(page, want) {
					t.Errorf("the status page lacks %q:\n%s", want, page)
				}
			}
		}
		if len(links) < 6 {
			t.Errorf("pprof=%v: only %d links on the landing page: %v", pprof, len(links), links)
		}
		linked := strings.Contains(page, "/debug/pprof/")
		served, _ := testbin.Get(url + "/debug/pprof/")
		if linked != pprof || (served == http.StatusOK) != pprof {
			t.Errorf("--web.enable-pprof=%v: pprof linked %v, GET /debug/pprof/ %d", pprof, linked, served)
		}
	}
}

// TestSimulateListenAddress checks that the embedded simulator listens where
// --simulate.listen-address says, logs its control URL there, and that a
// taken port is a startup error naming the flag.
func TestSimulateListenAddress(t *testing.T) {
	t.Parallel()
	addr := testbin.FreeAddr(t)
	p, url := testbin.StartExporter(t, nil, "--simulate", "--simulate.listen-address="+addr, "--collect.interval=1s")
	if !strings.Contains(p.Output(), "http://"+addr+"/_sim/") {
		t.Errorf("the log does not give the simulator's control URL http://%s/_sim/:\n%s", addr, p.Output())
	}
	// At the documented control URL.
	testbin.SimAt(addr).Fault(t, `{"operation":"listServices","status":500}`)
	testbin.WaitFor(t, 2*time.Minute, "the fault to reach /metrics", testbin.MetricEquals(url+"/metrics",
		"clouddb_exporter_collector_success", 0, "collector", "services"))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }() // held only while the exporter tries it
	code, out := testbin.Run(t, testbin.Build(t, "."), nil, "--simulate", "--simulate.listen-address="+ln.Addr().String())
	if code != 2 || !strings.Contains(out, "--simulate.listen-address (CLOUDDB_SIMULATE_LISTEN_ADDRESS)") {
		t.Errorf("a taken simulator port: exit %d, want 2 naming the flag:\n%s", code, out)
	}
	code, out = testbin.Run(t, testbin.Build(t, "."), nil, "--simulate", "--simulate.listen-address=0.0.0.0:0")
	if code != 2 || !strings.Contains(out, "not a loopback address") {
		t.Errorf("a simulator beyond loopback: exit %d, want 2:\n%s", code, out)
	}
}

// TestConfigCheck runs --config.check on valid and invalid configurations:
// it exits 0 or 2 without serving anything.
func TestConfigCheck(t *testing.T) {
	t.Parallel()
	bin := testbin.Build(t, ".")
	dir := t.TempDir()
	key := filepath.Join(dir, "key")
	if err := os.WriteFile(key, []byte("k\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.yml")
	if err := os.WriteFile(good, []byte("projects:\n  - id: a\n    access_key_file: "+key+"\n    secret_key_file: "+key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.yml")
	if err := os.WriteFile(bad, []byte("projects:\n  - id: a\n    colect: {}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := []string{"CLOUDDB_API_URL=https://api.example.net/v1"}
	listen := "--web.listen-address=" + testbin.FreeAddr(t)
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		code int
		want string
	}{
		{"simulate", nil, []string{"--simulate"}, 0, "Configuration is valid"},
		{"simulate beyond loopback", nil, []string{"--simulate", "--simulate.listen-address=0.0.0.0:8090"}, 2, "not a loopback address"},
		{"simulator address without --simulate", url, []string{"--config.file=" + good, "--simulate.listen-address=127.0.0.1:8091"}, 2, "is set but --simulate is not"},
		{"simulator address from the environment without --simulate", append(url, "CLOUDDB_SIMULATE_LISTEN_ADDRESS=127.0.0.1:8091"), []string{"--config.file=" + good}, 2, "is set but --simulate is not"},
		{"config file", url, []string{"--config.file=" + good}, 0, "Configuration is valid"},
		{"config file with an unknown key", url, []string{"--config.file=" + bad}, 2, "projects[0].colect: unknown key (did you mean collect?)"},
		{"no credentials", url, []string{"--api.project-id=p"}, 2, "CLOUDDB_ACCESS_KEY or --api.access-key-file is required"},
		{"admin without authentication", url, []string{"--config.file=" + good, "--admin.listen-address=127.0.0.1:0"}, 2, "needs authentication"},
		{"admin allow of a read", url, []string{"--config.file=" + good, "--admin.listen-address=127.0.0.1:0", "--admin.token-file=" + key, "--admin.allow=listServices"}, 2, "is a read operation"},
		{"missing web config", url, []string{"--config.file=" + good, "--web.config.file=" + filepath.Join(dir, "nope.yml")}, 2, "--web.config.file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := testbin.Run(t, bin, tc.env, append([]string{"--config.check", listen}, tc.args...)...)
			if code != tc.code || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, want %d with %q:\n%s", code, tc.code, tc.want, out)
			}
			if strings.Contains(out, "Simulator started") || strings.Contains(out, "Listening on") {
				t.Errorf("--config.check started something:\n%s", out)
			}
		})
	}
}

// TestDisableExporterMetrics checks that --web.disable-exporter-metrics
// drops the Go and process metrics and nothing else: the dashboards take
// their job and instance variables from clouddb_exporter_build_info.
func TestDisableExporterMetrics(t *testing.T) {
	t.Parallel()
	own := []string{"go_goroutines", "process_open_fds"}
	for _, disable := range []bool{false, true} {
		args := []string{"--simulate"}
		if disable {
			args = append(args, "--web.disable-exporter-metrics")
		}
		_, url := testbin.StartExporter(t, nil, args...)
		_, fams := testbin.Scrape(t, url)
		for _, name := range own {
			if _, ok := fams[name]; ok == disable {
				t.Errorf("--web.disable-exporter-metrics=%v: %s present %v", disable, name, ok)
			}
		}
		for _, name := range []string{"clouddb_service_status", "clouddb_exporter_collector_success", "clouddb_exporter_config_last_reload_successful", "clouddb_exporter_build_info"} {
			if _, ok := fams[name]; !ok {
				t.Errorf("--web.disable-exporter-metrics=%v: %s missing", disable, name)
			}
		}
	}
}

// TestReloadWithoutConfigFile checks that with --simulate (whose project
// never changes) a reload is refused over HTTP and ignored on SIGHUP, and
// the exporter keeps serving. In single-project mode a reload re-reads the
// credential files (e2e/rotation_test.go).
func TestReloadWithoutConfigFile(t *testing.T) {
	t.Parallel()
	p, url := testbin.StartExporter(t, nil, "--simulate", "--web.enable-lifecycle")
	if code, body := testbin.Post(url+"/-/reload", ""); code != http.StatusBadRequest || !strings.Contains(body, "Nothing to reload") {
		t.Errorf("POST /-/reload: %d %q, want 400 Nothing to reload", code, body)
	}
	if err := p.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testbin.WaitFor(t, 10*time.Second, "SIGHUP to be ignored", func() bool {
		return strings.Contains(p.Output(), "Ignoring SIGHUP: the simulator's project never changes")
	})
	if code, _ := testbin.Get(url + "/-/healthy"); code != http.StatusOK || p.Exited() {
		t.Errorf("after SIGHUP: /-/healthy %d, exited %v", code, p.Exited())
	}
}
