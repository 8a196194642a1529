package apiclient

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// Credentials used by the tests; they are searched for in every error and
// printout to prove they never leak.
const (
	testAccessKey = "AKtestaccess"
	testSecretKey = "SKtopsecretvalue"
	testAPIKey    = "APIKEYbearervalue"
	testProject   = "proj-1"
)

// recordedRequest is what a test server saw.
type recordedRequest struct {
	Method, URI, Auth, Accept, ContentType, UserAgent string
	Body                                              []byte
}

// recordingObserver counts Observer events.
type recordingObserver struct {
	mu       sync.Mutex
	requests []string // "op code"
	retries  []string
	waits    []string
	// decodeErrors has one operation per field left out.
	decodeErrors []string
	tooLong      []string
	truncated    []string
}

func (o *recordingObserver) ObserveListTooLong(op string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.tooLong = append(o.tooLong, op)
}

func (o *recordingObserver) ObserveTextTruncated(op string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.truncated = append(o.truncated, op)
}

func (o *recordingObserver) ObserveRequest(op, code string, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.requests = append(o.requests, op+" "+code)
}

func (o *recordingObserver) ObserveRetry(op string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.retries = append(o.retries, op)
}

func (o *recordingObserver) ObserveDecodeError(op string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.decodeErrors = append(o.decodeErrors, op)
}

func (o *recordingObserver) ObserveRateLimitWait(op string, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.waits = append(o.waits, op)
}

// fakeClock records requested sleeps instead of sleeping and makes jitter
// return the top of its range minus one, so backoff ceilings are visible.
type fakeClock struct {
	mu     sync.Mutex
	sleeps []time.Duration
	// onSleep, when set, runs on each sleep (to cancel a context, say).
	onSleep func()
}

func (f *fakeClock) sleep(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	f.sleeps = append(f.sleeps, d)
	hook := f.onSleep
	f.mu.Unlock()
	if hook != nil {
		hook()
	}
	return ctx.Err()
}

func (f *fakeClock) recorded() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.sleeps...)
}

// testServer records requests and answers them with handler.
type testServer struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recordedRequest
}

func (s *testServer) requests() []recordedRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]recordedRequest(nil), s.reqs...)
}

func newTestServer(t *testing.T, handler http.HandlerFunc) *testServer {
	t.Helper()
	s := &testServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, recordedRequest{
			Method: r.Method, URI: r.RequestURI, Auth: r.Header.Get("Authorization"),
			Accept: r.Header.Get("Accept"), ContentType: r.Header.Get("Content-Type"),
			UserAgent: r.Header.Get("User-Agent"), Body: body,
		})
		s.mu.Unlock()
		handler(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// newTestClient returns a Client for srv with instant, recorded sleeps and
// no rate limit (tests of the limiter set their own). mutate may adjust cfg.
func newTestClient(t *testing.T, srv *testServer, mutate func(*Config)) (*Client, *fakeClock, *recordingObserver) {
	t.Helper()
	obs := &recordingObserver{}
	cfg := Config{
		BaseURL:   srv.URL + "/v1",
		ProjectID: testProject,
		AccessKey: testAccessKey,
		SecretKey: testSecretKey,
		APIKey:    testAPIKey,
		RateLimit: float64(rate.Inf),
		Observer:  obs,
		Timeout:   10 * time.Second,
	}
	if mutate != nil {
		mutate(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	clock := &fakeClock{}
	c.sleep = clock.sleep
	c.jitter = func(n int64) int64 { return n - 1 }
	return c, clock, obs
}

// writeJSON answers with status and a literal body.
func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}
