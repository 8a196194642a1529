package apiclient

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// failure is how a test server answers one attempt.
type failure struct {
	status     int    // 0 with drop false: succeed
	retryAfter string // Retry-After header
	drop       bool   // close the connection without answering
}

// scriptedServer fails attempts as scripted, then answers status/body.
func scriptedServer(t *testing.T, script []failure, status int, body string) (*testServer, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		i := int(n.Add(1)) - 1
		if i >= len(script) {
			writeJSON(w, status, body)
			return
		}
		f := script[i]
		if f.drop {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				t.Errorf("hijack: %v", err)
				return
			}
			_ = conn.Close()
			return
		}
		if f.retryAfter != "" {
			w.Header().Set("Retry-After", f.retryAfter)
		}
		writeJSON(w, f.status, `{"code":"X","message":"try later"}`)
	})
	return srv, &n
}

func TestReadsRecover(t *testing.T) {
	const base, maxDelay = 100 * time.Millisecond, 300 * time.Millisecond
	tests := []struct {
		name       string
		script     []failure
		wantSleeps []time.Duration // jitter is n-1: the top of each backoff range
		wantCodes  []string
	}{
		{"500", []failure{{status: 500}}, []time.Duration{base - 1}, []string{"500", "200"}},
		{"502 503 504", []failure{{status: 502}, {status: 503}, {status: 504}},
			[]time.Duration{base - 1, 2*base - 1, maxDelay - 1}, []string{"502", "503", "504", "200"}},
		{"429", []failure{{status: 429}}, []time.Duration{base - 1}, []string{"429", "200"}},
		{"dropped connection", []failure{{drop: true}}, []time.Duration{base - 1}, []string{"error", "200"}},
		{"429 retry-after seconds", []failure{{status: 429, retryAfter: "7"}}, []time.Duration{7 * time.Second}, []string{"429", "200"}},
		{"503 retry-after date", []failure{{status: 503, retryAfter: "Mon, 01 Jan 2024 00:00:09 GMT"}}, []time.Duration{9 * time.Second}, []string{"503", "200"}},
		{"retry-after at the cap", []failure{{status: 429, retryAfter: "60"}}, []time.Duration{time.Minute}, []string{"429", "200"}},
		{"retry-after in the past falls back to backoff", []failure{{status: 429, retryAfter: "Sun, 31 Dec 2023 00:00:00 GMT"}},
			[]time.Duration{base - 1}, []string{"429", "200"}},
		{"retry-after ignored on 500", []failure{{status: 500, retryAfter: "7"}}, []time.Duration{base - 1}, []string{"500", "200"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, n := scriptedServer(t, tt.script, 200, `[{"service_id":"s1"}]`)
			c, clock, obs := newTestClient(t, srv, func(cfg *Config) {
				cfg.RetryBaseDelay, cfg.RetryMaxDelay, cfg.MaxRetryAfter = base, maxDelay, time.Minute
			})
			c.now = func() time.Time { return time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC) }

			got, err := c.ListServices(t.Context())
			if err != nil || len(got) != 1 || got[0].ServiceID != "s1" {
				t.Fatalf("ListServices = %v, %v", got, err)
			}
			if int(n.Load()) != len(tt.script)+1 {
				t.Errorf("server saw %d requests, want %d", n.Load(), len(tt.script)+1)
			}
			if s := clock.recorded(); !reflect.DeepEqual(s, tt.wantSleeps) {
				t.Errorf("sleeps = %v, want %v", s, tt.wantSleeps)
			}
			var codes []string
			for _, r := range obs.requests {
				codes = append(codes, strings.TrimPrefix(r, OpListServices+" "))
			}
			if !reflect.DeepEqual(codes, tt.wantCodes) {
				t.Errorf("observed attempts %v, want %v", codes, tt.wantCodes)
			}
			if len(obs.retries) != len(tt.script) {
				t.Errorf("observed %d retries, want %d", len(obs.retries), len(tt.script))
			}
		})
	}
}

// TestRetryAfterBeyondCapFailsAtOnce: a Retry-After longer than
// MaxRetryAfter, or than the caller's deadline leaves, is not slept on: the
// call fails at once with the server's wish in the error.
func TestRetryAfterBeyondCapFailsAtOnce(t *testing.T) {
	tests := []struct {
		name       string
		retryAfter string
		deadline   time.Duration // from now; 0 for none
		least      time.Duration
	}{
		{"seconds beyond the cap", "999999", 0, 999999 * time.Second},
		{"date beyond the cap", time.Now().Add(24 * time.Hour).UTC().Format(http.TimeFormat), 0, 23 * time.Hour},
		{"within the cap but beyond the deadline", "30", 10 * time.Second, 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, n := scriptedServer(t, []failure{{status: 429, retryAfter: tt.retryAfter}}, 200, `[]`)
			c, clock, _ := newTestClient(t, srv, func(cfg *Config) { cfg.MaxRetryAfter = time.Minute })
			ctx := t.Context()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			_, err := c.ListServices(ctx)
			var apiErr *APIError
			if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusTooManyRequests || apiErr.RetryAfter < tt.least {
				t.Fatalf("err = %v, want the 429 with a Retry-After of at least %s", err, tt.least)
			}
			if n.Load() != 1 || len(clock.recorded()) != 0 {
				t.Errorf("%d requests, sleeps %v: want one request and no sleep", n.Load(), clock.recorded())
			}
		})
	}
}

func TestWritesNotRetriedExceptOn429(t *testing.T) {
	tests := []struct {
		name     string
		failure  failure
		wantReqs int
		wantOK   bool
	}{
		{"500", failure{status: 500}, 1, false},
		{"503", failure{status: 503, retryAfter: "1"}, 1, false},
		{"dropped connection", failure{drop: true}, 1, false},
		{"429", failure{status: 429}, 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, n := scriptedServer(t, []failure{tt.failure}, 202, `{"service_id":"s1"}`)
			c, _, obs := newTestClient(t, srv, nil)
			_, err := c.CreateService(t.Context(), CreateServiceRequest{Name: "db"})
			if (err == nil) != tt.wantOK {
				t.Fatalf("CreateService err = %v, want success %t", err, tt.wantOK)
			}
			if int(n.Load()) != tt.wantReqs || len(obs.retries) != tt.wantReqs-1 {
				t.Errorf("server saw %d requests, observer %d retries; want %d requests", n.Load(), len(obs.retries), tt.wantReqs)
			}
		})
	}
}

func TestDeleteNotRetriedOnDroppedConnection(t *testing.T) {
	srv, n := scriptedServer(t, []failure{{drop: true}}, 202, "")
	c, _, _ := newTestClient(t, srv, nil)
	err := c.DeleteService(t.Context(), "s1")
	var tErr *TransportError
	if !errors.As(err, &tErr) || n.Load() != 1 {
		t.Fatalf("err = %v after %d requests, want a transport error after 1", err, n.Load())
	}
}

func TestRetryBudget(t *testing.T) {
	script := make([]failure, 10)
	for i := range script {
		script[i] = failure{status: 500}
	}
	srv, n := scriptedServer(t, script, 200, "[]")
	c, clock, obs := newTestClient(t, srv, func(cfg *Config) { cfg.MaxRetries = 2 })
	_, err := c.ListVPCs(t.Context())
	if err == nil || !strings.Contains(err.Error(), "after 3 attempts") {
		t.Fatalf("err = %v, want one saying after 3 attempts", err)
	}
	var apiErr *APIError
	if StatusCode(err)/100 != 5 || !errors.As(err, &apiErr) || apiErr.Code != "X" {
		t.Errorf("exhausted error does not unwrap to the last *APIError: %v", err)
	}
	if n.Load() != 3 || len(clock.recorded()) != 2 || len(obs.retries) != 2 || len(obs.requests) != 3 {
		t.Errorf("requests=%d sleeps=%d retries=%d attempts=%d, want 3/2/2/3", n.Load(), len(clock.recorded()), len(obs.retries), len(obs.requests))
	}

	// The same for transport errors: the last one stays reachable.
	srv.Close()
	_, err = c.ListVPCs(t.Context())
	var tErr *TransportError
	if !errors.As(err, &tErr) || !strings.Contains(err.Error(), "after 3 attempts") {
		t.Errorf("err = %v, want an exhausted *TransportError", err)
	}
}

func TestCancelStopsRetrying(t *testing.T) {
	srv, n := scriptedServer(t, []failure{{status: 503}, {status: 503}, {status: 503}}, 200, "[]")
	c, clock, _ := newTestClient(t, srv, nil)
	ctx, cancel := context.WithCancel(t.Context())
	clock.onSleep = cancel // the caller gives up while we back off

	_, err := c.ListVPCs(ctx)
	if !errors.Is(err, context.Canceled) || StatusCode(err)/100 != 5 {
		t.Fatalf("err = %v, want context.Canceled wrapping the last 503", err)
	}
	if n.Load() != 1 {
		t.Errorf("server saw %d requests after cancel, want 1", n.Load())
	}
}

func TestCallerContextEndingDuringRequestIsNotRetried(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	var n atomic.Int32
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		cancel()
		<-r.Context().Done()
	})
	c, clock, _ := newTestClient(t, srv, nil)
	_, err := c.GetVPC(ctx, "v1")
	if !errors.Is(err, context.Canceled) || n.Load() != 1 || len(clock.recorded()) != 0 {
		t.Fatalf("err = %v, requests = %d, sleeps = %d; want canceled after one request and no sleep", err, n.Load(), len(clock.recorded()))
	}
}

func TestPerAttemptTimeoutIsRetriedForReads(t *testing.T) {
	var n atomic.Int32
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			<-r.Context().Done() // the first attempt hangs until it times out
			return
		}
		writeJSON(w, 200, `{"id":"v1"}`)
	})
	// The timeout bounds the retry's answer too: 1 s holds for an answer
	// at once on a loaded machine (50 ms did not always).
	c, _, obs := newTestClient(t, srv, func(cfg *Config) { cfg.Timeout = time.Second })
	vpc, err := c.GetVPC(t.Context(), "v1")
	if err != nil || vpc.ID != "v1" {
		t.Fatalf("GetVPC = %v, %v", vpc, err)
	}
	if want := []string{"getVPC error", "getVPC 200"}; !reflect.DeepEqual(obs.requests, want) {
		t.Errorf("observed %v, want %v", obs.requests, want)
	}
}

func TestRateLimitWaitIsObserved(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, "[]") })
	c, clock, obs := newTestClient(t, srv, func(cfg *Config) { cfg.RateLimit, cfg.Burst = 1000, 1 })
	// Put the bucket a second in debt, so that the call must wait however
	// slow this machine is; the fake sleep makes the wait instant.
	for range 1000 {
		c.limiter.Reserve()
	}
	if _, err := c.ListVPCs(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(obs.waits) != 1 || obs.waits[0] != OpListVPCs || len(clock.recorded()) != 1 {
		t.Errorf("rate limit waits observed %v, sleeps %v; want one for %s", obs.waits, clock.recorded(), OpListVPCs)
	}
}

func TestBackoffBounds(t *testing.T) {
	c := &Client{retryBaseDelay: time.Second, retryMaxDelay: 10 * time.Second}
	var ceilings []int64
	c.jitter = func(n int64) int64 { ceilings = append(ceilings, n); return 0 }
	for _, attempt := range []int{0, 1, 2, 3, 4, 100} {
		c.backoff(attempt)
	}
	want := []int64{int64(time.Second), int64(2 * time.Second), int64(4 * time.Second), int64(8 * time.Second), int64(10 * time.Second), int64(10 * time.Second)}
	if !reflect.DeepEqual(ceilings, want) {
		t.Errorf("backoff ceilings %v, want %v", ceilings, want)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Duration{
		"":                               0,
		"0":                              0,
		"-5":                             0,
		"garbage":                        0,
		" 12 ":                           12 * time.Second,
		"Mon, 01 Jan 2024 00:01:00 GMT":  time.Minute,
		"Monday, 01-Jan-24 00:00:30 GMT": 30 * time.Second,
		"99999999999999999999":           0, // not an int64: ignored rather than overflowing
		"999999999999":                   365 * 24 * time.Hour,
		"Thu, 01 Jan 2036 00:00:00 GMT":  365 * 24 * time.Hour, // an HTTP-date is clamped as delta-seconds are
	} {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}
