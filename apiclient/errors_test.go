package apiclient

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// assertNoSecrets fails when err's text, in any verb, shows a credential.
func assertNoSecrets(t *testing.T, err error) {
	t.Helper()
	for _, verb := range []string{"%v", "%+v", "%#v", "%s"} {
		if found := secretsIn(fmt.Sprintf(verb, err)); len(found) > 0 {
			t.Errorf("error printed with %s shows %v: %s", verb, found, fmt.Sprintf(verb, err))
		}
	}
}

func TestAPIErrorTyping(t *testing.T) {
	status := func(code int) func(error) bool { return func(err error) bool { return StatusCode(err) == code } }
	helpers := map[string]func(error) bool{
		"IsBadRequest": status(400), "IsUnauthorized": IsUnauthorized, "IsForbidden": status(403),
		"IsNotFound": IsNotFound, "IsConflict": status(409), "IsRateLimited": status(429),
		"IsServerError": func(err error) bool { return StatusCode(err)/100 == 5 }, "IsTimeout": IsTimeout,
	}
	tests := []struct {
		status int
		code   string
		helper string
	}{
		{400, "INVALID_REQUEST", "IsBadRequest"},
		{401, "UNAUTHORIZED", "IsUnauthorized"},
		{403, "FORBIDDEN", "IsForbidden"},
		{404, "NOT_FOUND", "IsNotFound"},
		{409, "CONFLICT", "IsConflict"},
		{429, "RATE_LIMITED", "IsRateLimited"},
		{500, "INTERNAL", "IsServerError"},
		{503, "UNAVAILABLE", "IsServerError"},
	}
	for _, tt := range tests {
		t.Run(tt.code, func(t *testing.T) {
			srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, tt.status, `{"code":"`+tt.code+`","message":"field service_type is required","extra":1}`)
			})
			// No retries: this test is about typing, not the retry policy.
			c, _, _ := newTestClient(t, srv, func(cfg *Config) { cfg.MaxRetries = -1 })
			err := c.DeleteVPC(t.Context(), "v1")
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %#v, want *APIError", err)
			}
			want := APIError{Operation: OpDeleteVPC, Method: "DELETE", Path: "/projects/proj-1/vpcs/v1", StatusCode: tt.status,
				Code: tt.code, Message: "field service_type is required"}
			if *apiErr != want {
				t.Errorf("APIError = %+v, want %+v", *apiErr, want)
			}
			for name, is := range helpers {
				if got := is(err); got != (name == tt.helper) {
					t.Errorf("%s(%d) = %t", name, tt.status, got)
				}
			}
			if StatusCode(err) != tt.status {
				t.Errorf("StatusCode = %d", StatusCode(err))
			}
			msg := err.Error()
			for _, part := range []string{OpDeleteVPC, "DELETE", "/projects/proj-1/vpcs/v1", fmt.Sprint(tt.status), tt.code, "service_type is required"} {
				if !strings.Contains(msg, part) {
					t.Errorf("error %q lacks %q", msg, part)
				}
			}
			assertNoSecrets(t, err)
		})
	}
}

func TestAPIErrorNonJSONBodyKeepsSnippet(t *testing.T) {
	page := "<html><body>" + strings.Repeat("bad gateway ", 100) + "</body></html>"
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		_, _ = w.Write([]byte(page))
	})
	c, _, _ := newTestClient(t, srv, func(cfg *Config) { cfg.MaxRetries = -1 })
	_, err := c.ListServices(t.Context())
	var apiErr *APIError
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadGateway {
		t.Fatalf("err = %v, want a 502 *APIError", err)
	}
	if apiErr.Code != "" || apiErr.Message != "" || !strings.HasPrefix(apiErr.Body, "<html><body>bad gateway") || len(apiErr.Body) > 256 {
		t.Errorf("APIError = %+v, want a snippet of at most 256 bytes", apiErr)
	}
	if StatusCode(err)/100 != 5 {
		t.Error("IsServerError = false")
	}
}

func TestUndocumentedSuccessIsAPIError(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	c, _, _ := newTestClient(t, srv, nil)
	_, err := c.GetVPC(t.Context(), "v1")
	if StatusCode(err) != 204 || !strings.Contains(err.Error(), "unexpected status 204") {
		t.Fatalf("err = %v, want unexpected status 204", err)
	}
}

func TestServerEchoedCredentialsAreScrubbed(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		// A careless server or proxy echoing what it got.
		writeJSON(w, http.StatusUnauthorized, fmt.Sprintf(`{"code":"BAD %s","message":"header %q, key %s:%s"}`,
			testAccessKey, r.Header.Get("Authorization"), testAccessKey, testSecretKey))
	})
	c, _, _ := newTestClient(t, srv, nil)
	_, err := c.ListVPCs(t.Context())
	if !IsUnauthorized(err) {
		t.Fatalf("err = %v, want 401", err)
	}
	assertNoSecrets(t, err)

	srv = newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		_, _ = fmt.Fprintf(w, "denied for %s", r.Header.Get("Authorization"))
	})
	c, _, _ = newTestClient(t, srv, nil)
	_, err = c.GetAuthInfo(t.Context())
	if StatusCode(err) != http.StatusForbidden || !strings.Contains(err.Error(), "denied for") {
		t.Fatalf("err = %v, want 403 with a snippet", err)
	}
	assertNoSecrets(t, err)
}

func TestTransportErrorIsNotAPIError(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {})
	c, _, obs := newTestClient(t, srv, func(cfg *Config) { cfg.MaxRetries = -1 })
	srv.Close() // connection refused from now on

	_, err := c.ListServices(t.Context())
	var tErr *TransportError
	if !errors.As(err, &tErr) || tErr.Operation != OpListServices {
		t.Fatalf("err = %#v, want *TransportError", err)
	}
	if tErr.Timeout() || IsTimeout(err) || StatusCode(err) != 0 || (StatusCode(err)/100 == 5) {
		t.Errorf("transport error misclassified: timeout=%t status=%d", tErr.Timeout(), StatusCode(err))
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		t.Error("transport error unwraps to an *APIError")
	}
	if len(obs.requests) != 1 || obs.requests[0] != OpListServices+" error" {
		t.Errorf("observer saw %v, want one %q", obs.requests, OpListServices+" error")
	}
	assertNoSecrets(t, err)
}

func TestPerAttemptTimeout(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers; ends when the client gives up
	})
	c, _, _ := newTestClient(t, srv, func(cfg *Config) {
		cfg.Timeout = 20 * time.Millisecond
		cfg.MaxRetries = -1
	})
	_, err := c.GetService(t.Context(), "s1")
	var tErr *TransportError
	if !errors.As(err, &tErr) || !tErr.Timeout() || !IsTimeout(err) {
		t.Fatalf("err = %v, want a timeout *TransportError", err)
	}
	if StatusCode(err) != 0 {
		t.Errorf("StatusCode = %d, want 0", StatusCode(err))
	}
}

func TestBodyLimit(t *testing.T) {
	const body = `[{"id":"v1"}]` // 13 bytes
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, body) })

	c, _, _ := newTestClient(t, srv, func(cfg *Config) { cfg.MaxBodyBytes = int64(len(body)) })
	if vpcs, err := c.ListVPCs(t.Context()); err != nil || len(vpcs) != 1 {
		t.Fatalf("body of exactly the limit: %v, %v", vpcs, err)
	}

	c, _, _ = newTestClient(t, srv, func(cfg *Config) { cfg.MaxBodyBytes = int64(len(body)) - 1 })
	vpcs, err := c.ListVPCs(t.Context())
	if !errors.Is(err, ErrBodyTooLarge) || vpcs != nil {
		t.Fatalf("body over the limit: %v, %v; want ErrBodyTooLarge", vpcs, err)
	}
	if !strings.Contains(err.Error(), "more than 12 bytes") {
		t.Errorf("error %q does not say the limit", err)
	}
}

func TestDecodeError(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			writeJSON(w, 202, `{"initial_password":"s3cretpw","created":42}`)
			return
		}
		writeJSON(w, 200, `{"service_id":["not","a","string"]}`)
	})
	c, _, _ := newTestClient(t, srv, nil)

	_, err := c.GetService(t.Context(), "s1")
	var dErr *DecodeError
	if !errors.As(err, &dErr) || dErr.Operation != OpGetService || !strings.HasPrefix(dErr.Snippet, `{"service_id"`) {
		t.Fatalf("err = %#v, want *DecodeError with a snippet", err)
	}
	if StatusCode(err) != 0 {
		t.Error("a decode error must not look like an API error")
	}

	_, err = c.CreateService(t.Context(), CreateServiceRequest{Name: "x"})
	if !errors.As(err, &dErr) {
		t.Fatalf("err = %v, want *DecodeError", err)
	}
	if strings.Contains(err.Error(), "s3cretpw") {
		t.Errorf("decode error quotes the initial password: %v", err)
	}
}

func TestRedirectsAreNotFollowed(t *testing.T) {
	var hits atomic.Int32
	elsewhere := newTestServer(t, func(w http.ResponseWriter, r *http.Request) { hits.Add(1); writeJSON(w, 201, `{"id":"v"}`) })
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+"/v1/projects/proj-1/vpcs", http.StatusTemporaryRedirect)
	})
	c, _, _ := newTestClient(t, srv, nil)
	_, err := c.CreateVPC(t.Context(), CreateVPCRequest{Name: "v"})
	if StatusCode(err) != http.StatusTemporaryRedirect || hits.Load() != 0 {
		t.Fatalf("err = %v, redirect target hit %d times; want a 307 *APIError and no hit", err, hits.Load())
	}
}

// TestErrorChecksAllocateNothing: the readers ask every answer whether it is
// a 404 or a 403, and an answer, most often, is no error at all.
func TestErrorChecksAllocateNothing(t *testing.T) {
	for _, err := range []error{nil, fmt.Errorf("x: %w", &APIError{StatusCode: http.StatusNotFound})} {
		if n := testing.AllocsPerRun(10, func() { _, _, _ = IsNotFound(err), IsForbidden(err), IsTimeout(err) }); n != 0 {
			t.Errorf("%v: %v allocations, want 0", err, n)
		}
	}
}
