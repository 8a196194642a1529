package e2e

import (
	"bufio"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// The tests of this file are the whole-binary checks of the hardening
// (docs/security.md): each weakness a hostile-input audit found is replayed
// against the real binary, with a hostile upstream or a hostile client.

// hostileUpstream is a fake API for one project "p": routes maps a path
// below /v1 to its handler; anything else is a 404.
func hostileUpstream(t *testing.T, routes map[string]http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h, ok := routes[strings.TrimPrefix(r.URL.Path, "/v1")]; ok {
			h(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"code":"NOT_FOUND","message":"no such resource"}`))
	}))
	t.Cleanup(srv.Close)
	return srv
}

// upstreamEnv points the exporter at srv with the test credentials; the
// API key is only given when withAPIKey.
func upstreamEnv(srv *httptest.Server, withAPIKey bool) []string {
	env := []string{
		"CLOUDDB_API_URL=" + srv.URL + "/v1", "CLOUDDB_API_PROJECT_ID=p",
		"CLOUDDB_ACCESS_KEY=" + testbin.SimAccessKey, "CLOUDDB_SECRET_KEY=" + testbin.SimSecretKey,
	}
	if withAPIKey {
		env = append(env, "CLOUDDB_API_KEY="+testbin.SimAPIKey)
	}
	return env
}

// revealed reports whether text gives secret away: as it is, or decoded
// from any run of base64 characters (either alphabet, any offset), so that
// a cut or shifted encoding counts too.
func revealed(text, secret string) bool {
	if strings.Contains(text, secret) {
		return true
	}
	isB64 := func(c byte) bool {
		return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("+/-_", c) >= 0
	}
	for i := 0; i < len(text); {
		j := i
		for j < len(text) && isB64(text[j]) {
			j++
		}
		for off := 0; off < 4 && i+off < j; off++ {
			part := text[i+off : j]
			part = part[:len(part)/4*4]
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
				if dec, err := enc.DecodeString(part); err == nil && strings.Contains(string(dec), secret) {
					return true
				}
			}
		}
		i = j + 1
	}
	return false
}

// TestEchoedCredentialsAbsentFromLogs: an API that echoes the
// Authorization header, cut by its 256-byte error limit before the
// padding, and an answer that does not decode quoting the bearer key, must
// leave no credential in the exporter's log (docs/security.md,
// "Credentials").
func TestEchoedCredentialsAbsentFromLogs(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	basic := base64.StdEncoding.EncodeToString([]byte(testbin.SimAccessKey + ":" + testbin.SimSecretKey))
	header := "Authorization: Basic " + basic
	// The old code cut the message at 256 bytes, then removed the whole
	// encoded pair: cut two characters short, it was no longer found.
	echo := strings.Repeat("x", 256-len(header)+2) + header + " was refused"
	upstream := hostileUpstream(t, map[string]http.HandlerFunc{
		"/projects/p/services": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_, _ = fmt.Fprintf(w, `{"code":"FORBIDDEN","message":%q}`, echo)
		},
		"/projects/p/vpcs": func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<p>Basic " + basic + " / Bearer " + testbin.SimAPIKey + "</p>"))
		},
		"/auth/info": func(w http.ResponseWriter, _ *http.Request) {
			_, _ = w.Write([]byte("<html>token Bearer " + testbin.SimAPIKey + " is not valid</html>"))
		},
	})
	p := testbin.Start(t, testbin.Build(t, "."), upstreamEnv(upstream, true),
		"--web.listen-address="+testbin.FreeAddr(t), "--log.level=debug", "--log.format=logfmt")
	testbin.WaitFor(t, 60*time.Second, "the three failures to be logged", func() bool {
		out := p.Output()
		return strings.Contains(out, "FORBIDDEN") && strings.Count(out, "decoding response") >= 2
	})
	out := p.Output()
	for _, secret := range []string{testbin.SimAccessKey, testbin.SimSecretKey, testbin.SimAPIKey, basic[:12]} {
		if revealed(out, secret) {
			t.Errorf("the log gives %q away", secret)
		}
	}
	if !strings.Contains(out, "redacted") {
		t.Errorf("the log shows no <redacted> mark: did the echoes reach it?")
	}
}

// vmStatus reads a field of /proc/<pid>/status in bytes: VmRSS (resident
// now) or VmHWM (the peak resident size, which no sampling can miss).
func vmStatus(t *testing.T, pid int, field string) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only
	s := bufio.NewScanner(f)
	for s.Scan() {
		name, rest, ok := strings.Cut(s.Text(), ":")
		if !ok || name != field {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return kb << 10
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// hugeList answers a JSON list of n services, each padded with an unknown
// field of pad bytes (n*pad bytes in all), and counts the answers it
// finished writing.
func hugeList(n, pad int, done *atomic.Int32) http.HandlerFunc {
	padding := strings.Repeat("p", pad)
	return func(w http.ResponseWriter, _ *http.Request) {
		defer done.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if _, err := w.Write([]byte("[")); err != nil {
			return
		}
		for i := range n {
			sep := ","
			if i == 0 {
				sep = ""
			}
			if _, err := fmt.Fprintf(w, `%s{"service_id":"s%d","id":"v%d","status":"READY","padding":"%s"}`, sep, i, i, padding); err != nil {
				return // the exporter stopped reading
			}
		}
		_, _ = w.Write([]byte("]"))
	}
}

// TestHugeAnswersMemoryBounded: two 200 MB answers at once (services and
// VPCs) must cost memory for what is kept, not for the bytes received
// (answers read whole took 639 MB RSS for three such answers). Under a
// 32 MiB limit they fail as too large; under the default limit, above
// their size, they are decoded, 3,200 small records kept.
func TestHugeAnswersMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	const n, pad, bound = 3200, 64 << 10, 128 << 20 // 200 MiB answers; main peaked above 300 MB
	for _, tt := range []struct {
		name string
		args []string
		kept bool
	}{
		{"limit below the answer", []string{"--api.max-response-size=32MiB"}, false},
		{"default limit", nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var done atomic.Int32
			upstream := hostileUpstream(t, map[string]http.HandlerFunc{
				"/projects/p/services": hugeList(n, pad, &done),
				"/projects/p/vpcs":     hugeList(n, pad, &done),
			})
			addr := testbin.FreeAddr(t)
			// Reading 200 MB took over the default 30 s attempt timeout
			// on a loaded machine under -race, and every cycle failed: the
			// attempt and the cycle (one interval) get bounds past the
			// test's waits, so that only memory is measured.
			p := testbin.Start(t, testbin.Build(t, "."), upstreamEnv(upstream, false),
				append([]string{"--web.listen-address=" + addr, "--api.max-retries=0", "--api.timeout=5m", "--collect.interval=5m"}, tt.args...)...)
			testbin.WaitFor(t, 120*time.Second, "both huge answers to be consumed", func() bool {
				if p.Exited() {
					t.Fatalf("the exporter exited:\n%s", p.Output())
				}
				return done.Load() >= 2
			})
			if tt.kept {
				testbin.WaitFor(t, 60*time.Second, "the last service on /metrics", func() bool {
					_, body := testbin.Get("http://" + addr + "/metrics")
					return strings.Contains(body, fmt.Sprintf(`service_id="s%d"`, n-1))
				})
			} else {
				testbin.WaitFor(t, 60*time.Second, "the too-large error in the log", func() bool {
					return strings.Contains(p.Output(), "response body too large")
				})
			}
			peak := vmStatus(t, p.PID(), "VmHWM")
			t.Logf("peak RSS %d MiB, RSS now %d MiB", peak>>20, vmStatus(t, p.PID(), "VmRSS")>>20)
			if peak > bound {
				t.Errorf("peak RSS %d MiB after two 200 MiB answers, want at most %d MiB", peak>>20, bound>>20)
			}
		})
	}
}

// TestHostileAnswersMemoryBounded: a success answer the API should never
// send (200 MB of white space behind a Content-Length, or one string that
// never ends, chunked) fails its call once one value's bound
// (--api.max-value-size) is read: one request per cycle, no retry, and the
// peak RSS grows by a few MiB, not by what was sent (the decoder used to
// buffer the white space whole: 220 MB for 40 MB read).
func TestHostileAnswersMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	const growthBound = 64 << 20
	bin := testbin.Build(t, ".")
	for _, tt := range []struct {
		name   string
		answer http.HandlerFunc
	}{
		{"white space with a length", func(w http.ResponseWriter, _ *http.Request) {
			const size = 200 << 20
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(size))
			blank := []byte(strings.Repeat(" ", 64<<10))
			for range size / len(blank) {
				if _, err := w.Write(blank); err != nil {
					return
				}
			}
		}},
		{"endless chunked string", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`[{"service_id":"`))
			chunk := []byte(strings.Repeat("a", 64<<10))
			for r.Context().Err() == nil {
				if _, err := w.Write(chunk); err != nil {
					return
				}
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			upstream := hostileUpstream(t, map[string]http.HandlerFunc{
				"/projects/p/services": func(w http.ResponseWriter, r *http.Request) {
					calls.Add(1)
					tt.answer(w, r)
				},
				"/projects/p/vpcs": func(w http.ResponseWriter, _ *http.Request) {
					w.Header().Set("Content-Type", "application/json")
					_, _ = w.Write([]byte(`[]`))
				},
			})
			addr := testbin.FreeAddr(t)
			p := testbin.Start(t, bin, upstreamEnv(upstream, false),
				"--web.listen-address="+addr, "--collect.interval=1s")
			testbin.WaitFor(t, 30*time.Second, "the exporter to be ready", func() bool {
				if p.Exited() {
					t.Fatalf("the exporter exited:\n%s", p.Output())
				}
				code, _ := testbin.Get("http://" + addr + "/-/ready")
				return code == http.StatusOK
			})
			base := vmStatus(t, p.PID(), "VmHWM")
			start := calls.Load()
			testbin.WaitFor(t, 30*time.Second, "three more cycles", func() bool { return calls.Load() >= start+3 })
			if !strings.Contains(p.Output(), "response value too large") {
				t.Errorf("the log does not name the too-large value:\n%s", p.Output())
			}
			_, body := testbin.Get("http://" + addr + "/metrics")
			fams, err := testbin.Families(body)
			if err != nil {
				t.Fatal(err)
			}
			// One request per cycle: none of them retried.
			if retries, ok := testbin.Value(fams, "clouddb_exporter_api_retries_total", "operation", "listServices"); !ok || retries != 0 {
				t.Errorf("listServices retries = %v (exported: %v), want 0: a too large answer is not asked again", retries, ok)
			}
			peak := vmStatus(t, p.PID(), "VmHWM")
			t.Logf("peak RSS %d MiB at ready, %d MiB after %d answers", base>>20, peak>>20, calls.Load())
			if peak-base > growthBound {
				t.Errorf("peak RSS grew by %d MiB over the hostile answers, want at most %d MiB", (peak-base)>>20, growthBound>>20)
			}
		})
	}
}
