package admin

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"golang.org/x/crypto/bcrypt"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

func TestLoadWebConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Relative TLS paths are resolved against the file's directory, as
	// exporter-toolkit does; users are kept for the admin surface.
	wc, err := LoadWebConfig(write("users.yml", "tls_server_config:\n  cert_file: server.crt\n  key_file: /abs/server.key\nbasic_auth_users:\n  alice: $2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := wc.TLSConfig.TLSCertPath; got != filepath.Join(dir, "server.crt") {
		t.Errorf("cert_file = %q, want it resolved against %s", got, dir)
	}
	if got := wc.TLSConfig.TLSKeyPath; got != "/abs/server.key" {
		t.Errorf("key_file = %q, want the absolute path kept", got)
	}
	if u := users(wc); u["alice"] == "" || len(u) != 1 {
		t.Errorf("users = %v", u)
	}
	if !wc.HTTPConfig.HTTP2 || wc.TLSConfig.MinVersion != tls.VersionTLS12 {
		t.Errorf("the toolkit's defaults are missing: %+v", wc)
	}
	if _, err := LoadWebConfig(write("bad.yml", "basic_auth_users: [a]\n")); err == nil {
		t.Error("a list of users was accepted")
	}
	if _, err := LoadWebConfig(write("typo.yml", "tls_server_conf: {}\n")); err == nil {
		t.Error("an unknown key was accepted")
	}
}

// TestListenerWritesNoFile serves the admin listener with TLS, basic-auth
// users and a response header from its web configuration while the
// temporary directory does not exist, as with the shipped Deployment's
// read-only root filesystem.
func TestListenerWritesNoFile(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile, pool := testbin.SelfSignedCert(t, dir)
	hash, err := bcrypt.GenerateFromPassword([]byte("pw-for-ops"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	webConfig := filepath.Join(dir, "web.yml")
	content := "tls_server_config:\n  cert_file: " + filepath.Base(certFile) + "\n  key_file: " + keyFile +
		"\nhttp_server_config:\n  headers:\n    X-Frame-Options: deny\nbasic_auth_users:\n  ops: " + string(hash) + "\n"
	if err := os.WriteFile(webConfig, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", filepath.Join(dir, "does-not-exist"))
	before, _ := os.ReadDir(dir)

	addr := testbin.FreeAddr(t)
	f := &Flags{listen: addr, webConfig: webConfig, operationTimeout: time.Minute}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	l, cleanup, err := f.Listener(ctx, Options{Projects: func(string) (Project, bool) { return Project{}, false }, Logger: slog.New(slog.DiscardHandler)}, false, nil)
	if err != nil {
		t.Fatalf("Listener: %v", err)
	}
	defer cleanup()
	ln, err := f.Listen()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- l.Serve(ln, slog.New(slog.DiscardHandler)) }()
	defer func() {
		_ = l.Shutdown(context.Background())
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
	}()

	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	get := func(password string) *http.Response {
		t.Helper()
		var resp *http.Response
		testbin.WaitFor(t, 10*time.Second, "the admin listener", func() bool {
			req, _ := http.NewRequest(http.MethodGet, "https://"+addr+"/api/v1/operations", nil)
			req.SetBasicAuth("ops", password)
			var err error
			resp, err = client.Do(req)
			return err == nil
		})
		resp.Body.Close()
		return resp
	}
	if resp := get("pw-for-ops"); resp.StatusCode != http.StatusOK || resp.Header.Get("X-Frame-Options") != "deny" {
		t.Errorf("right password: %d, X-Frame-Options %q; want 200 with the configured header", resp.StatusCode, resp.Header.Get("X-Frame-Options"))
	}
	if resp := get("wrong"); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("wrong password: %d, want 401", resp.StatusCode)
	}
	if after, _ := os.ReadDir(dir); len(after) != len(before) {
		t.Errorf("files were written: %d entries before, %d after", len(before), len(after))
	}
}

// serveFrom sends a request straight to the surface's handler as if from
// remote (host:port) with basic-auth credentials, and returns the status.
func serveFrom(h http.Handler, remote, user, pass string) int {
	req := httptest.NewRequest(http.MethodGet, "/api/v1/operations", nil)
	req.RemoteAddr = remote
	req.SetBasicAuth(user, pass)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code
}

// TestAuthFloodLeavesLegitimateCaller: 45 goroutines sending wrong
// passwords (cost-10 hashes, as in production) must not lock a legitimate
// caller out: wrong passwords used to take the places in flight while they
// queued for bcrypt one at a time, so every other request got 503.
func TestAuthFloodLeavesLegitimateCaller(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("legit-password"), bcrypt.DefaultCost)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, withOptions(func(o *Options) {
		o.Token, o.BasicAuthUsers, o.MaxRequests = "", map[string]string{"ops": string(hash)}, 40
	}))
	const flooders, requests = 45, 60
	var answered atomic.Int64
	var floodCodes [600]atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for i := range flooders {
		wg.Go(func() {
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				code := serveFrom(e.srv, "203.0.113.9:"+strconv.Itoa(10000+i), "ops", fmt.Sprintf("guess-%d-%d", i, n))
				floodCodes[code%600].Add(1)
				answered.Add(1)
			}
		})
	}
	defer wg.Wait()
	defer close(stop)
	// Under way: every flooder has been answered, and wrong passwords
	// have been compared and refused.
	refused := e.srv.metrics.requests.WithLabelValues(opListOperations, "401")
	for deadline := time.Now().Add(2 * time.Minute); answered.Load() < flooders || testutil.ToFloat64(refused) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the flood is not under way after 2m: %d answers, 401 %d, 429 %d, 503 %d, 200 %d", answered.Load(),
				floodCodes[401].Load(), floodCodes[429].Load(), floodCodes[503].Load(), floodCodes[200].Load())
		}
	}

	ok := 0
	codes := map[int]int{}
	for range requests {
		code := serveFrom(e.srv, "198.51.100.7:4242", "ops", "legit-password")
		codes[code]++
		if code == http.StatusOK {
			ok++
		}
	}
	if ok*100 < requests*95 {
		t.Errorf("the legitimate caller got %d of %d requests through a flood of wrong passwords (answers %v), want at least 95%%", ok, requests, codes)
	}
}

// TestRateLimitPerCaller: the rate_limit of --admin.web-config.file is
// each authenticated caller's own budget; it used to be one bucket that
// anybody, unauthenticated or another user, could empty for everyone.
func TestRateLimitPerCaller(t *testing.T) {
	users := map[string]string{}
	for _, u := range []string{"alice", "bob"} {
		hash, err := bcrypt.GenerateFromPassword([]byte(u+"-password"), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		users[u] = string(hash)
	}
	e := newEnv(t, withOptions(func(o *Options) {
		o.Token, o.BasicAuthUsers = "", users
		o.RateLimit = &RateLimit{Interval: time.Hour, Burst: 3}
	}))
	for i := range 10 {
		if code := serveFrom(e.srv, "203.0.113.9:1", "nobody", fmt.Sprint("guess-", i)); code != http.StatusUnauthorized && code != http.StatusTooManyRequests {
			t.Fatalf("wrong credentials: %d, want 401 or 429", code)
		}
	}
	for i := range 3 {
		if code := serveFrom(e.srv, "198.51.100.7:1", "alice", "alice-password"); code != http.StatusOK {
			t.Fatalf("alice's request %d of a burst of 3 after 10 unauthenticated ones: %d, want 200", i+1, code)
		}
	}
	if code := serveFrom(e.srv, "198.51.100.7:1", "alice", "alice-password"); code != http.StatusTooManyRequests {
		t.Errorf("alice's 4th request of a burst of 3: %d, want 429", code)
	}
	if code := serveFrom(e.srv, "198.51.100.7:1", "bob", "bob-password"); code != http.StatusOK {
		t.Errorf("bob's first request once alice is limited: %d, want 200", code)
	}
}

// TestAuthFailureBackoff: a client that keeps sending wrong passwords is
// refused without a bcrypt comparison once it has used its budget of
// failures, while other clients, and a caller whose right password is
// already known, are not.
func TestAuthFailureBackoff(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("right"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, withOptions(func(o *Options) { o.Token, o.BasicAuthUsers = "", map[string]string{"ops": string(hash)} }))
	const attacker, other = "203.0.113.9:1", "198.51.100.7:1"
	if code := serveFrom(e.srv, attacker, "ops", "right"); code != http.StatusOK {
		t.Fatalf("right password: %d", code)
	}
	codes := map[int]int{}
	for i := range authFailureBurst + 5 {
		codes[serveFrom(e.srv, attacker, "ops", fmt.Sprint("guess-", i))]++
	}
	if codes[http.StatusUnauthorized] != authFailureBurst || codes[http.StatusTooManyRequests] != 5 {
		t.Errorf("answers to %d wrong passwords from one client: %v, want %d 401 then 429", authFailureBurst+5, codes, authFailureBurst)
	}
	if code := serveFrom(e.srv, other, "ops", "guess"); code != http.StatusUnauthorized {
		t.Errorf("a wrong password from another client: %d, want 401", code)
	}
	if code := serveFrom(e.srv, attacker, "ops", "right"); code != http.StatusOK {
		t.Errorf("the right password from the throttled client: %d, want 200 (known good, no comparison)", code)
	}
}

// TestDummyHashHasMaxCost: an unknown user is compared against a hash of
// the highest configured cost, so that no configured user answers slower
// than an unknown one.
func TestDummyHashHasMaxCost(t *testing.T) {
	users := map[string]string{}
	for user, cost := range map[string]int{"low": bcrypt.MinCost, "high": bcrypt.MinCost + 2} {
		hash, err := bcrypt.GenerateFromPassword([]byte("pw"), cost)
		if err != nil {
			t.Fatal(err)
		}
		users[user] = string(hash)
	}
	a, err := newAuthenticator("", users, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if cost, err := bcrypt.Cost(a.dummy); err != nil || cost != bcrypt.MinCost+2 {
		t.Errorf("the dummy hash's cost is %d (%v), want the highest configured, %d", cost, err, bcrypt.MinCost+2)
	}
}

// TestLowBcryptCostWarned: a hash cheaper than bcrypt's default cost is
// worth one warning at startup naming the user, never the hash.
func TestLowBcryptCostWarned(t *testing.T) {
	cheap, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	good, err := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.DefaultCost)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, withOptions(func(o *Options) {
		o.Token, o.BasicAuthUsers = "", map[string]string{"cheap-user": string(cheap), "good-user": string(good)}
	}))
	logs := e.logs.String()
	if n := strings.Count(logs, "level=WARN"); n != 1 || !strings.Contains(logs, "user=cheap-user") {
		t.Errorf("want one WARN naming cheap-user, got %d:\n%s", n, logs)
	}
	if strings.Contains(logs, string(cheap)) || strings.Contains(logs, "good-user") {
		t.Errorf("the warning gives a hash away or names a user with a good cost:\n%s", logs)
	}
}

// TestAuthFailureBackoffBearerToken: the failed-authentication limit holds
// for bearer tokens too: 14,085 wrong tokens in 5 s got 401 each, no 429.
// The right token is still taken from the throttled client.
func TestAuthFailureBackoffBearerToken(t *testing.T) {
	e := newEnv(t)
	const attacker, other = "203.0.113.9:1", "198.51.100.7:1"
	send := func(remote, token string) int {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/operations", nil)
		req.RemoteAddr = remote
		req.Header.Set("Authorization", "Bearer "+token)
		rec := httptest.NewRecorder()
		e.srv.ServeHTTP(rec, req)
		return rec.Code
	}
	codes := map[int]int{}
	for i := range authFailureBurst + 5 {
		codes[send(attacker, fmt.Sprint("guess-", i))]++
	}
	if codes[http.StatusUnauthorized] != authFailureBurst || codes[http.StatusTooManyRequests] != 5 {
		t.Errorf("answers to %d wrong tokens from one client: %v, want %d 401 then 429", authFailureBurst+5, codes, authFailureBurst)
	}
	if code := send(other, "guess"); code != http.StatusUnauthorized {
		t.Errorf("a wrong token from another client: %d, want 401", code)
	}
	if code := send(attacker, testToken); code != http.StatusOK {
		t.Errorf("the right token from the throttled client: %d, want 200", code)
	}
}

// TestNoUserAnswersFasterThanAnUnknownOne: whatever the bcrypt costs of the
// users, every password checked costs at least one comparison at the
// highest cost, which is what an unknown user's costs: a cost-4 user
// answered in 1.5 ms, an unknown name in 230 ms. Costs, not durations, are
// compared.
func TestNoUserAnswersFasterThanAnUnknownOne(t *testing.T) {
	users := map[string]string{}
	for user, cost := range map[string]int{"low": bcrypt.MinCost, "high": bcrypt.MinCost + 2} {
		hash, err := bcrypt.GenerateFromPassword([]byte("pw"), cost)
		if err != nil {
			t.Fatal(err)
		}
		users[user] = string(hash)
	}
	a, err := newAuthenticator("", users, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var costs []int
	compare := a.compare
	a.compare = func(hash, pass []byte) error {
		c, _ := bcrypt.Cost(hash)
		costs = append(costs, c)
		return compare(hash, pass)
	}
	spent := func(user, pass string) int {
		costs = nil
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.RemoteAddr = "198.51.100.7:1"
		req.SetBasicAuth(user, pass)
		a.authenticate(req)
		return slices.Max(append(costs, 0))
	}
	unknown := spent("nobody", "pw")
	if unknown != bcrypt.MinCost+2 {
		t.Fatalf("an unknown user is compared at cost %d, want %d", unknown, bcrypt.MinCost+2)
	}
	for _, tc := range []struct{ user, pass string }{{"low", "wrong"}, {"high", "wrong"}, {"low", "pw"}, {"high", "pw"}} {
		if got := spent(tc.user, tc.pass); got < unknown {
			t.Errorf("user %s, password %s: its highest comparison costs %d, an unknown user's %d", tc.user, tc.pass, got, unknown)
		}
	}
}
