package apiclient

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// BenchmarkDecodeServices measures the decoding of a services list with
// its sanitizing (redaction of every text), what each poll cycle pays.
func BenchmarkDecodeServices(b *testing.B) {
	b.Run("N=100", func(b *testing.B) { benchmarkDecodeServices(b, 100) })
	b.Run("N=10000", func(b *testing.B) { benchmarkDecodeServices(b, 10000) })
}

func benchmarkDecodeServices(b *testing.B, n int) {
	var buf bytes.Buffer
	buf.WriteString("[")
	for i := range n {
		if i > 0 {
			buf.WriteString(",")
		}
		fmt.Fprintf(&buf, `{"service_id":"svc-%08d","project_id":"proj-abcdefgh","name":"service number %d of the fleet","region_code":"us-east-1","service_type":"TIMESCALEDB","status":"READY","created":"2024-01-01T00:00:00Z","resources":[{"id":"res-%d","spec":{"cpu_millis":1000,"memory_gbs":4,"volume_type":"gp3"}}],"metadata":{"environment":"PROD"},"endpoint":{"host":"svc-%d.abcdefgh.tsdb.cloud.example.com","port":5432}}`, i, i, i, i)
	}
	buf.WriteString("]")
	red := newRedactor("AKIAEXAMPLE42", "s3cr3t/Key+with=Symbols", "bearer-api-key-0123456789")
	b.SetBytes(int64(buf.Len()))
	b.ReportAllocs()
	for b.Loop() {
		var out []Service
		if err := decodeStream("x", bytes.NewReader(buf.Bytes()), &out, func(FieldError) {}, red, func() ([]byte, bool) { return nil, false }, streamOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeUsageSeries measures one usage series answer through the
// streamed decoding a call pays, sanitizing included: one node's series, two
// nodes' (as the simulator answers a read at the default interval) and three
// jobs' series of one primary, seven buckets each.
func BenchmarkDecodeUsageSeries(b *testing.B) {
	b.Run("N=1", func(b *testing.B) { benchmarkDecodeSeries(b, 1, false) })
	b.Run("N=2", func(b *testing.B) { benchmarkDecodeSeries(b, 2, false) })
	b.Run("jobs=3", func(b *testing.B) { benchmarkDecodeSeries(b, 3, true) })
}

func benchmarkDecodeSeries(b *testing.B, n int, jobs bool) {
	benchmarkDecode(b, seriesBody(n, jobs), func() any { return new([]Series) })
}

// seriesBody is a usage series answer of n label sets (nodes, or jobs of
// one primary), seven buckets each, the newest empty.
func seriesBody(n int, jobs bool) []byte {
	var buf bytes.Buffer
	buf.WriteString("[")
	for i := range n {
		if i > 0 {
			buf.WriteString(",")
		}
		switch {
		case jobs:
			fmt.Fprintf(&buf, `{"labels":{"job_id":"%d","ordinal":"0","role":"primary"},"data":[`, 1000+i)
		case i == 0:
			buf.WriteString(`{"labels":{"ordinal":"0","role":"primary"},"data":[`)
		default:
			fmt.Fprintf(&buf, `{"labels":{"ordinal":"%d","role":"replica"},"data":[`, i)
		}
		for m := range 7 {
			if m > 0 {
				buf.WriteString(",")
			}
			if m == 6 {
				fmt.Fprintf(&buf, `{"time":"2026-11-24T01:%02d:00Z","value":null}`, 25+m)
				continue
			}
			fmt.Fprintf(&buf, `{"time":"2026-11-24T01:%02d:00Z","value":%d}`, 25+m, 2390+m*i)
		}
		buf.WriteString("]}")
	}
	buf.WriteString("]")
	return buf.Bytes()
}

// BenchmarkDecodeLogPage measures a page of log entries as the simulator
// writes them (PostgreSQL's messages and severities): a page of a read
// every minute (15 entries) and a full one.
func BenchmarkDecodeLogPage(b *testing.B) {
	b.Run("N=15", func(b *testing.B) { benchmarkDecodeLogPage(b, 15) })
	b.Run("N=500", func(b *testing.B) { benchmarkDecodeLogPage(b, LogsPageSize) })
}

func benchmarkDecodeLogPage(b *testing.B, n int) {
	benchmarkDecode(b, logPageBody(n), func() any { return new(LogPage) })
}

// logPageBody is a page of n log entries as the simulator writes them.
func logPageBody(n int) []byte {
	messages := []string{`checkpoint complete`, `automatic vacuum of table \"public.events\"`, `connection authorized: user=app`,
		`replication slot caught up`, `there is no transaction in progress`, `canceling statement due to statement timeout`}
	severities := []string{SeverityLog, SeverityLog, SeverityLog, SeverityInfo, SeverityWarning, SeverityError}
	var buf bytes.Buffer
	buf.WriteString(`{"entries":[`)
	for i := range n {
		if i > 0 {
			buf.WriteString(",")
		}
		fmt.Fprintf(&buf, `{"timestamp":"2026-11-24T01:31:%02d.%06dZ","message":"%s","severity":"%s"}`, i%60, 1000*i, messages[i%len(messages)], severities[i%len(severities)])
	}
	buf.WriteString(`],"last_cursor":"1795482284000000000.2"}`)
	return buf.Bytes()
}

// BenchmarkDecodeLogPageQuoted measures a page whose every other message
// quotes a name, as the simulator's (and PostgreSQL's) do.
func BenchmarkDecodeLogPageQuoted(b *testing.B) {
	var buf bytes.Buffer
	buf.WriteString(`{"entries":[`)
	for i := range LogsPageSize {
		if i > 0 {
			buf.WriteString(",")
		}
		msg := fmt.Sprintf(`checkpoint complete: wrote %d buffers`, i)
		if i%2 == 0 {
			msg = fmt.Sprintf(`automatic vacuum of table \"public.events_%d\"`, i)
		}
		fmt.Fprintf(&buf, `{"timestamp":"2026-11-24T01:31:%02dZ","message":"%s","severity":"LOG"}`, i%60, msg)
	}
	buf.WriteString(`],"last_cursor":"1795482284000000000.2"}`)
	benchmarkDecode(b, buf.Bytes(), func() any { return new(LogPage) })
}

func benchmarkDecode(b *testing.B, body []byte, out func() any) {
	red := newRedactor("AKIAEXAMPLE42", "s3cr3t/Key+with=Symbols", "bearer-api-key-0123456789")
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if err := decodeStream("x", bytes.NewReader(body), out(), func(FieldError) {}, red, func() ([]byte, bool) { return nil, false }, streamOptions{maxValue: 1 << 20}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetServiceMetricsSeries measures a whole usage series call over
// loopback HTTP, client and server in one process: what a usage read pays
// per series beside the decoding.
func BenchmarkGetServiceMetricsSeries(b *testing.B) {
	body := `[{"labels":{"ordinal":"0","role":"primary"},"data":[{"time":"2026-11-24T01:25:00Z","value":2390},{"time":"2026-11-24T01:26:00Z","value":2391},{"time":"2026-11-24T01:27:00Z","value":2392},{"time":"2026-11-24T01:28:00Z","value":2393},{"time":"2026-11-24T01:29:00Z","value":2394},{"time":"2026-11-24T01:30:00Z","value":2395},{"time":"2026-11-24T01:31:00Z","value":null}]}]`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, body) }))
	b.Cleanup(srv.Close)
	c, err := New(Config{BaseURL: srv.URL + "/v1", ProjectID: testProject, AccessKey: testAccessKey, SecretKey: testSecretKey,
		APIKey: testAPIKey, RateLimit: float64(rate.Inf), Timeout: 10 * time.Second})
	if err != nil {
		b.Fatal(err)
	}
	from := time.Date(2026, 11, 24, 1, 25, 0, 0, time.UTC)
	req := SeriesRequest{Name: "x_database_qps", From: Time{from}, To: Time{from.Add(7 * time.Minute)}, BucketSeconds: MinBucketSeconds}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.GetServiceMetricsSeries(b.Context(), "svc-1", req); err != nil {
			b.Fatal(err)
		}
	}
}
