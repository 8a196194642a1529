package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestPrometheusRestartPagesNoOldFatal: a routine restart of the exporter
// under a real Prometheus with the shipped rules does not page a FATAL
// entry counted before it. The exporter counts one FATAL entry, then
// Prometheus scrapes it (the counter at 1 from its first sample); the
// exporter stops and starts again on the same address with its state
// file, which carries the count over, after a gap in the series.
// CloudDBServiceFatalLogs is never pending or firing through all that;
// a new FATAL entry afterwards makes it pending, so the rule can match.
func TestPrometheusRestartPagesNoOldFatal(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator, the exporter and Prometheus")
	}
	t.Parallel()
	promBin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Skip("prometheus not found: run scripts/test.sh, which installs it")
	}
	sim, id := quietOrdersDB(t)
	args := []string{"--collect.interval=1s", "--collect.logs", "--collect.min-data-interval=1s", "--collect.logs.interval=1s",
		"--collect.logs.service-name-regex=orders-db", "--api.rate-limit=1000",
		"--state.file=" + filepath.Join(t.TempDir(), "state.json")}
	name, labels := "clouddb_service_log_entries_total", []string{"service_id", id, "severity", "FATAL"}
	fatal := []map[string]string{{"severity": "FATAL", "message": "terminating connection due to administrator command"}}

	p, url := testbin.StartExporter(t, sim.Env(), args...)
	testbin.WaitFor(t, 60*time.Second, "the first log read", testbin.MetricEquals(url+"/metrics", name, 0, labels...))
	sim.AddLogEntries(t, id, fatal, -1)
	testbin.WaitFor(t, 60*time.Second, "the FATAL entry counted", testbin.MetricEquals(url+"/metrics", name, 1, labels...))

	addr := strings.TrimPrefix(url, "http://")
	prom := startPrometheus(t, promBin, addr)
	series := fmt.Sprintf(`%s{service_id=%q,severity="FATAL"}`, name, id)
	scraped := func(n int) func() bool {
		return func() bool {
			r, _ := prom.query(fmt.Sprintf(`count_over_time(%s[5m]) >= %d`, series, n))
			return len(r) == 1
		}
	}
	testbin.WaitFor(t, 60*time.Second, "five scrapes of the FATAL counter", scraped(5))

	if code := p.Stop(t); code != 0 {
		t.Fatalf("the exporter exited %d on SIGTERM:\n%s", code, p.Output())
	}
	testbin.WaitFor(t, 60*time.Second, "Prometheus to see the exporter down", func() bool {
		r, _ := prom.query(fmt.Sprintf(`up{job=%q} == 0`, job))
		return len(r) == 1
	})
	p2 := testbin.Start(t, testbin.Build(t, "."), sim.Env(), append([]string{"--web.listen-address=" + addr}, args...)...)
	testbin.WaitFor(t, 60*time.Second, "the restarted exporter's count in Prometheus", func() bool {
		if p2.Exited() {
			t.Fatalf("the restarted exporter exited:\n%s", p2.Output())
		}
		r, _ := prom.query(fmt.Sprintf(`%s == 1 and on () up{job=%q} == 1`, series, job))
		return len(r) == 1
	})
	testbin.WaitFor(t, 60*time.Second, "five scrapes after the restart", scraped(11))
	if r, err := prom.query(`count_over_time(ALERTS{alertname="CloudDBServiceFatalLogs"}[5m])`); err != nil || len(r) > 0 {
		t.Errorf("CloudDBServiceFatalLogs was active across the restart (%v): %+v", err, r)
	}

	sim.AddLogEntries(t, id, fatal, -1)
	prom.waitAlert(t, "CloudDBServiceFatalLogs", "service_id", id)
}
