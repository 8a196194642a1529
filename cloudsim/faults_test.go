package cloudsim

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

func TestFaults(t *testing.T) {
	tests := []struct {
		name  string
		fault Fault
		// auth is the credential option; faults apply before
		// authentication, so most cases send none.
		auth  reqOpt
		check func(t *testing.T, status int, raw []byte, h http.Header)
	}{
		{"rate limited with Retry-After", Fault{Status: 429, RetryAfter: "7"}, nil, func(t *testing.T, status int, raw []byte, h http.Header) {
			eb := decode[apiclient.ErrorBody](t, raw)
			if status != 429 || eb.Code != "RATE_LIMITED" || h.Get("Retry-After") != "7" {
				t.Errorf("status %d body %s Retry-After %q", status, raw, h.Get("Retry-After"))
			}
		}},
		{"internal error", Fault{Status: 500}, nil, func(t *testing.T, status int, raw []byte, h http.Header) {
			if eb := decode[apiclient.ErrorBody](t, raw); status != 500 || eb.Code != "INTERNAL_ERROR" {
				t.Errorf("status %d body %s", status, raw)
			}
		}},
		{"custom code", Fault{Status: 503, Code: "MAINTENANCE", Message: "back soon", RetryAfter: "Wed, 21 Oct 2015 07:28:00 GMT"}, nil,
			func(t *testing.T, status int, raw []byte, h http.Header) {
				eb := decode[apiclient.ErrorBody](t, raw)
				if status != 503 || eb.Code != "MAINTENANCE" || eb.Message != "back soon" || h.Get("Retry-After") == "" {
					t.Errorf("status %d body %s", status, raw)
				}
			}},
		{"malformed", Fault{Malformed: true}, nil, func(t *testing.T, status int, raw []byte, h http.Header) {
			if status != 200 || json.Valid(raw) {
				t.Errorf("status %d, valid JSON %v: %s", status, json.Valid(raw), raw)
			}
		}},
		{"truncated", Fault{Truncated: true}, as(rwCred), func(t *testing.T, status int, raw []byte, h http.Header) {
			if status != 200 || json.Valid(raw) || len(raw) == 0 || raw[0] != '[' {
				t.Errorf("status %d: %s", status, raw)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Timings{})
			e.createService("a")
			e.sim.AddFault(tt.fault)
			// Faults apply before authentication.
			auth := tt.auth
			if auth == nil {
				auth = noAuth
			}
			status, raw, h := e.do("GET", servicesPath, nil, auth)
			tt.check(t, status, raw, h)
			if n := e.sim.RequestCount(apiclient.OpListServices); n != 1 {
				t.Errorf("count %d, want 1", n)
			}
			e.sim.ClearFaults()
			e.must(http.StatusOK, "GET", servicesPath, nil)
		})
	}
}

func TestFaultDropConnection(t *testing.T) {
	e := newEnv(t, Timings{})
	e.sim.AddFault(Fault{Operation: apiclient.OpGetAuthInfo, DropConnection: true, Count: 1})
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/v1/auth/info", nil)
	req.Header.Set("Authorization", "Bearer api")
	resp, err := e.srv.Client().Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("dropped connection answered %d", resp.StatusCode)
	}
	// Count 1: spent after one application.
	e.must(http.StatusOK, "GET", "/v1/auth/info", nil, bearer("api"))
}

func TestFaultLatency(t *testing.T) {
	e := newEnv(t, Timings{})
	// A latency far beyond the client's deadline proves the delay without
	// timing the request.
	e.sim.AddFault(Fault{Latency: time.Hour, Count: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, e.srv.URL+servicesPath, nil)
	req.SetBasicAuth("ak", "sk")
	resp, err := e.srv.Client().Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("request with an hour of latency answered")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v, want a deadline", err)
	}
	// A latency-only fault lets the request be handled.
	e.sim.AddFault(Fault{Latency: time.Millisecond})
	e.must(http.StatusOK, "GET", servicesPath, nil)
}

func TestFaultSelection(t *testing.T) {
	e := newEnv(t, Timings{})
	e.sim.AddFault(Fault{Operation: apiclient.OpCreateService, Status: 500, Count: 2})
	e.must(http.StatusOK, "GET", servicesPath, nil) // another operation
	e.must(http.StatusInternalServerError, "POST", servicesPath, createBody("a"))
	e.must(http.StatusInternalServerError, "POST", servicesPath, createBody("a"))
	e.must(http.StatusAccepted, "POST", servicesPath, createBody("a"))
	if n := e.sim.RequestCount(apiclient.OpCreateService); n != 3 {
		t.Errorf("createService counted %d times, want 3", n)
	}

	// Rate: about half of 400 requests fail; the bounds are loose enough
	// never to flake with the seeded source, tight enough to catch 0 or 1.
	e.sim.AddFault(Fault{Operation: apiclient.OpListVPCs, Status: 500, Rate: 0.5})
	failed := 0
	for range 400 {
		if status, _, _ := e.do("GET", vpcsPath, nil); status == 500 {
			failed++
		}
	}
	if failed < 120 || failed > 280 {
		t.Errorf("%d of 400 failed with rate 0.5", failed)
	}
}

func TestFaultControlOverHTTP(t *testing.T) {
	e := newEnv(t, Timings{})
	e.must(http.StatusCreated, "POST", "/_sim/faults", `{"operation":"listServices","status":429,"retry_after":"3","latency":"1ms","count":1}`, noAuth)
	status, _, h := e.do("GET", servicesPath, nil)
	if status != 429 || h.Get("Retry-After") != "3" {
		t.Errorf("status %d Retry-After %q", status, h.Get("Retry-After"))
	}
	e.must(http.StatusOK, "GET", servicesPath, nil)
	e.must(http.StatusCreated, "POST", "/_sim/faults", `{"status":500}`, noAuth)
	e.must(http.StatusInternalServerError, "GET", vpcsPath, nil)
	e.must(http.StatusNoContent, "DELETE", "/_sim/faults", nil, noAuth)
	e.must(http.StatusOK, "GET", vpcsPath, nil)
	for _, bad := range []string{
		`{"operation":"listServicez","status":500}`,
		`{"status":200}`,
		`{"latency":"soon"}`,
		`{"rate":2}`,
		`{"count":-1}`,
		`{"retryAfter":"1"}`,
		`{"oversize":"huge"}`,
		`{"oversize":"blank","size":-1}`,
		`[`,
	} {
		e.mustError(http.StatusBadRequest, "INVALID_REQUEST", "POST", "/_sim/faults", bad, noAuth)
	}
}

// TestFaultOversize: each oversize answer is what it says, as a client
// reading it sees it.
func TestFaultOversize(t *testing.T) {
	e := newEnv(t, Timings{})
	e.createService("a")
	e.createService("b")
	get := func(read func(io.Reader) error) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, e.srv.URL+servicesPath, nil)
		as(rwCred)(req)
		resp, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := read(resp.Body); err != nil {
			t.Fatal(err)
		}
		return resp
	}

	e.sim.AddFault(Fault{Oversize: OversizeBlank, Size: 3 << 20, Count: 1})
	var body []byte
	resp := get(func(r io.Reader) (err error) { body, err = io.ReadAll(r); return err })
	if resp.ContentLength != 3<<20 || len(body) != 3<<20 || strings.TrimSpace(string(body)) != "" {
		t.Errorf("blank: Content-Length %d, %d bytes, want 3 MiB of white space", resp.ContentLength, len(body))
	}

	e.sim.AddFault(Fault{Oversize: OversizeEndless, Count: 1})
	resp = get(func(r io.Reader) error {
		n, err := io.Copy(io.Discard, io.LimitReader(r, 8<<20))
		if n != 8<<20 {
			return fmt.Errorf("endless answer ended after %d bytes: %w", n, err)
		}
		return nil
	})
	if resp.ContentLength != -1 {
		t.Errorf("endless: Content-Length %d, want none (chunked)", resp.ContentLength)
	}

	e.sim.AddFault(Fault{Oversize: OversizePadded, Size: 4 << 20, Count: 1})
	get(func(r io.Reader) (err error) { body, err = io.ReadAll(r); return err })
	var list []apiclient.Service
	if err := json.Unmarshal(body, &list); err != nil || len(body) < 4<<20 || len(list) < 8 || list[0].ServiceID == "" {
		t.Errorf("padded: %d bytes, %d services (%v), want a valid list of at least 4 MiB", len(body), len(list), err)
	}
}

func TestTruncatedKeepsHalf(t *testing.T) {
	e := newEnv(t, Timings{})
	full := e.must(http.StatusOK, "GET", "/v1/auth/info", nil, bearer("api"))
	e.sim.AddFault(Fault{Truncated: true})
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/v1/auth/info", nil)
	req.Header.Set("Authorization", "Bearer api")
	resp, err := e.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	half, _ := io.ReadAll(resp.Body)
	if string(half) != string(full[:len(full)/2]) {
		t.Errorf("truncated body %q, want the first half of %q", half, full)
	}
}

func TestFaultEdit(t *testing.T) {
	tests := []struct {
		name  string
		edit  Edit
		check func(t *testing.T, list []map[string]any)
	}{
		{"poisoned number", Edit{Index: 0, Field: "resources.0.spec.cpu_millis", Value: json.RawMessage(`1e308`)},
			func(t *testing.T, list []map[string]any) {
				spec := list[0]["resources"].([]any)[0].(map[string]any)["spec"].(map[string]any)
				if len(list) != 2 || spec["cpu_millis"] != 1e308 {
					t.Errorf("got %v", list)
				}
			}},
		{"poisoned date", Edit{Index: 1, Field: "created", Value: json.RawMessage(`"yesterday"`)},
			func(t *testing.T, list []map[string]any) {
				if len(list) != 2 || list[1]["created"] != "yesterday" || list[0]["created"] == "yesterday" {
					t.Errorf("got %v", list)
				}
			}},
		{"duplicate id", Edit{Index: 0, Field: "status", Value: json.RawMessage(`"UNSTABLE"`), Append: true},
			func(t *testing.T, list []map[string]any) {
				if len(list) != 3 || list[2]["service_id"] != list[0]["service_id"] || list[2]["status"] != "UNSTABLE" || list[0]["status"] == "UNSTABLE" {
					t.Errorf("got %v", list)
				}
			}},
		{"path not found leaves the answer", Edit{Index: 0, Field: "no.such.path", Value: json.RawMessage(`1`)},
			func(t *testing.T, list []map[string]any) {
				if len(list) != 2 || list[0]["no"] != nil {
					t.Errorf("got %v", list)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Timings{})
			e.createService("a")
			e.createService("b")
			e.sim.AddFault(Fault{Operation: apiclient.OpListServices, Edit: &tt.edit})
			var list []map[string]any
			if err := json.Unmarshal(e.must(http.StatusOK, "GET", servicesPath, nil), &list); err != nil {
				t.Fatal(err)
			}
			tt.check(t, list)
		})
	}
	e := newEnv(t, Timings{})
	e.mustError(http.StatusBadRequest, "INVALID_REQUEST", "POST", "/_sim/faults", map[string]any{"edit": map[string]any{"field": ""}}, noAuth)
}

func TestFaultEditsCombine(t *testing.T) {
	e := newEnv(t, Timings{})
	e.createService("a")
	e.createService("b")
	e.sim.AddFault(Fault{Operation: apiclient.OpListServices, Edit: &Edit{Index: 0, Field: "name", Value: json.RawMessage(`"x"`)}})
	e.sim.AddFault(Fault{Operation: apiclient.OpListServices, Edit: &Edit{Index: 1, Field: "name", Value: json.RawMessage(`"y"`)}})
	list := decode[[]apiclient.Service](t, e.must(http.StatusOK, "GET", servicesPath, nil))
	if len(list) != 2 || list[0].Name != "x" || list[1].Name != "y" {
		t.Errorf("services %+v: want both edits", list)
	}
}

// TestFaultCutConnection: drop_after_headers and drop_mid_body answer the
// status and headers of the real answer, with its whole Content-Length,
// then close the connection: the body breaks off.
func TestFaultCutConnection(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault Fault
		min   int // bytes of the body received at least
	}{
		{"after headers", Fault{DropAfterHeaders: true}, 0},
		{"mid body", Fault{DropMidBody: true}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, Timings{})
			e.createService("a")
			e.sim.AddFault(tc.fault)
			req, _ := http.NewRequest(http.MethodGet, e.srv.URL+servicesPath, nil)
			as(rwCred)(req)
			resp, err := e.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusOK || !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("status %d, read error %v, want 200 and an unexpected EOF", resp.StatusCode, err)
			}
			if len(body) < tc.min || int64(len(body)) >= resp.ContentLength {
				t.Errorf("%d of %d bytes received", len(body), resp.ContentLength)
			}
			if n := e.sim.RequestCount(apiclient.OpListServices); n != 1 {
				t.Errorf("count %d, want 1", n)
			}
		})
	}
}

// TestFaultOnReuse: a fault with on_reuse applies only to requests on a
// connection that carried one before, and is not spent by the others.
func TestFaultOnReuse(t *testing.T) {
	e := newEnv(t, Timings{})
	e.sim.AddFault(Fault{Operation: apiclient.OpListServices, DropConnection: true, OnReuse: true, Count: 1})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	defer client.CloseIdleConnections()
	get := func() error {
		req, _ := http.NewRequest(http.MethodGet, e.srv.URL+servicesPath, nil)
		as(rwCred)(req)
		// A body the transport cannot rewind: it must not resend the
		// request on its own after the drop.
		req.Body = io.NopCloser(eofReader{})
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.Body.Close()
	}
	if err := get(); err != nil {
		t.Fatalf("first request of a connection: %v", err)
	}
	if err := get(); err == nil {
		t.Fatal("second request on the kept-alive connection answered")
	}
	if err := get(); err != nil {
		t.Fatalf("after the fault was spent: %v", err)
	}
	if n := e.sim.RequestCount(apiclient.OpListServices); n != 3 {
		t.Errorf("count %d, want 3", n)
	}
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
