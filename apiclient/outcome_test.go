package apiclient

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestAnswerThatDoesNotDecodeIsAFailedRequest: a success status whose body
// does not decode (malformed, or cut short with a matching Content-Length)
// is one failed request, code CodeDecodeError, not a "200"; a body that
// breaks off (the connection closes before Content-Length) is a transport
// failure, code "error". Either way one request, counted once, and no field
// counted as dropped.
func TestAnswerThatDoesNotDecodeIsAFailedRequest(t *testing.T) {
	cases := []struct {
		name string
		body string // served with a matching Content-Length
		cut  bool   // announce more than body, then close the connection
		op   string
		call func(*Client) error
		code string
	}{
		{name: "malformed list", body: `{"service_id": "x", "status": [tru`, op: OpListServices, code: CodeDecodeError,
			call: func(c *Client) error { _, err := c.ListServices(t.Context()); return err }},
		{name: "truncated list", body: `[{"id":"v1","name":"a"},{"id":"v2","na`, op: OpListVPCs, code: CodeDecodeError,
			call: func(c *Client) error { _, err := c.ListVPCs(t.Context()); return err }},
		{name: "truncated value", body: `{"service_id":"s1","name":"a","sta`, op: OpGetService, code: CodeDecodeError,
			call: func(c *Client) error { _, err := c.GetService(t.Context(), "s1"); return err }},
		{name: "truncated write answer", body: `{"service_id":"s1","initial_pass`, op: OpCreateService, code: CodeDecodeError,
			call: func(c *Client) error {
				_, err := c.CreateService(t.Context(), CreateServiceRequest{Name: "a"})
				return err
			}},
		{name: "list broken off", body: `[{"id":"v1","name":"a"}`, cut: true, op: OpListVPCs, code: "error",
			call: func(c *Client) error { _, err := c.ListVPCs(t.Context()); return err }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status := http.StatusOK
			if o := byName[tc.op]; o.Success != 0 {
				status = o.Success
			}
			var seen atomic.Int32
			srv := newTestServer(t, func(w http.ResponseWriter, _ *http.Request) {
				seen.Add(1)
				w.Header().Set("Content-Type", "application/json")
				n := len(tc.body)
				if tc.cut {
					n += 100
				}
				w.Header().Set("Content-Length", strconv.Itoa(n))
				w.WriteHeader(status)
				_, _ = io.WriteString(w, tc.body)
				if tc.cut {
					w.(http.Flusher).Flush()
					conn, _, err := w.(http.Hijacker).Hijack()
					if err == nil {
						_ = conn.Close()
					}
				}
			})
			c, _, obs := newTestClient(t, srv, func(cfg *Config) { cfg.MaxRetries = -1 })
			err := tc.call(c)
			if err == nil {
				t.Fatal("the call succeeded")
			}
			if want := []string{tc.op + " " + tc.code}; !slices.Equal(obs.requests, want) {
				t.Errorf("observed requests %v, want %v (the server saw %d)", obs.requests, want, seen.Load())
			}
			if int(seen.Load()) != len(obs.requests) {
				t.Errorf("the server saw %d requests, %d were observed", seen.Load(), len(obs.requests))
			}
			if len(obs.decodeErrors) != 0 {
				t.Errorf("a whole answer that does not decode counted as dropped fields: %v", obs.decodeErrors)
			}
			var de *DecodeError
			if tc.code == CodeDecodeError && !errors.As(err, &de) {
				t.Errorf("err = %v, want a *DecodeError", err)
			}
		})
	}
}

// TestAnswerTooLargeIsAFailedRequest: an answer beyond the size bounds
// (the whole body, or one value of a streamed list) fails its call: it is
// counted as CodeDecodeError, the answer the Client could not decode within
// its bounds, not as its 200.
func TestAnswerTooLargeIsAFailedRequest(t *testing.T) {
	big := `[{"id":"v1","name":"` + strings.Repeat("x", 4096) + `"}]`
	for _, tc := range []struct {
		name string
		cfg  func(*Config)
		call func(*Client) error
		op   string
	}{
		{"body of a read", func(c *Config) { c.MaxBodyBytes = 1024 }, func(c *Client) error { _, err := c.ListVPCs(t.Context()); return err }, OpListVPCs},
		{"one value of a read", func(c *Config) { c.MaxValueBytes = 1024 }, func(c *Client) error { _, err := c.ListVPCs(t.Context()); return err }, OpListVPCs},
		{"body of a write", func(c *Config) { c.MaxBodyBytes = 1024 }, func(c *Client) error {
			_, err := c.CreateVPC(t.Context(), CreateVPCRequest{Name: "a", CIDR: "10.0.0.0/16", RegionCode: "r"})
			return err
		}, OpCreateVPC},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newTestServer(t, func(w http.ResponseWriter, _ *http.Request) {
				status := http.StatusOK
				if o := byName[tc.op]; o.Success != 0 {
					status = o.Success
				}
				body := big
				if tc.op == OpCreateVPC {
					body = `{"id":"v1","name":"` + strings.Repeat("x", 4096) + `"}`
				}
				writeJSON(w, status, body)
			})
			c, _, obs := newTestClient(t, srv, func(cfg *Config) { cfg.MaxRetries = -1; tc.cfg(cfg) })
			if err := tc.call(c); err == nil {
				t.Fatal("the call succeeded")
			}
			if want := []string{tc.op + " " + CodeDecodeError}; !slices.Equal(obs.requests, want) {
				t.Errorf("observed %v, want %v", obs.requests, want)
			}
		})
	}
}

// dropOnReuse is an HTTP/1.1 server that answers the first request of each
// connection with an empty list and, on a connection that already carried
// one, reads the next request and closes the connection without an answer:
// the case in which Go's transport replays an idempotent request on its
// own, unseen by the caller.
type dropOnReuse struct {
	ln            net.Listener
	seen, dropped atomic.Int32
	wg            sync.WaitGroup
	mu            sync.Mutex
	conns         []net.Conn
}

func newDropOnReuse(t *testing.T) *dropOnReuse {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &dropOnReuse{ln: ln}
	s.wg.Go(func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns = append(s.conns, conn)
			s.mu.Unlock()
			s.wg.Go(func() { s.serve(conn) })
		}
	})
	t.Cleanup(func() {
		_ = ln.Close()
		s.mu.Lock()
		for _, c := range s.conns {
			_ = c.Close()
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *dropOnReuse) serve(conn net.Conn) {
	defer func() { _ = conn.Close() }()
	r := bufio.NewReader(conn)
	for n := 0; ; n++ {
		req, err := http.ReadRequest(r)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		s.seen.Add(1)
		if n > 0 {
			s.dropped.Add(1)
			return // seen, then dropped
		}
		_, _ = io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n[]")
	}
}

// TestTransportDoesNotReplayReads: a read whose reused connection is
// dropped after the server read it fails, and is counted, once: the
// transport does not send it again behind the Client's back, so the
// exporter's retry budget is the only retry and every request the server
// saw is observed.
func TestTransportDoesNotReplayReads(t *testing.T) {
	for _, retries := range []int{-1, 2} {
		t.Run("max_retries="+strconv.Itoa(retries), func(t *testing.T) {
			srv := newDropOnReuse(t)
			obs := &recordingObserver{}
			c, err := New(Config{BaseURL: "http://" + srv.ln.Addr().String() + "/v1", ProjectID: testProject,
				AccessKey: testAccessKey, SecretKey: testSecretKey, RateLimit: 1e6, MaxRetries: retries, Observer: obs})
			if err != nil {
				t.Fatal(err)
			}
			c.sleep = (&fakeClock{}).sleep
			var failedCalls int
			for range 4 {
				// Each call after one that succeeded reuses its
				// connection and is dropped; the one after a drop, or
				// its retry, opens a fresh connection, which answers.
				if _, err := c.ListVPCs(context.Background()); err != nil {
					failedCalls++
				}
			}
			dropped := int(srv.dropped.Load())
			if seen := int(srv.seen.Load()); seen != len(obs.requests) {
				t.Errorf("the server saw %d requests, the Client observed %d: %v", seen, len(obs.requests), obs.requests)
			}
			var failed int
			for _, r := range obs.requests {
				if r == OpListVPCs+" "+CodeTransportError {
					failed++
				}
			}
			if dropped == 0 || failed != dropped {
				t.Errorf("%d dropped requests observed, the server dropped %d: %v", failed, dropped, obs.requests)
			}
			if retries < 0 && failedCalls != dropped {
				t.Errorf("%d calls failed without retries, want one per drop (%d)", failedCalls, dropped)
			}
			if retries > 0 && (len(obs.retries) != dropped || failedCalls != 0) {
				t.Errorf("%d retries observed and %d calls failed, want one retry per drop (%d) and no failure", len(obs.retries), failedCalls, dropped)
			}
		})
	}
}

// TestBodilessReadOnTheWire: making reads non-replayable changes nothing on
// the wire: no Content-Length, no Transfer-Encoding, no body.
func TestBodilessReadOnTheWire(t *testing.T) {
	var header http.Header
	var body []byte
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		header = r.Header.Clone()
		body, _ = io.ReadAll(r.Body)
		if r.ContentLength != 0 || len(r.TransferEncoding) != 0 {
			t.Errorf("ContentLength %d, TransferEncoding %v, want 0 and none", r.ContentLength, r.TransferEncoding)
		}
		writeJSON(w, http.StatusOK, `[]`)
	})
	c, _, _ := newTestClient(t, srv, nil)
	if _, err := c.ListVPCs(t.Context()); err != nil {
		t.Fatal(err)
	}
	if len(body) != 0 || header.Get("Content-Length") != "" || header.Get("Transfer-Encoding") != "" {
		t.Errorf("a read carried a body %q or its headers: %v", body, header)
	}
}

// TestUnauthorizedRetriedWhenKeysChangedSinceSent: a request sent with
// keys that were replaced while it was under way (a file watch installed
// them) is tried once more with the new keys when it gets a 401, although
// the credential source has nothing newer than the Client's current keys.
// Keys unchanged since the request was sent, and nothing new at the source:
// the 401 stands. A second 401 with the new keys stands too.
func TestUnauthorizedRetriedWhenKeysChangedSinceSent(t *testing.T) {
	const newAccess, newSecret = "AKrotatedaccess", "SKrotatedsecretvalue"
	basic := func(a, s string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(a+":"+s)) }
	var accept atomic.Value // the Authorization the server takes
	accept.Store(basic(testAccessKey, testSecretKey))
	arrived := make(chan struct{}, 1)
	proceed := make(chan struct{})
	var hold atomic.Bool
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		if hold.CompareAndSwap(true, false) {
			arrived <- struct{}{}
			<-proceed
		}
		if r.Header.Get("Authorization") != accept.Load().(string) {
			writeJSON(w, http.StatusUnauthorized, `{"code":"UNAUTHORIZED","message":"bad key"}`)
			return
		}
		writeJSON(w, http.StatusOK, `[]`)
	})
	var looks atomic.Int32
	c, _, obs := newTestClient(t, srv, func(cfg *Config) {
		cfg.MaxRetries = -1
		// The source has nothing newer than what the Client holds.
		cfg.OnUnauthorized = func() bool { looks.Add(1); return false }
	})

	// The request is sent with the old keys; while it is under way, the
	// provider revokes them and the new keys are installed.
	hold.Store(true)
	done := make(chan error, 1)
	go func() { _, err := c.ListVPCs(t.Context()); done <- err }()
	<-arrived
	accept.Store(basic(newAccess, newSecret))
	if _, err := c.SetCredentials(newAccess, newSecret, ""); err != nil {
		t.Fatal(err)
	}
	close(proceed)
	if err := <-done; err != nil {
		t.Fatalf("the call sent with the keys replaced under it failed: %v", err)
	}
	reqs := srv.requests()
	if len(reqs) != 2 || reqs[1].Auth != basic(newAccess, newSecret) {
		t.Fatalf("requests %v, want the 401 then one retry with the new keys", reqs)
	}
	if want := []string{OpListVPCs + " 401", OpListVPCs + " 200"}; !slices.Equal(obs.requests, want) {
		t.Errorf("observed %v, want %v", obs.requests, want)
	}
	if !slices.Equal(obs.retries, []string{OpListVPCs}) {
		t.Errorf("observed retries %v, want the one after the 401", obs.retries)
	}
	if looks.Load() != 0 {
		t.Errorf("the source was asked %d times, want none: the keys had already changed", looks.Load())
	}

	// Revoked again, nothing new anywhere: one look at the source, and
	// the 401 stands.
	accept.Store("nothing the client has")
	_, err := c.ListVPCs(t.Context())
	if !IsUnauthorized(err) || looks.Load() != 1 || len(srv.requests()) != 3 {
		t.Errorf("err = %v after %d looks and %d requests, want a 401 after 1 look and 3 requests", err, looks.Load(), len(srv.requests()))
	}

	// The source always has new keys, but they are refused too: one
	// retry only.
	before := len(srv.requests())
	var c2 *Client
	var installs atomic.Int32
	c2, _, _ = newTestClient(t, srv, func(cfg *Config) {
		cfg.MaxRetries = -1
		cfg.OnUnauthorized = func() bool {
			changed, _ := c2.SetCredentials(Secret("AK"+strings.Repeat("x", int(installs.Add(1)))), "SKy", "")
			return changed
		}
	})
	if _, err := c2.ListVPCs(t.Context()); !IsUnauthorized(err) {
		t.Errorf("err = %v, want the 401 of the retry", err)
	}
	if n := len(srv.requests()) - before; n != 2 || installs.Load() != 1 {
		t.Errorf("%d requests and %d installs, want 2 and 1", n, installs.Load())
	}
}

// TestBodilessReadOverHTTP2: over HTTP/2 the non-replayable read still
// carries no body: the server reads none.
func TestBodilessReadOverHTTP2(t *testing.T) {
	var proto string
	var body []byte
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		proto = r.Proto
		body, _ = io.ReadAll(r.Body)
		writeJSON(w, http.StatusOK, `[]`)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	obs := &recordingObserver{}
	c, err := New(Config{BaseURL: srv.URL + "/v1", ProjectID: testProject, AccessKey: testAccessKey, SecretKey: testSecretKey,
		RateLimit: 1e6, Observer: obs, TLSConfig: srv.Client().Transport.(*http.Transport).TLSClientConfig})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.ListVPCs(t.Context()); err != nil {
		t.Fatal(err)
	}
	if proto != "HTTP/2.0" || len(body) != 0 {
		t.Errorf("proto %s, body %q: want HTTP/2.0 and none", proto, body)
	}
	if !slices.Equal(obs.requests, []string{OpListVPCs + " 200"}) {
		t.Errorf("observed %v", obs.requests)
	}
}
