package e2e

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestSecurityBearerTokenFlood: 14,085 wrong tokens in 5 s were each
// answered 401; the failed-authentication limit (10 a client address)
// now answers 429 beyond it, and the right token still passes.
func TestSecurityBearerTokenFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	r := startAdmin(t, nil)
	codes := map[int]int{}
	for i := range 30 {
		code, _, _ := r.Admin(t, "GET", "/api/v1/operations", "", "Authorization", fmt.Sprintf("Bearer wrong-token-%d", i))
		codes[code]++
	}
	if codes[http.StatusUnauthorized] > 11 || codes[http.StatusTooManyRequests] < 19 {
		t.Errorf("30 wrong tokens from one address: %v, want 10 401 (one more if 6 s passed) then 429", codes)
	}
	if code, _, body := r.Admin(t, "GET", "/api/v1/operations", ""); code != http.StatusOK {
		t.Errorf("the right token after the flood: %d %s", code, body)
	}
}

// TestSecurityIdempotencyKeyOfAnotherCaller: a second user repeating the
// first one's Idempotency-Key and body got the first one's answer, the new
// database's initial_password included. It now gets an answer of its own.
func TestSecurityIdempotencyKeyOfAnotherCaller(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	hash, err := bcrypt.GenerateFromPassword([]byte("e2e-basic-password"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	webConfig := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(webConfig, []byte("basic_auth_users:\n  alice: "+string(hash)+"\n  bob: "+string(hash)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := startAdmin(t, instantSim, "--admin.web-config.file="+webConfig)
	path := "/api/v1/projects/" + testbin.SimProject + "/services"
	body := `{"name":"idem","addons":[],"region_code":"us-east-1","cpu_millis":1000,"memory_gbs":4}`
	create := func(user string) (int, http.Header, string) {
		auth := "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":e2e-basic-password"))
		return r.Admin(t, "POST", path, body, "Authorization", auth, "Idempotency-Key", "shared-key-1")
	}
	code, _, first := create("alice")
	if code != http.StatusAccepted {
		t.Fatalf("alice's create: %d %s", code, first)
	}
	code, header, other := create("bob")
	if header.Get("Idempotent-Replayed") != "" || other == first {
		t.Errorf("bob's request with alice's key got alice's answer: %d %v %s", code, header, other)
	}
	if n := r.Sim.WriteRequests(t)["createService"]; n != 2 {
		t.Errorf("createService reached the API %d times, want 2 (one per caller)", n)
	}
}
