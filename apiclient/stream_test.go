package apiclient

import (
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
)

// streamServices answers a list of n services, each padded with an unknown
// field of pad bytes, written piece by piece.
func streamServices(n, pad int) http.HandlerFunc {
	padding := strings.Repeat("p", pad)
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("["))
		for i := range n {
			if i > 0 {
				_, _ = w.Write([]byte(","))
			}
			_, _ = fmt.Fprintf(w, `{"service_id":"s%d","status":"READY","unknown_padding":"%s"}`, i, padding)
		}
		_, _ = w.Write([]byte("]"))
	}
}

func TestListDecodedAsStream(t *testing.T) {
	srv := newTestServer(t, streamServices(200, 64<<10)) // about 13 MB
	t.Run("within the limit", func(t *testing.T) {
		c, _, _ := newTestClient(t, srv, func(cfg *Config) { cfg.MaxBodyBytes = 16 << 20 })
		got, err := c.ListServices(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 200 || got[199].ServiceID != "s199" || got[0].Status != ServiceReady {
			t.Fatalf("got %d services, last %+v", len(got), got[len(got)-1].ServiceID)
		}
	})
	t.Run("over the limit", func(t *testing.T) {
		c, _, _ := newTestClient(t, srv, func(cfg *Config) { cfg.MaxBodyBytes = 1 << 20; cfg.MaxRetries = -1 })
		_, err := c.ListServices(t.Context())
		if !errors.Is(err, ErrBodyTooLarge) || !strings.Contains(err.Error(), "--api.max-response-size") {
			t.Fatalf("err = %v, want ErrBodyTooLarge naming the flag", err)
		}
	})
}

func TestStreamDecodingKeepsStrictAndLenientSemantics(t *testing.T) {
	for _, tt := range []struct {
		name, body string
		lenient    bool
		want       int // services kept; -1 for an error
	}{
		{"null", `null`, true, 0},
		{"empty", ` [ ] `, true, 0},
		{"not an array", `{"service_id":"s"}`, true, -1},
		{"trailing data", `[{"service_id":"s"}] x`, true, -1},
		{"cut short", `[{"service_id":"s"},`, true, -1},
		{"bad element dropped", `[{"service_id":"s"},7,{"service_id":"t","paused":"no"}]`, true, 2},
		{"bad element strict", `[{"service_id":"s"},{"service_id":"t","paused":"no"}]`, false, -1},
		{"bad element after white space", "[ {\"service_id\":\"s\"} ,\n\t {\"service_id\":\"t\",\"paused\":\"no\"}\n]", true, 2},
		// Far into a long list, past the bytes let go between elements.
		{"bad elements in a long list", longListWithBadElements(3000), true, 3000},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var drop func(FieldError)
			if tt.lenient {
				drop = func(FieldError) {}
			}
			var got []Service
			err := decodeBody(OpListServices, []byte(tt.body), &got, drop)
			switch {
			case tt.want < 0 && err == nil:
				t.Fatalf("decoded %v, want an error", got)
			case tt.want >= 0 && (err != nil || len(got) != tt.want || got == nil):
				t.Fatalf("got %v (%v), want %d services", got, err, tt.want)
			}
			for i, s := range got {
				if s.ServiceID == "" || (tt.want > 2 && s.ServiceID != fmt.Sprintf("s%d", i)) {
					t.Fatalf("service %d: id %q", i, s.ServiceID)
				}
			}
		})
	}
}

// longListWithBadElements is a list of n services, one in seven with a
// field of the wrong type, with white space of varying length between them.
func longListWithBadElements(n int) string {
	var b strings.Builder
	b.WriteString("[")
	for i := range n {
		if i > 0 {
			b.WriteString(strings.Repeat(" ", i%5) + ",\n")
		}
		paused := "false"
		if i%7 == 3 {
			paused = `"no"`
		}
		fmt.Fprintf(&b, `{"service_id":"s%d","name":"service %d of a long list","paused":%s}`, i, i, paused)
	}
	b.WriteString("]")
	return b.String()
}

// TestDecodeErrorSnippetRedacted: the snippet of an answer that does not
// decode must not show the bearer key: it is logged and returned.
func TestDecodeErrorSnippetRedacted(t *testing.T) {
	basic := base64.StdEncoding.EncodeToString([]byte(testAccessKey + ":" + testSecretKey))
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, "token Bearer "+testAPIKey+" / Basic "+basic[:20])
	})
	c, _, _ := newTestClient(t, srv, nil)
	_, err := c.GetAuthInfo(t.Context())
	var d *DecodeError
	if !errors.As(err, &d) || !strings.Contains(d.Snippet, redacted) {
		t.Fatalf("err = %v, want a DecodeError with a redacted snippet", err)
	}
	assertNoSecrets(t, err)
	if revealed(err.Error(), testAccessKey) {
		t.Errorf("error %q reveals the access key", err)
	}
}

// TestBodylessAnswerIgnoresItsBody: a write answered with its documented
// status is a success whatever body comes with it, even one over the
// limit: reporting it as too large would make an accepted write look
// failed.
func TestBodylessAnswerIgnoresItsBody(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusAccepted, `{"message":"`+strings.Repeat("x", 2<<20)+`"}`)
	})
	c, _, _ := newTestClient(t, srv, func(cfg *Config) { cfg.MaxBodyBytes = 1 << 20 })
	if err := c.DeleteService(t.Context(), "s1"); err != nil {
		t.Fatalf("DeleteService answered 202 with a large body: %v", err)
	}
}

// hostileBody is a body of head, then n bytes of fill, then tail,
// generated as it is read so that the test itself holds none of it.
type hostileBody struct {
	head, tail []byte
	fill       byte
	n          int64
	read       int64 // bytes handed out
}

func (b *hostileBody) Read(p []byte) (int, error) {
	total := int64(len(b.head)) + b.n + int64(len(b.tail))
	if b.read >= total {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && b.read < total {
		switch off := b.read; {
		case off < int64(len(b.head)):
			p[n] = b.head[off]
		case off < int64(len(b.head))+b.n:
			p[n] = b.fill
		default:
			p[n] = b.tail[off-int64(len(b.head))-b.n]
		}
		n++
		b.read++
	}
	return n, nil
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestHostileValueBounded: the decoder holds one value whole, and the
// white space before one too, so that a body of blanks or one endless
// token used to grow its buffer to the size of the whole answer (and
// three times that while doubling). Each must fail once one value's
// bound is read, having allocated a small multiple of that bound, while a
// list far larger than the bound decodes (TestListDecodedAsStream).
func TestHostileValueBounded(t *testing.T) {
	const maxValue = 256 << 10
	const size = 64 << 20
	for _, tt := range []struct {
		name       string
		head, tail string
		fill       byte
		single     bool // a single value (getService), not a list
	}{
		{name: "white space only", fill: ' '},
		{name: "white space before the list", fill: '\n', tail: `[]`},
		{name: "white space between elements", head: `[{"service_id":"a"},`, fill: '\t', tail: `{"service_id":"b"}]`},
		{name: "white space after the list", head: `[]`, fill: ' '},
		{name: "one endless string", head: `[{"service_id":"`, fill: 'a', tail: `"}]`},
		{name: "one endless number", head: `[{"service_id":"s","cpu_millis":1`, fill: '0', tail: `}]`},
		{name: "one endless unknown field", head: `[{"service_id":"s","x":"`, fill: 'x', tail: `"}]`},
		{name: "a single value", head: `{"service_id":"`, fill: 'a', tail: `"}`, single: true},
		{name: "white space after a single value", head: `{"service_id":"s"}`, fill: ' ', single: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := &hostileBody{head: []byte(tt.head), tail: []byte(tt.tail), fill: tt.fill, n: size}
			var err error
			alloc := allocated(func() {
				var svc Service
				var list []Service
				var out any = &list
				if tt.single {
					out = &svc
				}
				err = decodeStream(OpListServices, body, out, func(FieldError) {}, nil, func() ([]byte, bool) { return nil, false }, streamOptions{maxValue: maxValue})
			})
			if !errors.Is(err, ErrValueTooLarge) || !strings.Contains(err.Error(), "--api.max-value-size") {
				t.Fatalf("err = %v, want ErrValueTooLarge naming the flag", err)
			}
			if body.read > 2*maxValue {
				t.Errorf("read %d bytes of the body, want at most about one value's bound (%d)", body.read, maxValue)
			}
			if alloc > 8*maxValue {
				t.Errorf("allocated %d bytes, want at most %d (a small multiple of one value's bound, not of the %d-byte body)", alloc, 8*maxValue, size)
			}
		})
	}
}

// TestValueBoundIsPerValue: many values of just under the bound, with
// white space between them, decode; one just over it does not.
func TestValueBoundIsPerValue(t *testing.T) {
	const maxValue = 4 << 10
	elem := func(id string, pad int) string {
		return fmt.Sprintf(`{"service_id":%q,"x":"%s"}`, id, strings.Repeat("p", pad))
	}
	overhead := len(elem("s00", 0)) + 8 // the element, its comma and blanks
	var under []string
	for i := range 100 {
		under = append(under, elem(fmt.Sprintf("s%02d", i), maxValue-overhead))
	}
	var got []Service
	body := "[" + strings.Join(under, " ,\n ") + "]"
	if err := decodeStream(OpListServices, strings.NewReader(body), &got, nil, nil, func() ([]byte, bool) { return nil, false }, streamOptions{maxValue: maxValue}); err != nil || len(got) != 100 {
		t.Fatalf("%d bytes of values under the bound: got %d services, err %v", len(body), len(got), err)
	}
	body = "[" + elem("s", maxValue) + "]"
	if err := decodeStream(OpListServices, strings.NewReader(body), &got, nil, nil, func() ([]byte, bool) { return nil, false }, streamOptions{maxValue: maxValue}); !errors.Is(err, ErrValueTooLarge) {
		t.Fatalf("a value over the bound: err = %v, want ErrValueTooLarge", err)
	}
}

// TestValueTooLargeNotRetried: an answer over the bound fails its call at
// once, after one request: the same request would get the same answer.
func TestValueTooLargeNotRetried(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(strings.Repeat(" ", 1<<20)))
	})
	c, _, _ := newTestClient(t, srv, func(cfg *Config) { cfg.MaxValueBytes = 64 << 10 })
	_, err := c.ListServices(t.Context())
	if !errors.Is(err, ErrValueTooLarge) {
		t.Fatalf("err = %v, want ErrValueTooLarge", err)
	}
	if n := len(srv.requests()); n != 1 {
		t.Fatalf("%d requests, want 1 (no retry)", n)
	}
}

// TestStreamServices: each service goes to each as decoded, in order,
// after begin; a read cut short part way is retried (a read), and the
// retry starts with begin again and hands every service from the first.
func TestStreamServices(t *testing.T) {
	var calls atomic.Int32
	full := streamServices(3, 16)
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) > 1 {
			full(w, r)
			return
		}
		// Two services, then the connection drops inside the third.
		w.Header().Set("Content-Length", "1000")
		_, _ = w.Write([]byte(`[{"service_id":"s0","status":"READY"},{"service_id":"s1","status":"READY"},{"service_id":"s`))
	})
	c, _, obs := newTestClient(t, srv, func(cfg *Config) { cfg.MaxRetries = 2 })
	var seen []string
	err := c.StreamServices(t.Context(), func() { seen = append(seen, "begin") }, func(svc *Service) {
		seen = append(seen, svc.ServiceID)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(seen, ","); got != "begin,s0,s1,begin,s0,s1,s2" {
		t.Errorf("handed %s, want the cut answer's two services, then all three after a second begin", got)
	}
	obs.mu.Lock()
	defer obs.mu.Unlock()
	if n := len(srv.requests()); n != 2 || len(obs.retries) != 1 {
		t.Errorf("%d requests, retries %v: want 2 and one", n, obs.retries)
	}
}
