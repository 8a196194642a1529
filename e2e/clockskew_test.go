package e2e

import (
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestClockSkew: a provider whose clock is ten minutes behind stamps its
// log entries and usage buckets ten minutes in the past. The exporter
// measures the skew from the Date header (clouddb_api_clock_skew_seconds),
// counts every log entry (before: 0 of 60, with no counter nor log line)
// and reads the usage window in the provider's clock, so that the newest
// bucket is as fresh by the provider's clock as without a skew.
func TestClockSkew(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	const skew = -10 * time.Minute
	sim := testbin.SimAt(testbin.StartSim(t, "--clock-skew="+skew.String()))
	var id string
	for _, s := range usageServices(t, sim) {
		if s.Name == "orders-db" {
			id = s.ServiceID
		}
	}
	sim.AddLogEntries(t, id, nil, 0) // only the entries the test adds
	_, url := testbin.StartExporter(t, sim.Env(), usageArgs("--collect.logs", "--collect.logs.interval=1s",
		"--collect.logs.service-name-regex=orders-db", "--collect.usage.service-name-regex=orders-db",
		"--collect.usage.interval=2s", "--collect.usage.series=system_cpu_usage_millicores", "--no-rightsizing")...)
	metric := url + "/metrics"
	testbin.WaitFor(t, 60*time.Second, "the first log read", func() bool {
		_, ok := testbin.Value(scrapeFams(t, url), "clouddb_service_log_entries_total", "service_id", id, "severity", "ERROR")
		return ok
	})
	fams := scrapeFams(t, url)
	if got := value(t, fams, "clouddb_api_clock_skew_seconds"); got > skew.Seconds()+2 || got < skew.Seconds()-2 {
		t.Errorf("clouddb_api_clock_skew_seconds = %v, want about %v", got, skew.Seconds())
	}

	batch := make([]map[string]string, 60)
	for i := range batch {
		batch[i] = map[string]string{"severity": "ERROR", "message": "stamped by a clock behind"}
	}
	sim.AddLogEntries(t, id, batch, -1) // at the simulator's now, ten minutes behind
	testbin.WaitFor(t, 60*time.Second, "60 ERROR entries", testbin.MetricEquals(metric, "clouddb_service_log_entries_total", 60, "service_id", id, "severity", "ERROR"))

	// The newest CPU bucket, a minute or two old by the provider's clock.
	testbin.WaitFor(t, 60*time.Second, "a usage bucket", func() bool {
		fams = scrapeFams(t, url)
		_, ok := testbin.Value(fams, "clouddb_service_usage_bucket_timestamp_seconds", "service_id", id, "role", "primary")
		return ok
	})
	bucket := time.Unix(int64(value(t, fams, "clouddb_service_usage_bucket_timestamp_seconds", "service_id", id, "role", "primary")), 0)
	if age := time.Since(bucket) + skew; age < 0 || age > 5*time.Minute {
		t.Errorf("newest bucket %s is %s old by the provider's clock, want a few minutes at most", bucket, age)
	}
}
