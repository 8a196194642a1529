package apiclient_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
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
		c := benchClient(b, apiclient.SeriesBodyForTest(2, false))
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
		c := benchClient(b, apiclient.LogPageBodyForTest(15))
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

func benchClient(b *testing.B, answer []byte) *apiclient.Client {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
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

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
