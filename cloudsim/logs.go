package cloudsim

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"hash/fnv"
	"math/bits"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

const (
	logsPageSize = 500
	logRetention = 6 * time.Hour
	// Two entries a second at most.
	maxLogRate = 120
)

type logEntry struct {
	ts       time.Time
	severity string
	message  string
}

type logState struct {
	rate  *int
	added []logEntry
}

func (svc *service) logRate() int {
	if svc.logs.rate != nil {
		return *svc.logs.rate
	}
	return 6 + int(svc.seed()>>40)%25
}

var logMessages = map[string][]string{
	apiclient.SeverityLog:     {"checkpoint complete", "automatic vacuum of table \"public.events\"", "connection authorized: user=app"},
	apiclient.SeverityInfo:    {"replication slot caught up"},
	apiclient.SeverityNotice:  {"table \"tmp_import\" does not exist, skipping"},
	apiclient.SeverityWarning: {"there is no transaction in progress", "checkpoints are occurring too frequently"},
	apiclient.SeverityError:   {"duplicate key value violates unique constraint \"users_pkey\"", "canceling statement due to statement timeout", "relation \"missing\" does not exist"},
	apiclient.SeverityFatal:   {"terminating connection due to administrator command", "password authentication failed for user \"app\""},
	apiclient.SeverityPanic:   {"could not write to file \"pg_wal/xlogtemp\": No space left on device"},
	"DEBUG1":                  {"autovacuum: processing database \"app\""},
}

// generatedSeverity: FATAL or PANIC about once a month per service, so the
// demo's FATAL alert fires only when injected. It depends on the hash alone.
func generatedSeverity(h uint64) string {
	rare := bits.RotateLeft64(h*0x9e3779b97f4a7c15, 23)%10000 == 0
	switch n := h % 10000; {
	case n < 6000:
		return apiclient.SeverityLog
	case n < 6500:
		return apiclient.SeverityInfo
	case n < 7000:
		return apiclient.SeverityNotice
	case n < 8500:
		return apiclient.SeverityWarning
	case n < 9800:
		return apiclient.SeverityError
	case n < 9850 && rare:
		return apiclient.SeverityFatal
	case n < 9855 && rare:
		return apiclient.SeverityPanic
	case n < 9855:
		return apiclient.SeverityError
	default:
		return "DEBUG1"
	}
}

func (svc *service) generated(out []logEntry, node int, sec int64, rate int) []logEntry {
	h := fnv.New64a()
	var buf [16]byte
	binary.LittleEndian.PutUint64(buf[:8], uint64(node))
	binary.LittleEndian.PutUint64(buf[8:], uint64(sec))
	_, _ = h.Write([]byte(svc.id))
	_, _ = h.Write(buf[:])
	sum := h.Sum64()
	if int(sum%60) >= rate {
		return out
	}
	n := 1
	if (sum>>20)%4 == 0 {
		n = 2
	}
	ts := time.Unix(sec, 0).UTC()
	for i := range n {
		sev := generatedSeverity(sum>>(24+8*uint(i)) ^ uint64(i)*0x9e3779b97f4a7c15)
		msgs := logMessages[sev]
		out = append(out, logEntry{ts: ts, severity: sev, message: msgs[(sum>>(8*uint(i)))%uint64(len(msgs))]})
	}
	return out
}

type logsQuery struct {
	node         int
	since, until time.Time
	severities   []string
	search       []string
	// Continue below cursorTS, skipping cursorSkip entries at exactly cursorTS.
	cursorTS   time.Time
	cursorSkip int
	hasCursor  bool
}

func parseLogsQuery(q url.Values, nodes int) (logsQuery, error) {
	var lq logsQuery
	if v := q.Get("node"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return lq, invalidf("node must be an integer >= 0, got %q", truncate(v, 20))
		}
		if n >= nodes {
			return lq, invalidf("node %d does not exist: the service has %d", n, nodes)
		}
		lq.node = n
	}
	for name, dst := range map[string]*time.Time{"since": &lq.since, "until": &lq.until} {
		if v := q.Get(name); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return lq, invalidf("%s must be an RFC 3339 date-time, got %q", name, truncate(v, 40))
			}
			*dst = t.UTC()
		}
	}
	lq.severities, lq.search = q["severities"], q["search"]
	if v := q.Get("cursor"); v != "" {
		ts, skip, ok := strings.Cut(v, ".")
		nanos, err1 := strconv.ParseInt(ts, 10, 64)
		n, err2 := strconv.Atoi(skip)
		if !ok || err1 != nil || err2 != nil || n < 0 {
			return lq, invalidf("cursor %q is not one this API issued", truncate(v, 40))
		}
		lq.cursorTS, lq.cursorSkip, lq.hasCursor = time.Unix(0, nanos).UTC(), n, true
	}
	return lq, nil
}

type logsAnswer struct {
	Entries    []apiclient.LogEntry `json:"entries"`
	LastCursor string               `json:"last_cursor"`
}

func (s *Sim) serviceLogs(c *call) (int, any, error) {
	svc, err := s.serviceOf(c)
	if err != nil {
		return 0, nil, err
	}
	q, err := parseLogsQuery(c.r.URL.Query(), len(svc.resourceIDs))
	if err != nil {
		return 0, nil, err
	}
	entries := svc.logWindow(q, c.now)
	// Equal timestamps keep a fixed order, which the cursor counts.
	slices.Reverse(entries)
	start := 0
	if q.hasCursor {
		for start < len(entries) && entries[start].ts.After(q.cursorTS) {
			start++
		}
		for skipped := 0; start < len(entries) && entries[start].ts.Equal(q.cursorTS) && skipped < q.cursorSkip; skipped++ {
			start++
		}
	}
	page := entries[start:min(len(entries), start+logsPageSize)]
	out := logsAnswer{Entries: make([]apiclient.LogEntry, len(page))}
	for i, e := range page {
		out.Entries[i] = apiclient.LogEntry{Timestamp: apiclient.Time{Time: e.ts}, Message: e.message, Severity: e.severity}
	}
	if start+len(page) < len(entries) {
		last := page[len(page)-1].ts
		skip := 0
		for i := start + len(page) - 1; i >= 0 && entries[i].ts.Equal(last); i-- {
			skip++
		}
		out.LastCursor = strconv.FormatInt(last.UnixNano(), 10) + "." + strconv.Itoa(skip)
	}
	return http.StatusOK, out, nil
}

// logWindow is oldest first; since and until are inclusive.
func (svc *service) logWindow(q logsQuery, now time.Time) []logEntry {
	lo := now.Add(-logRetention)
	lo = latest(lo, svc.created, q.since)
	hi := now
	if !q.until.IsZero() && q.until.Before(hi) {
		hi = q.until
	}
	if q.hasCursor && q.cursorTS.Before(hi) {
		hi = q.cursorTS
	}
	var out []logEntry
	if !hi.Before(lo) {
		rate := svc.logRate()
		firstSec := lo.Unix()
		if time.Unix(firstSec, 0).Before(lo) {
			firstSec++
		}
		if rate > 0 {
			for sec := firstSec; sec <= hi.Unix(); sec++ {
				out = svc.generated(out, q.node, sec, rate)
			}
		}
		if q.node == 0 {
			for _, e := range svc.logs.added {
				if !e.ts.Before(lo) && !e.ts.After(hi) {
					out = append(out, e)
				}
			}
		}
	}
	out = slices.DeleteFunc(out, func(e logEntry) bool { return !q.matches(e) })
	slices.SortStableFunc(out, func(a, b logEntry) int { return a.ts.Compare(b.ts) })
	return out
}

func (q logsQuery) matches(e logEntry) bool {
	if len(q.severities) > 0 && !slices.ContainsFunc(q.severities, func(s string) bool { return strings.EqualFold(s, e.severity) }) {
		return false
	}
	if len(q.search) > 0 && !slices.ContainsFunc(q.search, func(s string) bool { return strings.Contains(e.message, s) }) {
		return false
	}
	return true
}

func latest(ts ...time.Time) time.Time {
	return slices.MaxFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
}

// LogEntry is an entry added to a service's logs through AddLogEntries.
type LogEntry struct {
	Timestamp time.Time `json:"timestamp"`
	Severity  string    `json:"severity"`
	Message   string    `json:"message"`
}

const maxAddedLogs = 100_000

// AddLogEntries adds entries to a service's primary, as if written by the
// database (a past timestamp is a late arrival).
func (s *Sim) AddLogEntries(projectID, serviceID string, entries []LogEntry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	svc, err := s.controlService(projectID, serviceID)
	if err != nil {
		return err
	}
	if len(svc.logs.added)+len(entries) > maxAddedLogs {
		return invalidf("a service keeps at most %d added entries", maxAddedLogs)
	}
	now := s.clock().UTC()
	for _, e := range entries {
		ts := e.Timestamp.UTC()
		if ts.IsZero() {
			ts = now
		}
		svc.logs.added = append(svc.logs.added, logEntry{ts: ts, severity: cmp.Or(e.Severity, apiclient.SeverityLog), message: e.Message})
	}
	return nil
}

// SetLogRate sets a service's generated entries a minute (0 to 120).
func (s *Sim) SetLogRate(projectID, serviceID string, perMinute int) error {
	if perMinute < 0 || perMinute > maxLogRate {
		return invalidf("rate must be between 0 and %d entries a minute", maxLogRate)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	svc, err := s.controlService(projectID, serviceID)
	if err != nil {
		return err
	}
	svc.logs.rate = &perMinute
	return nil
}

type logsControl struct {
	Entries       []LogEntry `json:"entries"`
	RatePerMinute *int       `json:"rate_per_minute"`
}

func (s *Sim) postLogs(r *http.Request) (int, any, error) {
	raw, err := readBody(r)
	if err != nil {
		return 0, nil, err
	}
	var lc logsControl
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&lc); err != nil {
		return 0, nil, invalidf("body must be {entries, rate_per_minute}: %v", err)
	}
	p, id := r.PathValue("project_id"), r.PathValue("service_id")
	if lc.RatePerMinute != nil {
		if err := s.SetLogRate(p, id, *lc.RatePerMinute); err != nil {
			return controlResult(err)
		}
	}
	return controlResult(s.AddLogEntries(p, id, lc.Entries))
}
