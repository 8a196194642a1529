package dataplane

import (
	"slices"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/collector"
	"github.com/clouddb/clouddb_exporter/fleet"
)

type usageMetric struct {
	desc *collector.Desc
	// A divisor, so that 2397 millicores are exactly 2.397 cores.
	divisor float64
}

func usageDesc(name, help string, job bool) *collector.Desc {
	labels := []string{"project_id", "service_id", "role", "ordinal"}
	if job {
		labels = append(labels, "job_id")
	}
	return collector.NewDesc(name, help, labels...)
}

var usageMetrics = map[string]usageMetric{
	apiclient.SeriesCPUUsage:    {usageDesc("clouddb_service_system_cpu_usage_cores", "CPU used by one node of a database service, in cores.", false), 1000},
	apiclient.SeriesCPUTotal:    {usageDesc("clouddb_service_system_cpu_total_cores", "CPU available to one node of a database service, in cores.", false), 1000},
	apiclient.SeriesMemoryUsage: {usageDesc("clouddb_service_system_memory_usage_bytes", "Memory used by one node of a database service, in bytes.", false), 1},
	apiclient.SeriesMemoryTotal: {usageDesc("clouddb_service_system_memory_total_bytes", "Memory available to one node of a database service, in bytes.", false), 1},
	apiclient.SeriesDiskUsage:   {usageDesc("clouddb_service_system_disk_usage_bytes", "Disk used by one node of a database service, in bytes.", false), 1},
	apiclient.SeriesDiskIOReadBytes: {usageDesc("clouddb_service_system_disk_io_read_bytes",
		"Disk bytes read by one node of a database service.", false), 1},
	apiclient.SeriesDiskIOWriteBytes: {usageDesc("clouddb_service_system_disk_io_write_bytes",
		"Disk bytes written by one node of a database service.", false), 1},
	apiclient.SeriesDiskIOTotalBytes: {usageDesc("clouddb_service_system_disk_io_total_bytes",
		"Disk bytes read and written by one node of a database service.", false), 1},
	apiclient.SeriesDiskIOReadOps: {usageDesc("clouddb_service_system_disk_io_read_ops",
		"Disk read operations of one node of a database service.", false), 1},
	apiclient.SeriesDiskIOWriteOps: {usageDesc("clouddb_service_system_disk_io_write_ops",
		"Disk write operations of one node of a database service.", false), 1},
	apiclient.SeriesDiskIOTotalOps: {usageDesc("clouddb_service_system_disk_io_total_ops",
		"Disk read and write operations of one node of a database service.", false), 1},
	apiclient.SeriesQPS:         {usageDesc("clouddb_service_database_queries_per_second", "Queries per second served by one node of a database service.", false), 1},
	apiclient.SeriesConnections: {usageDesc("clouddb_service_database_connections", "Connections to one node of a database service.", false), 1},
	apiclient.SeriesJobDuration: {usageDesc("clouddb_service_database_job_duration_seconds", "Duration of the last run of a database service's background job, in seconds.", true), 1e6},
	apiclient.SeriesJobSuccess:  {usageDesc("clouddb_service_database_job_success", "Whether the last run of a database service's background job succeeded.", true), 1},
}

var (
	usageBucketDesc = collector.NewDesc("clouddb_service_usage_bucket_timestamp_seconds",
		"Start of the newest usage bucket of a database node, in Unix seconds.",
		"project_id", "service_id", "role", "ordinal")
	usageJobsOverLimitDesc = collector.NewDesc("clouddb_exporter_usage_jobs_over_limit",
		"Background jobs over --collect.usage.max-jobs, whose usage is not exported.",
		"project_id")
	usageRefreshPeriodDesc = collector.NewDesc("clouddb_exporter_usage_refresh_period_seconds",
		"Time to refresh every selected usage series of a project, in seconds.",
		"project_id")
)

func registerUsageMetrics() {
	descs := []*collector.Desc{usageBucketDesc, usageJobsOverLimitDesc, usageRefreshPeriodDesc, valuesRejectedDesc}
	for _, suf := range apiclient.UsageSeriesSuffixes {
		descs = append(descs, usageMetrics[suf].desc)
	}
	// Keyed by service, weighed by series: a chunk holds as many series as
	// one of the state's lists holds resources.
	series := collector.ListGroup(PartUsage, func(u *Usage) []*UsageService { return u.Services },
		func(l **UsageService) collector.Key { return collector.Key{(*l).ID} },
		func(u *Usage, l []*UsageService) *Usage {
			return &Usage{Suffixes: u.Suffixes, Services: l, Timestamps: u.Timestamps}
		}, collectUsage)
	series.Weight = func(s *fleet.Snapshot, i int) int { return usageOf(s).Services[i].SeriesWithPoints() }
	series.Equal = equalUsage
	totals := collector.DataGroup(PartUsage, func(s *fleet.Snapshot) any {
		u := usageOf(s)
		return &Usage{JobsOverLimit: u.JobsOverLimit, RefreshPeriod: u.RefreshPeriod, Rejected: u.Rejected}
	}, collectUsageTotals)
	collector.RegisterPart(PartUsage, descs, series, totals)
}

func collectUsage(out *collector.Sink, s *fleet.Snapshot) {
	u := usageOf(s)
	if u == nil {
		return
	}
	p := s.ProjectID
	// A service has a few nodes: their newest buckets fit on the stack.
	var buf [8]nodeBucket
	for _, svc := range u.Services {
		nodes := buf[:0]
		for i, suffix := range u.Suffixes {
			m, ok := usageMetrics[suffix]
			if !ok {
				continue
			}
			for _, smp := range svc.Series(i) {
				collectUsageSample(out, u, p, usageSeriesID{svc.ID, suffix}, m, smp)
				nodes = newestBucket(nodes, smp)
			}
		}
		// One bucket time per node, the newest of its series: the data's
		// age for the alerts, without a series per usage series.
		for _, n := range nodes {
			out.Gauge(usageBucketDesc, unixSeconds(time.Unix(0, n.bucket)), p, svc.ID, n.role, n.ordinal)
		}
	}
}

// nodeBucket is the newest bucket (Unix nanoseconds) of a node's series.
type nodeBucket struct {
	role, ordinal string
	bucket        int64
}

// newestBucket keeps in nodes the newest bucket of smp's node; a point
// without a bucket has no time to give.
func newestBucket(nodes []nodeBucket, smp UsagePoint) []nodeBucket {
	if smp.Bucket == 0 {
		return nodes
	}
	role, ordinal := smp.Labels.Role(), smp.Labels.Ordinal()
	for i := range nodes {
		if nodes[i].role == role && nodes[i].ordinal == ordinal {
			nodes[i].bucket = max(nodes[i].bucket, smp.Bucket)
			return nodes
		}
	}
	return append(nodes, nodeBucket{role, ordinal, smp.Bucket})
}

type usageSeriesID struct{ serviceID, suffix string }

func collectUsageSample(out *collector.Sink, u *Usage, p string, ser usageSeriesID, m usageMetric, smp UsagePoint) {
	var ts time.Time
	if u.Timestamps {
		ts = smp.Time()
	}
	role, ordinal, job := smp.Labels.Role(), smp.Labels.Ordinal(), smp.Labels.JobID()
	if ser.suffix == apiclient.SeriesJobDuration || ser.suffix == apiclient.SeriesJobSuccess {
		out.GaugeAt(m.desc, smp.Value/m.divisor, ts, p, ser.serviceID, role, ordinal, job)
	} else {
		out.GaugeAt(m.desc, smp.Value/m.divisor, ts, p, ser.serviceID, role, ordinal)
	}
}

// equalUsage compares two chunks of the usage: every publish of a read compares
// each chunk, and reflect.DeepEqual made a map of every pointer it followed.
func equalUsage(a, b *fleet.Snapshot) bool {
	x, y := usageOf(a), usageOf(b)
	return a.ProjectID == b.ProjectID && x.Timestamps == y.Timestamps && slices.Equal(x.Suffixes, y.Suffixes) &&
		slices.EqualFunc(x.Services, y.Services, func(x, y *UsageService) bool {
			return x == y || x.ID == y.ID && slices.Equal(x.Ends, y.Ends) && slices.Equal(x.Points, y.Points)
		})
}

func collectUsageTotals(out *collector.Sink, s *fleet.Snapshot) {
	if u := usageOf(s); u != nil {
		out.Gauge(usageJobsOverLimitDesc, float64(u.JobsOverLimit), s.ProjectID)
		out.Gauge(usageRefreshPeriodDesc, u.RefreshPeriod.Seconds(), s.ProjectID)
		collectRejected(out, s, u)
	}
}

// unixSeconds avoids UnixNano, which overflows past 2262 (a drifting API).
func unixSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}
