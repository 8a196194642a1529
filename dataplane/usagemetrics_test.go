package dataplane

import (
	"math"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/collector"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/collectortest"
	"github.com/clouddb/clouddb_exporter/internal/fleettest"
)

// TestUsageConversions checks each series' unit conversion and labels, by
// name: the table of docs/metrics.md.
func TestUsageConversions(t *testing.T) {
	bucket := fleettest.Time("2025-03-01T11:58:00Z")
	snap := &fleet.Snapshot{ProjectID: "p", Data: map[string]any{PartUsage: &Usage{RefreshPeriod: 300e9,
		Suffixes: []string{apiclient.SeriesCPUUsage, apiclient.SeriesMemoryTotal, apiclient.SeriesJobDuration, "_not_documented"},
		Services: []*UsageService{newUsageService("s",
			[]UsagePoint{{Labels: NewUsageLabels("primary", "0", ""), Value: 1500, Bucket: BucketOf(bucket)}},
			[]UsagePoint{{Labels: NewUsageLabels("replica", "1", ""), Value: 1 << 30, Bucket: BucketOf(bucket)}},
			[]UsagePoint{{Labels: NewUsageLabels("primary", "0", "7"), Value: 2_500_000, Bucket: BucketOf(bucket)}},
			[]UsagePoint{{Value: 1, Bucket: BucketOf(bucket)}},
		)}}}}
	want := `
# HELP clouddb_service_system_cpu_usage_cores ` + usageMetrics[apiclient.SeriesCPUUsage].desc.Help() + `
# TYPE clouddb_service_system_cpu_usage_cores gauge
clouddb_service_system_cpu_usage_cores{ordinal="0",project_id="p",role="primary",service_id="s"} 1.5
# HELP clouddb_service_system_memory_total_bytes ` + usageMetrics[apiclient.SeriesMemoryTotal].desc.Help() + `
# TYPE clouddb_service_system_memory_total_bytes gauge
clouddb_service_system_memory_total_bytes{ordinal="1",project_id="p",role="replica",service_id="s"} 1.073741824e+09
# HELP clouddb_service_database_job_duration_seconds ` + usageMetrics[apiclient.SeriesJobDuration].desc.Help() + `
# TYPE clouddb_service_database_job_duration_seconds gauge
clouddb_service_database_job_duration_seconds{job_id="7",ordinal="0",project_id="p",role="primary",service_id="s"} 2.5
# HELP clouddb_exporter_usage_refresh_period_seconds ` + usageRefreshPeriodDesc.Help() + `
# TYPE clouddb_exporter_usage_refresh_period_seconds gauge
clouddb_exporter_usage_refresh_period_seconds{project_id="p"} 300
`
	c := collectortest.NewFleetCollectorOf(snap)
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "clouddb_service_system_cpu_usage_cores",
		"clouddb_service_system_memory_total_bytes", "clouddb_service_database_job_duration_seconds", "clouddb_exporter_usage_refresh_period_seconds"); err != nil {
		t.Error(err)
	}
	// One bucket timestamp per node, not per usage series: the primary's
	// CPU and job series share one; the undocumented series has none.
	buckets := `
# HELP clouddb_service_usage_bucket_timestamp_seconds ` + usageBucketDesc.Help() + `
# TYPE clouddb_service_usage_bucket_timestamp_seconds gauge
clouddb_service_usage_bucket_timestamp_seconds{ordinal="0",project_id="p",role="primary",service_id="s"} 1.74083028e+09
clouddb_service_usage_bucket_timestamp_seconds{ordinal="1",project_id="p",role="replica",service_id="s"} 1.74083028e+09
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(buckets), "clouddb_service_usage_bucket_timestamp_seconds"); err != nil {
		t.Error(err)
	}
	// Off: nothing at all.
	if n := testutil.CollectAndCount(collectortest.NewFleetCollectorOf(&fleet.Snapshot{ProjectID: "p"}), "clouddb_exporter_usage_refresh_period_seconds"); n != 0 {
		t.Errorf("usage off exports %d refresh periods", n)
	}
}

// TestUsageConversionIsExact: the value is the API's divided by 1000 or
// 1e6 as the table says, the nearest float to the true value; multiplying
// by 1e-3 is off by one ulp for most values (2397 x 1e-3 is
// 2.3970000000000002).
func TestUsageConversionIsExact(t *testing.T) {
	for _, c := range []struct {
		suffix string
		in     float64
		want   float64
	}{
		{apiclient.SeriesCPUUsage, 2397, 2.397},
		{apiclient.SeriesCPUTotal, 4001, 4.001},
		{apiclient.SeriesJobDuration, 1_234_567, 1.234567},
		{apiclient.SeriesJobDuration, 300_000, 0.3},
		{apiclient.SeriesConnections, 17, 17},
	} {
		snap := &fleet.Snapshot{ProjectID: "p", Data: map[string]any{PartUsage: &Usage{Suffixes: []string{c.suffix}, Services: []*UsageService{
			newUsageService("s", []UsagePoint{{Labels: NewUsageLabels("primary", "0", "1"), Value: c.in}}),
		}}}}
		var rec collector.Samples
		collectUsage(rec.Sink(), snap)
		got := math.NaN()
		for i := range rec.Len() {
			if d, v, _ := rec.At(i); d == usageMetrics[c.suffix].desc {
				got = v
			}
		}
		if got != c.want {
			t.Errorf("%s %v: exported %v, want %v", c.suffix, c.in, got, c.want)
		}
	}
}

// newUsageService returns a service's series, series[i] being Suffixes[i]'s.
func newUsageService(id string, series ...[]UsagePoint) *UsageService {
	s := &UsageService{ID: id, Ends: make([]uint16, len(series))}
	for i, points := range series {
		s.Points = append(s.Points, points...)
		s.Ends[i] = uint16(len(s.Points))
	}
	return s
}

// TestUsageBucketIsTheNodesNewest: a node's bucket time is the newest of
// its series' buckets, whichever series it is from; a point without a
// bucket gives none.
func TestUsageBucketIsTheNodesNewest(t *testing.T) {
	older, newer := fleettest.Time("2025-03-01T11:55:00Z"), fleettest.Time("2025-03-01T11:58:00Z")
	snap := &fleet.Snapshot{ProjectID: "p", Data: map[string]any{PartUsage: &Usage{RefreshPeriod: 300e9,
		Suffixes: []string{apiclient.SeriesCPUUsage, apiclient.SeriesMemoryUsage, apiclient.SeriesConnections},
		Services: []*UsageService{newUsageService("s",
			[]UsagePoint{{Labels: NewUsageLabels("primary", "0", ""), Value: 1500, Bucket: BucketOf(older)}},
			[]UsagePoint{{Labels: NewUsageLabels("primary", "0", ""), Value: 1 << 30, Bucket: BucketOf(newer)}},
			[]UsagePoint{{Labels: NewUsageLabels("replica", "1", ""), Value: 3}},
		)}}}}
	want := `
# HELP clouddb_service_usage_bucket_timestamp_seconds ` + usageBucketDesc.Help() + `
# TYPE clouddb_service_usage_bucket_timestamp_seconds gauge
clouddb_service_usage_bucket_timestamp_seconds{ordinal="0",project_id="p",role="primary",service_id="s"} 1.74083028e+09
`
	if err := testutil.CollectAndCompare(collectortest.NewFleetCollectorOf(snap), strings.NewReader(want), "clouddb_service_usage_bucket_timestamp_seconds"); err != nil {
		t.Error(err)
	}
}
