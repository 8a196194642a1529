// Package testbin runs the project's real binaries in tests, on free loopback
// ports, waiting with deadlines rather than sleeps.
package testbin

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/clouddb/clouddb_exporter/internal/syncbuf"
)

var (
	buildMu  sync.Mutex
	built    = map[string]string{}
	buildDir string
)

// RepoRoot is the repository root, found from this file's location.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Build compiles the main package at pkg once per test process.
func Build(t testing.TB, pkg string) string {
	t.Helper()
	buildMu.Lock()
	defer buildMu.Unlock()
	if bin, ok := built[pkg]; ok {
		return bin
	}
	if buildDir == "" {
		dir, err := os.MkdirTemp("", "testbin")
		if err != nil {
			t.Fatal(err)
		}
		buildDir = dir
	}
	name := filepath.Base(pkg)
	if pkg == "." {
		name = "clouddb_exporter"
	}
	bin := filepath.Join(buildDir, name)
	cmd := exec.Command("go", "build", "-o", bin, pkg)
	cmd.Dir = RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	built[pkg] = bin
	return bin
}

// FreeAddr returns a loopback address whose port was free a moment ago.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err) // the port might still be held
	}
	return addr
}

// Process is a started binary.
type Process struct {
	cmd    *exec.Cmd
	output *syncbuf.Buffer
	done   chan struct{}
	err    error
}

// simulateOnFreePort: the embedded simulator's default port is fixed.
func simulateOnFreePort(args []string) []string {
	simulate := false
	for _, a := range args {
		if strings.HasPrefix(a, "--simulate.listen-address") {
			return args
		}
		simulate = simulate || a == "--simulate" || a == "--simulate=true"
	}
	if !simulate {
		return args
	}
	return append(args[:len(args):len(args)], "--simulate.listen-address=127.0.0.1:0")
}

// Start runs bin with only PATH and HOME from the environment, so the
// developer's CLOUDDB_* never leak in, and stops it when the test ends.
func Start(t testing.TB, bin string, env []string, args ...string) *Process {
	t.Helper()
	cmd := exec.Command(bin, simulateOnFreePort(args)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	p := &Process{cmd: cmd, output: &syncbuf.Buffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.output, p.output
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		p.Stop(t)
		if t.Failed() {
			t.Logf("output of %s:\n%s", filepath.Base(bin), p.Output())
		}
	})
	return p
}

// Output returns what the process printed so far.
func (p *Process) Output() string { return p.output.String() }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// PID is the process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Signal sends sig to the process.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Stop sends SIGTERM, kills after 10s, and returns the exit code.
func (p *Process) Stop(t testing.TB) int {
	t.Helper()
	select {
	case <-p.done:
	default:
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
			t.Errorf("%s did not stop within 10s of SIGTERM", p.cmd.Path)
		}
	}
	return p.cmd.ProcessState.ExitCode()
}

// Wait waits for the process to exit by itself and returns its exit code.
func (p *Process) Wait(t testing.TB, timeout time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		t.Fatalf("%s still running after %s", p.cmd.Path, timeout)
		return -1
	}
}

// Run runs bin to completion and returns its exit code and output.
func Run(t testing.TB, bin string, env []string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, simulateOnFreePort(args)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	out, _ := cmd.CombinedOutput()
	return cmd.ProcessState.ExitCode(), string(out)
}

// WaitFor polls cond until timeout, a liveness bound to keep generous.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for pause := 50 * time.Millisecond; !cond(); pause = min(pause*3/2, 250*time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(pause)
	}
}

// SampleValue returns the first sample of name without parsing the rest.
func SampleValue(url, name string) (float64, bool) {
	code, body := Get(url + "/metrics")
	if code != http.StatusOK {
		return 0, false
	}
	for line := range strings.Lines(body) {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || (rest[0] != ' ' && rest[0] != '{') {
			continue
		}
		fields := strings.Fields(rest[strings.LastIndex(rest, "}")+1:])
		if len(fields) == 0 {
			return 0, false
		}
		v, err := strconv.ParseFloat(fields[0], 64)
		return v, err == nil
	}
	return 0, false
}

// Get fetches url and returns the status and body; 0 for a transport error.
func Get(url string, header ...string) (int, string) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, err.Error()
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Post sends body as JSON to url and returns the status code and body.
func Post(url, body string) (int, string) {
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Families parses a Prometheus text exposition.
func Families(text string) (map[string]*dto.MetricFamily, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	return parser.TextToMetricFamilies(strings.NewReader(text))
}

// Value returns the first series of family name whose labels include labels.
func Value(families map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	mf, ok := families[name]
	if !ok {
		return 0, false
	}
	for _, m := range mf.GetMetric() {
		if matches(m, labels) {
			return value(m), true
		}
	}
	return 0, false
}

// value of a histogram is its sample count.
func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	default:
		return m.GetUntyped().GetValue()
	}
}

func matches(m *dto.Metric, labels []string) bool {
	have := map[string]string{}
	for _, lp := range m.GetLabel() {
		have[lp.GetName()] = lp.GetValue()
	}
	for i := 0; i+1 < len(labels); i += 2 {
		if have[labels[i]] != labels[i+1] {
			return false
		}
	}
	return true
}

// MetricEquals returns a condition: the series of name with labels at url is want.
func MetricEquals(url, name string, want float64, labels ...string) func() bool {
	return func() bool {
		code, body := Get(url)
		if code != http.StatusOK {
			return false
		}
		fams, err := Families(body)
		if err != nil {
			return false
		}
		v, ok := Value(fams, name, labels...)
		return ok && v == want
	}
}

// Describe formats labels for messages.
func Describe(name string, labels ...string) string {
	var parts []string
	for i := 0; i+1 < len(labels); i += 2 {
		parts = append(parts, fmt.Sprintf("%s=%q", labels[i], labels[i+1]))
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}
