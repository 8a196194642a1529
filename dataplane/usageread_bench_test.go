package dataplane

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/internal/fakeclock"
)

// BenchmarkUsageRead is a whole usage read of N services through the API
// client over loopback HTTP (server in the benchmark's process): what a
// series call costs the data plane, the HTTP exchange, the goroutine that
// makes it and the applying of its answer included (cpu_ns/call: process
// CPU time, client and server, per API call).
func BenchmarkUsageRead(b *testing.B) {
	var names []string
	for _, suf := range apiclient.UsageSeriesSuffixes {
		names = append(names, `"clouddb`+suf+`"`)
	}
	avail := "[" + strings.Join(names, ",") + "]"
	series := `[{"labels":{"ordinal":"0","role":"primary"},"data":[{"time":"2026-03-01T11:55:00Z","value":2390},{"time":"2026-03-01T11:56:00Z","value":2391},{"time":"2026-03-01T11:57:00Z","value":null}]},` +
		`{"labels":{"ordinal":"1","role":"replica"},"data":[{"time":"2026-03-01T11:55:00Z","value":2390},{"time":"2026-03-01T11:56:00Z","value":2391},{"time":"2026-03-01T11:57:00Z","value":null}]}]`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet {
			_, _ = w.Write([]byte(avail))
			return
		}
		_, _ = w.Write([]byte(series))
	}))
	b.Cleanup(srv.Close)
	client, err := apiclient.New(apiclient.Config{BaseURL: srv.URL + "/v1", ProjectID: "p", AccessKey: "access", SecretKey: "secret-key",
		RateLimit: float64(rate.Inf), Concurrency: 8})
	if err != nil {
		b.Fatal(err)
	}
	const n = 200
	b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
		b.ReportAllocs()
		calls := 0
		cpu0 := processCPU()
		for b.Loop() {
			host := newFakeHost(n)
			clock := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 30, 0, time.UTC))
			usage := usageSettings{Enabled: true, Interval: 5 * time.Minute, MaxJobs: defaultUsageMaxJobs}
			opts := Options{Collect: withReader(config.Collect{Interval: 20 * time.Second, Concurrency: 8}, usageKey, usage), Now: clock.Now}
			u := newUsageReader(newRunner(host, opts, PartUsage, usage.Interval), client)
			u.unpaced = true
			u.tick(context.Background())
			calls += n * (1 + len(names))
		}
		b.ReportMetric(float64(processCPU()-cpu0)/float64(calls), "cpu_ns/call")
		b.ReportMetric(float64(calls)/float64(b.N), "calls/op")
	})
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
