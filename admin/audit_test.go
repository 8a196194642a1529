package admin

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/cloudsim"
	"github.com/clouddb/clouddb_exporter/internal/httplimit"
	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// auditLines decodes the audit buffer's records.
func auditLines(t *testing.T, text string) []map[string]any {
	t.Helper()
	return testbin.JSONLines(t, text)
}

// requestRecords counts the audit buffer's records of requests: all but
// the "settled" records that tracking writes in the background.
func requestRecords(text string) int {
	return strings.Count(text, "\n") - strings.Count(text, `"event":"settled"`)
}

// requestLines decodes the records of requests (requestRecords).
func requestLines(t *testing.T, text string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, rec := range auditLines(t, text) {
		if rec["event"] != eventSettled {
			out = append(out, rec)
		}
	}
	return out
}

// TestAuditAcceptedThenOutcome: a write has an "accepted" record before
// the upstream call and its "outcome" after; a refused request only its
// outcome; every field is capped, so that a huge method name costs a
// short line (docs/admin.md, "Audit record").
func TestAuditAcceptedThenOutcome(t *testing.T) {
	e := newEnv(t)
	d := e.demo()
	svc := "/api/v1/projects/" + testProject + "/services/" + d.service["embeddings"]
	if a := e.do("POST", svc+"/resize", `{"cpu_millis":1000,"memory_gbs":4}`); a.status != http.StatusAccepted {
		t.Fatalf("resize: %d %s", a.status, a.body)
	}
	e.do("POST", svc+"/resize", `{"cpu_millis":0,"memory_gbs":4}`)
	testbin.WaitFor(t, 10*time.Second, "three records", func() bool { return requestRecords(e.audit.String()) == 3 })
	e.srv.background.Wait()
	recs := requestLines(t, e.audit.String())
	if recs[0]["event"] != eventAccepted || recs[1]["event"] != eventOutcome || recs[0]["request_id"] != recs[1]["request_id"] ||
		recs[1]["status"] != float64(http.StatusAccepted) || recs[2]["event"] != eventOutcome || recs[2]["status"] != float64(http.StatusBadRequest) {
		t.Errorf("records: %v", recs)
	}

	// A 1 MB method name (unauthenticated) costs a short line.
	before := len(e.audit.String())
	req, _ := http.NewRequest(strings.Repeat("M", 1<<20), e.url+"/api/v1/operations", nil)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	testbin.WaitFor(t, 10*time.Second, "the record", func() bool { return requestRecords(e.audit.String()) == 4 })
	if n := len(e.audit.String()) - before; n > 1024 {
		t.Errorf("the audit record of a 1 MB method is %d bytes", n)
	}
	if strings.Count(e.logs.String(), "M") > 4096 {
		t.Errorf("the log holds the 1 MB method")
	}
}

// TestRefusedByLimitsAudited: a request refused because too many are in
// flight (503) or by the web configuration's rate limit (429) gets a JSON
// {code, message} answer, an audit record and a count, like every other
// request, and reaches neither the handler nor the API.
func TestRefusedByLimitsAudited(t *testing.T) {
	e := newEnv(t, withOptions(func(o *Options) { o.MaxRequests, o.RateLimit = 1, &RateLimit{Interval: time.Hour, Burst: 3} }))
	d := e.demo()
	resize := "/api/v1/projects/" + testProject + "/services/" + d.service["embeddings"] + "/resize"

	// Hold the only place with a write whose upstream call is slow.
	e.sim.AddFault(cloudsim.Fault{Operation: apiclient.OpResizeService, Latency: 2 * time.Second, Count: 1})
	done := make(chan answer)
	go func() { done <- e.do("POST", resize, `{"cpu_millis":1000,"memory_gbs":4}`) }()
	testbin.WaitFor(t, 10*time.Second, "the write's accepted record", func() bool { return strings.Contains(e.audit.String(), eventAccepted) })
	busy := e.do("POST", resize, `{"cpu_millis":1000,"memory_gbs":4}`)
	if busy.status != http.StatusServiceUnavailable || busy.json(t)["code"] != httplimit.TooManyCode || busy.header.Get("Retry-After") == "" {
		t.Errorf("a write beyond --web.max-requests: %d %v %s, want 503 with a code and Retry-After", busy.status, busy.header, busy.body)
	}
	if a := <-done; a.status != http.StatusAccepted {
		t.Fatalf("held write: %d %s", a.status, a.body)
	}
	e.srv.background.Wait()

	// The third request in the hour is the limiter's last.
	e.do("GET", "/api/v1/operations", "")
	limited := e.do("GET", "/api/v1/operations", "")
	if limited.status != http.StatusTooManyRequests || limited.json(t)["code"] != codeRateLimited {
		t.Errorf("beyond the rate limit: %d %s, want 429 with a code", limited.status, limited.body)
	}
	if n := e.sent()[apiclient.OpResizeService]; n != 1 {
		t.Errorf("resizeService sent %d times, want 1 (the refused one must not be)", n)
	}

	testbin.WaitFor(t, 10*time.Second, "five records", func() bool { return requestRecords(e.audit.String()) == 5 })
	statuses := map[float64]int{}
	for _, rec := range auditLines(t, e.audit.String()) {
		if rec["event"] == eventOutcome {
			statuses[rec["status"].(float64)]++
		}
	}
	if statuses[http.StatusServiceUnavailable] != 1 || statuses[http.StatusTooManyRequests] != 1 {
		t.Errorf("audited outcomes by status %v, want one 503 and one 429", statuses)
	}
	if v := testutil.ToFloat64(e.srv.metrics.requests.WithLabelValues(apiclient.OpResizeService, "503")); v != 1 {
		t.Errorf("clouddb_exporter_admin_requests_total{resizeService,503} = %v, want 1", v)
	}
}

// failingLog fails every write after writing half of it, as a full disk
// does, and can be truncated like a file.
type failingLog struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	fail bool
}

func (f *failingLog) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail {
		f.buf.Write(p[:len(p)/2])
		return len(p) / 2, errors.New("no space left on device")
	}
	return f.buf.Write(p)
}

func (f *failingLog) Seek(offset int64, whence int) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if whence != io.SeekEnd || offset != 0 {
		return 0, errors.New("unsupported")
	}
	return int64(f.buf.Len()), nil
}

func (f *failingLog) Truncate(size int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.buf.Truncate(int(size))
	return nil
}

// TestAuditFailsClosed: when the audit log cannot be written, a write is
// refused with 503 and nothing is sent, and no torn line is left; with
// AuditFailOpen it goes on.
func TestAuditFailsClosed(t *testing.T) {
	for _, failOpen := range []bool{false, true} {
		log := &failingLog{}
		e := newEnv(t, withOptions(func(o *Options) { o.AuditFailOpen = failOpen }))
		e.srv.audit.w = log
		d := e.demo()
		svc := "/api/v1/projects/" + testProject + "/services/" + d.service["embeddings"]
		log.mu.Lock()
		log.fail = true
		log.mu.Unlock()
		a := e.do("POST", svc+"/resize", `{"cpu_millis":1000,"memory_gbs":4}`)
		sent := e.sent()
		switch {
		case !failOpen && (a.status != http.StatusServiceUnavailable || a.json(t)["code"] != codeAuditUnavailable || len(sent) != 0):
			t.Errorf("fail closed: %d %s, sent %v; want 503 %s and nothing sent", a.status, a.body, sent, codeAuditUnavailable)
		case failOpen && a.status != http.StatusAccepted:
			t.Errorf("fail open: %d %s, want 202", a.status, a.body)
		}
		log.mu.Lock()
		torn := log.buf.String()
		log.mu.Unlock()
		if torn != "" {
			t.Errorf("a partial record is left in the audit log: %q", torn)
		}
	}
}
