package e2e

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestCloudsimBinary starts the standalone simulator with its demo
// defaults (the environment's credentials empty, so the well-known demo
// ones apply), checks that its startup log names its address, queries it
// with the demo credentials and checks that SIGTERM makes it exit 0.
func TestCloudsimBinary(t *testing.T) {
	t.Parallel()
	addr := testbin.FreeAddr(t)
	p := testbin.Start(t, testbin.Build(t, "./cmd/cloudsim"), []string{"CLOUDSIM_ACCESS_KEY=", "CLOUDSIM_SECRET_KEY=", "CLOUDSIM_API_KEY="},
		"--web.listen-address="+addr, "--scenario=demo")
	testbin.WaitFor(t, 30*time.Second, "the listen address in the log", func() bool {
		return strings.Contains(p.Output(), "address="+addr)
	})

	get := func(path string, header ...string) int {
		t.Helper()
		code, body := testbin.Get("http://"+addr+path, header...)
		if code == 0 {
			t.Fatalf("GET %s: %s", path, body)
		}
		return code
	}
	if got := get("/_sim/healthz"); got != http.StatusOK {
		t.Errorf("healthz: %d", got)
	}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("demo-access-key:demo-secret-key"))
	if got := get("/v1/projects/demo-project/services", "Authorization", basic); got != http.StatusOK {
		t.Errorf("services with demo credentials: %d", got)
	}
	if got := get("/v1/auth/info", "Authorization", "Bearer demo-api-key"); got != http.StatusOK {
		t.Errorf("auth info with the demo API key: %d", got)
	}
	if got := get("/v1/projects/demo-project/services"); got != http.StatusUnauthorized {
		t.Errorf("services without credentials: %d", got)
	}
	if code := p.Stop(t); code != 0 {
		t.Errorf("exit code after SIGTERM: %d, want 0", code)
	}
}
