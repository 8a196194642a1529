package apiclient_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/apimetrics"
)

// BenchmarkCall measures one whole call as the data plane makes it, over
// loopback HTTP with client and server in the benchmark's process: the
// token bucket, the API self-metrics of apimetrics, the request, its answer
// (a usage series of two nodes, seven buckets each; a log page of 15
// entries) and the decoding. cpu_ns/op is the process's CPU time, client
// and server, per call.
func BenchmarkCall(b *testing.B) {
	from := time.Date(2026, 11, 24, 1, 25, 0, 0, time.UTC)
	b.Run("op=series", func(b *testing.B) {
		c := benchClient(b, seriesAnswer(2, 7))
		req := apiclient.SeriesRequest{Name: "clouddb_database_qps", From: apiclient.Time{Time: from},
			To: apiclient.Time{Time: from.Add(7 * time.Minute)}, BucketSeconds: apiclient.MinBucketSeconds}
		benchCalls(b, func() error {
			s, err := c.GetServiceMetricsSeries(b.Context(), "svc-00000001", req)
			if err == nil && len(s) != 2 {
				err = fmt.Errorf("%d series, want 2", len(s))
			}
			return err
		})
	})
	b.Run("op=logs", func(b *testing.B) {
		c := benchClient(b, logPageAnswer(15))
		q := apiclient.LogsQuery{Since: from, Until: from.Add(time.Minute)}
		benchCalls(b, func() error {
			p, err := c.GetServiceLogs(b.Context(), "svc-00000001", q)
			if err == nil && len(p.Entries) != 15 {
				err = fmt.Errorf("%d entries, want 15", len(p.Entries))
			}
			return err
		})
	})
}

func benchClient(b *testing.B, answer string) *apiclient.Client {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(answer))
	}))
	b.Cleanup(srv.Close)
	// A rate limit the calls never wait for, taken as any finite one is.
	c, err := apiclient.New(apiclient.Config{BaseURL: srv.URL + "/v1", ProjectID: "proj-bench", AccessKey: "ak-bench-0123456789",
		SecretKey: "sk-bench-0123456789", RateLimit: 1e9, Observer: apimetrics.New(nil).Observer("proj-bench")})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

func benchCalls(b *testing.B, call func() error) {
	b.ReportAllocs()
	cpu0 := processCPU()
	for b.Loop() {
		if err := call(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu_ns/op")
}

func seriesAnswer(nodes, buckets int) string {
	var sb strings.Builder
	sb.WriteString("[")
	for i := range nodes {
		role := "replica"
		if i == 0 {
			role = "primary"
		}
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"labels":{"ordinal":"%d","role":"%s"},"data":[`, i, role)
		for m := range buckets {
			value := fmt.Sprint(2390 + m*i)
			if m == buckets-1 {
				value = "null"
			}
			if m > 0 {
				sb.WriteString(",")
			}
			fmt.Fprintf(&sb, `{"time":"2026-11-24T01:%02d:00Z","value":%s}`, 25+m, value)
		}
		sb.WriteString("]}")
	}
	sb.WriteString("]")
	return sb.String()
}

func logPageAnswer(n int) string {
	messages := []string{`checkpoint complete`, `automatic vacuum of table \"public.events\"`, `connection authorized: user=app`,
		`replication slot caught up`, `there is no transaction in progress`, `canceling statement due to statement timeout`}
	severities := []string{"LOG", "LOG", "LOG", "INFO", "WARNING", "ERROR"}
	var sb strings.Builder
	sb.WriteString(`{"entries":[`)
	for i := range n {
		if i > 0 {
			sb.WriteString(",")
		}
		fmt.Fprintf(&sb, `{"timestamp":"2026-11-24T01:31:%02d.%06dZ","message":"%s","severity":"%s"}`, i%60, 1000*i, messages[i%len(messages)], severities[i%len(severities)])
	}
	sb.WriteString(`],"last_cursor":"1795482284000000000.2"}`)
	return sb.String()
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
