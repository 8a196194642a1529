package main

import (
	"bufio"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"
)

// TestBinary builds the command, starts it on a free loopback port, reads
// the address from its startup log line, queries it with the demo
// credentials and checks that SIGTERM makes it exit 0.
func TestBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a binary")
	}
	bin := filepath.Join(t.TempDir(), "cloudsim")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--web.listen-address=127.0.0.1:0", "--scenario=demo")
	cmd.Env = append(os.Environ(), "CLOUDSIM_ACCESS_KEY=", "CLOUDSIM_SECRET_KEY=", "CLOUDSIM_API_KEY=")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stderr)
	addrRE := regexp.MustCompile(`address=(127\.0\.0\.1:\d+)`)
	var addr string
	for addr == "" && lines.Scan() {
		if m := addrRE.FindStringSubmatch(lines.Text()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		t.Fatal("no listen address in the log")
	}
	go func() {
		for lines.Scan() {
		}
	}()

	get := func(path string, auth func(*http.Request)) int {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+addr+path, nil)
		if auth != nil {
			auth(req)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := get("/_sim/healthz", nil); got != 200 {
		t.Errorf("healthz: %d", got)
	}
	basic := func(r *http.Request) { r.SetBasicAuth("demo-access-key", "demo-secret-key") }
	if got := get("/v1/projects/demo-project/services", basic); got != 200 {
		t.Errorf("services with demo credentials: %d", got)
	}
	if got := get("/v1/auth/info", func(r *http.Request) { r.Header.Set("Authorization", "Bearer demo-api-key") }); got != 200 {
		t.Errorf("auth info with the demo API key: %d", got)
	}
	if got := get("/v1/projects/demo-project/services", nil); got != 401 {
		t.Errorf("services without credentials: %d", got)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v", err)
	}
}
