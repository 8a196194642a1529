package e2e

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestAuditFIFOAfterRotation: a FIFO put at the audit path after a rotation
// froze the whole admin surface on the reopen (an unauthenticated 401
// included) and kept the process alive 100 s after SIGTERM. Now the FIFO is
// refused: a write is refused with 503 and nothing sent, every other answer
// comes, SIGTERM stops the process (testbin's Stop fails the test after
// 10 s), and a symbolic link put there gets no record either.
func TestAuditFIFOAfterRotation(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	r := startAdmin(t, nil, "--admin.audit-log="+path)
	svc := demoIDs(t, r).service["embeddings"]
	write := "/api/v1/projects/" + testbin.SimProject + "/services/" + svc + "/enablePooler"
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, body := r.Admin(t, "GET", "/api/v1/operations", "", "Authorization", ""); code != http.StatusUnauthorized {
		t.Errorf("unauthenticated request with a FIFO at the audit path: %d %s, want 401", code, body)
	}
	if code, _, body := r.Admin(t, "POST", write, ""); code != http.StatusServiceUnavailable {
		t.Errorf("write with a FIFO at the audit path: %d %s, want 503", code, body)
	}
	if n := r.Sim.WriteRequests(t)["enablePooler"]; n != 0 {
		t.Errorf("the write refused for its audit reached the API %d times", n)
	}

	target := filepath.Join(dir, "unrelated")
	if err := os.WriteFile(target, []byte("unrelated\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	if code, _, body := r.Admin(t, "POST", write, ""); code != http.StatusServiceUnavailable {
		t.Errorf("write with a symbolic link at the audit path: %d %s, want 503", code, body)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "unrelated\n" {
		t.Errorf("the symbolic link's target got audit records: %q (%v)", b, err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if code := r.Stop(t); code != 0 {
		t.Errorf("exit code %d after SIGTERM with a FIFO at the audit path, want 0", code)
	}
	if out := r.Output(); !strings.Contains(out, "FIFO") {
		t.Errorf("the log does not say what the audit path names:\n%s", out)
	}
}

func logStateArgs(state string) []string {
	return []string{"--collect.logs", "--collect.min-data-interval=1s", "--collect.logs.interval=1s",
		"--collect.logs.service-name-regex=orders-db", "--api.rate-limit=1000", "--collect.logs.state-file=" + state}
}

// TestLogPositionsRefusedAtStart: a FIFO at the state path stopped the
// start before any listener; a 200 MiB file (a state file's beginning and
// a hole) took the exporter past 250 MiB of memory at every start, an
// OOM-kill loop under the chart's 256Mi limit. Both are now refused with
// a WARN and moved aside: the exporter serves, its peak memory stays that
// of a small fleet, the health gauge says 0 until a state file is written
// at the path again, then 1.
func TestLogPositionsRefusedAtStart(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	for name, put := range map[string]func(path string) error{
		"FIFO": func(path string) error { return syscall.Mkfifo(path, 0o600) },
		"200 MiB": func(path string) error {
			if err := os.WriteFile(path, []byte(`{"format":"clouddb_exporter log positions","version":1,"projects":{`), 0o600); err != nil {
				return err
			}
			return os.Truncate(path, 200<<20)
		},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sim := testbin.SimAt(testbin.StartSim(t))
			state := filepath.Join(t.TempDir(), "log-positions.json")
			if err := put(state); err != nil {
				t.Fatal(err)
			}
			p, url := testbin.StartExporter(t, sim.Env(), logStateArgs(state)...)
			healthy := func(v float64) func() bool {
				return testbin.MetricEquals(url+"/metrics", "clouddb_exporter_state_file_healthy", v, "state_file", "logs")
			}
			if !healthy(0)() && !healthy(1)() {
				t.Fatal("no clouddb_exporter_state_file_healthy{state_file=\"logs\"}")
			}
			testbin.WaitFor(t, 60*time.Second, "a state file written at the path", healthy(1))
			if info, err := os.Lstat(state); err != nil || !info.Mode().IsRegular() || info.Size() > 1<<20 {
				t.Errorf("the path does not hold a small regular state file: %v", err)
			}
			if aside, _ := filepath.Glob(state + ".refused-*"); len(aside) != 1 {
				t.Errorf("moved aside: %v, want the refused file", aside)
			}
			peak := vmStatus(t, p.PID(), "VmHWM")
			t.Logf("peak RSS %d MiB with a refused %s state file", peak>>20, name)
			if peak > 120<<20 {
				t.Errorf("peak RSS %d MiB with a refused %s state file, want at most 120 MiB", peak>>20, name)
			}
			if out := p.Output(); !strings.Contains(out, "Log state file refused") {
				t.Errorf("no WARN refusing the file:\n%s", out)
			}
		})
	}
}

// TestLogPositionsForeignFileStopsTheStart: another program's file at the
// state path (an audit log, say) was replaced by a 2 KB state file after
// one WARN. Now the start stops with an error naming the flag, and the file
// is left as it was.
func TestLogPositionsForeignFileStopsTheStart(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	sim := testbin.SimAt(testbin.StartSim(t))
	state := filepath.Join(t.TempDir(), "admin-audit.log")
	foreign := strings.Repeat(`{"time":"2026-03-01T11:00:00Z","event":"accepted","caller":"alice"}`+"\n", 1000)
	if err := os.WriteFile(state, []byte(foreign), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out := testbin.Run(t, testbin.Build(t, "."), sim.Env(), logStateArgs(state)...)
	if code != 2 || !strings.Contains(out, "--collect.logs.state-file") {
		t.Errorf("exit code %d, want 2 with an error naming the flag:\n%s", code, out)
	}
	if b, _ := os.ReadFile(state); string(b) != foreign {
		t.Errorf("the file was changed (%d bytes, was %d)", len(b), len(foreign))
	}
}

// TestCredentialFileFIFO: a FIFO put at a key file's path made the
// re-read after a 401 wait for a writer for ever: the poller stopped and
// the exporter outlived SIGTERM. Now the FIFO is refused with a WARN, the
// keys in use are kept, and SIGTERM stops the process (Stop fails the test
// after 10 s).
func TestCredentialFileFIFO(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	var refuse atomic.Bool
	var refused atomic.Int32
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if refuse.Load() {
			refused.Add(1)
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"code":"UNAUTHORIZED","message":"invalid credentials"}`))
			return
		}
		_, _ = w.Write([]byte(`[]`))
	}))
	t.Cleanup(upstream.Close)
	dir := t.TempDir()
	env := append([]string{"CLOUDDB_API_URL=" + upstream.URL + "/v1", "CLOUDDB_API_PROJECT_ID=p"}, keyFiles(t, dir, "access-key-1", "secret-key-1")...)
	p, _ := startExporter(t, env, "--collect.interval=1s")
	secret := filepath.Join(dir, "secret")
	if err := os.Remove(secret); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(secret, 0o600); err != nil {
		t.Fatal(err)
	}
	refuse.Store(true)
	testbin.WaitFor(t, time.Minute, "the FIFO refused on a re-read", func() bool {
		return strings.Contains(p.Output(), "is a FIFO") && refused.Load() > 1
	})
	if code := p.Stop(t); code != 0 {
		t.Errorf("exit code %d after SIGTERM with a FIFO at a key file, want 0", code)
	}
}
