package cloudsim

import (
	"encoding/json"
	"hash/fnv"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// Usage series of revision 2026: values are a pure function of the service
// and the bucket's time, so a test can compute what it must see.

// SeriesPrefix is the provider prefix: clients match the documented names by suffix.
const SeriesPrefix = "cloudsim"

// extraSeries is not in the spec: clients must ignore names they do not know.
const extraSeries = SeriesPrefix + "_database_replication_lag_bytes"

const (
	sufCPUUsage    = "_system_cpu_usage_millicores"
	sufCPUTotal    = "_system_cpu_total_millicores"
	sufMemUsage    = "_system_memory_usage_bytes"
	sufMemTotal    = "_system_memory_total_bytes"
	sufDiskUsage   = "_system_disk_usage_bytes"
	sufReadBytes   = "_system_disk_io_read_bytes"
	sufWriteBytes  = "_system_disk_io_write_bytes"
	sufTotalBytes  = "_system_disk_io_total_bytes"
	sufReadOps     = "_system_disk_io_read_ops"
	sufWriteOps    = "_system_disk_io_write_ops"
	sufTotalOps    = "_system_disk_io_total_ops"
	sufQPS         = "_database_qps"
	sufConnections = "_database_num_connections"
	sufJobDuration = "_database_job_duration_usecs"
	sufJobSuccess  = "_database_job_success"
)

var nodeSuffixes = []string{
	sufCPUTotal, sufCPUUsage, sufMemTotal, sufMemUsage, sufDiskUsage,
	sufReadBytes, sufWriteBytes, sufTotalBytes, sufReadOps, sufWriteOps, sufTotalOps,
	sufQPS, sufConnections,
}

// The spec's minimum bucket, and the simulator's cap per answer.
const (
	minBucketSeconds = 60
	maxBuckets       = 1440
	// usageLag: the provider's data lags by at least one bucket.
	usageLag = time.Minute
)

func init() { revision2026Routes = append(revision2026Routes, (*Sim).usageRoutes) }

func (s *Sim) usageRoutes() []route {
	const one = "/v1/projects/{project_id}/services/{service_id}"
	return []route{
		{"GET " + one + "/metrics/available-series", apiclient.OpGetServiceMetricsAvailableSeries, authBasic, s.availableSeries},
		{"POST " + one + "/metrics/series", apiclient.OpGetServiceMetricsSeries, authBasic, s.metricsSeries},
		{"GET " + one + "/logs", apiclient.OpGetServiceLogs, authBasic, s.serviceLogs},
	}
}

// readPOSTs are reads: a read-only credential may call them.
var readPOSTs = map[string]bool{apiclient.OpGetServiceMetricsSeries: true}

func (svc *service) jobs() []string {
	seed := svc.seed()
	n := int(seed>>16) % 2
	if svc.serviceType == apiclient.ServiceTypeTimeSeries {
		n = 2 + int(seed>>16)%3
	}
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa(1000 + i)
	}
	return out
}

func (svc *service) seed() uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(svc.id))
	return h.Sum64()
}

func (svc *service) seriesNames() []string {
	out := make([]string, 0, len(nodeSuffixes)+3)
	for _, suf := range nodeSuffixes {
		out = append(out, SeriesPrefix+suf)
	}
	if len(svc.jobs()) > 0 {
		out = append(out, SeriesPrefix+sufJobDuration, SeriesPrefix+sufJobSuccess)
	}
	return append(out, extraSeries)
}

func (s *Sim) availableSeries(c *call) (int, any, error) {
	svc, err := s.serviceOf(c)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, svc.seriesNames(), nil
}

type seriesPoint struct {
	Time  time.Time `json:"time"`
	Value *float64  `json:"value"`
}

type seriesOut struct {
	Labels map[string]string `json:"labels"`
	Data   []seriesPoint     `json:"data"`
}

func (s *Sim) metricsSeries(c *call) (int, any, error) {
	b, err := parseBody(c.body)
	if err != nil {
		return 0, nil, err
	}
	name := b.nonEmpty("name")
	from, to := b.time("from"), b.time("to")
	bucket := int64(minBucketSeconds)
	if b.has("bucket_seconds") {
		bucket = b.int("bucket_seconds", minBucketSeconds, 86400)
	}
	var filters []apiclient.SeriesFilter
	if b.has("filters") {
		if raw, ok := b.raw("filters"); ok && json.Unmarshal(raw, &filters) != nil {
			b.failOn("filters", invalidf("filters must be a list of {key, value}"))
		}
	}
	if err := b.err(); err != nil {
		return 0, nil, err
	}
	if b.has("fn") {
		return 0, nil, &apiError{status: http.StatusBadRequest, code: "INVALID_REQUEST",
			message: "fn is not supported on series " + truncate(name, 80), details: map[string]any{"field": "fn"}}
	}
	if !from.Before(to) {
		return 0, nil, &apiError{status: http.StatusBadRequest, code: "INVALID_REQUEST",
			message: "from must be before to", details: map[string]any{"field": "from"}}
	}
	step := time.Duration(bucket) * time.Second
	first := from.Truncate(step)
	if n := to.Sub(first) / step; n > maxBuckets {
		return 0, nil, invalidf("the window holds %d buckets; at most %d", n, maxBuckets)
	}
	svc, err := s.serviceOf(c)
	if err != nil {
		return 0, nil, err
	}
	suffix, ok := strings.CutPrefix(name, SeriesPrefix)
	if !ok || !contains(svc.seriesNames(), name) {
		return 0, nil, notFoundf("service %s has no series %q", svc.id, truncate(name, 80))
	}
	out := []seriesOut{}
	for _, labels := range svc.labelSets(suffix) {
		if !matchFilters(labels, filters) {
			continue
		}
		so := seriesOut{Labels: labels}
		for t := first; t.Before(to); t = t.Add(step) {
			p := seriesPoint{Time: t}
			if v, ok := svc.bucketValue(suffix, labels, t, step, c.now); ok {
				p.Value = &v
			}
			so.Data = append(so.Data, p)
		}
		out = append(out, so)
	}
	return http.StatusOK, out, nil
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func matchFilters(labels map[string]string, filters []apiclient.SeriesFilter) bool {
	for _, f := range filters {
		if labels[f.Key] != f.Value {
			return false
		}
	}
	return true
}

// labelSets: one per node, and for job series one per job on the primary.
func (svc *service) labelSets(suffix string) []map[string]string {
	if suffix == sufJobDuration || suffix == sufJobSuccess {
		var out []map[string]string
		for _, j := range svc.jobs() {
			out = append(out, map[string]string{"role": "primary", "ordinal": strconv.Itoa(svc.firstOrdinal), "job_id": j})
		}
		return out
	}
	out := make([]map[string]string, len(svc.resourceIDs))
	for i := range svc.resourceIDs {
		role := "replica"
		if i == 0 {
			role = "primary"
		}
		out[i] = map[string]string{"role": role, "ordinal": strconv.Itoa(svc.firstOrdinal + i)}
	}
	return out
}

// bucketValue's empty buckets: not ended a minute ago, before the service
// existed, one in thirty lost, and a paused service's activity.
func (svc *service) bucketValue(suffix string, labels map[string]string, t time.Time, step time.Duration, now time.Time) (float64, bool) {
	if t.Add(step).Add(usageLag).After(now) || t.Add(step).Before(svc.created) {
		return 0, false
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(svc.id + suffix + labels["ordinal"] + labels["job_id"]))
	_, _ = h.Write(strconv.AppendInt(nil, t.Unix(), 10))
	if h.Sum64()%30 == 0 {
		return 0, false
	}
	cpuCap, memMB := svc.capacity()
	replica := labels["role"] != "primary"
	load := svc.load(t)
	if replica {
		load *= 0.6 // replicas serve reads only
	}
	active := svc.active(now)
	switch suffix {
	case sufCPUTotal:
		return float64(cpuCap), true
	case sufMemTotal:
		return float64(memMB) * (1 << 20), true
	case sufDiskUsage:
		return float64(svc.storageMB(t)) * (1 << 20), true
	}
	if !active {
		return 0, false
	}
	readBytes, writeBytes := math.Round(load*40e6), math.Round(load*15e6)
	if replica {
		writeBytes = math.Round(load * 20e6) // replication writes
	}
	switch suffix {
	case sufCPUUsage:
		return math.Round(float64(cpuCap) * load), true
	case sufMemUsage:
		return math.Round(float64(memMB)*(0.4+0.5*load)) * (1 << 20), true
	case sufReadBytes:
		return readBytes, true
	case sufWriteBytes:
		return writeBytes, true
	case sufTotalBytes:
		return readBytes + writeBytes, true
	case sufReadOps:
		return math.Round(readBytes / 8192), true
	case sufWriteOps:
		return math.Round(writeBytes / 8192), true
	case sufTotalOps:
		return math.Round(readBytes/8192) + math.Round(writeBytes/8192), true
	case sufQPS:
		return math.Round(float64(cpuCap)*load/4*100) / 100, true
	case sufConnections:
		return math.Round(4 + 80*load), true
	case sufJobDuration, sufJobSuccess:
		job, _ := strconv.Atoi(labels["job_id"])
		every := int64(1 + (job-1000)%3) // a run every 1 to 3 minutes
		if (t.Unix()/60)%every != 0 {
			return 0, false
		}
		if suffix == sufJobDuration {
			return math.Round(float64(200_000+100_000*(job-1000)) * (1 + load)), true
		}
		if (svc.seed()>>24+uint64(job))%5 == 0 {
			return 0, true // this job fails on every run
		}
		return 1, true
	}
	return 0, false
}

func (svc *service) capacity() (cpuMillis, memMB int64) {
	if svc.shared {
		return sharedMilliCPU, sharedMemoryMB
	}
	return svc.cpuMillis, svc.memoryGBs * 1024
}

// active: a paused or queued service has no CPU, memory or query activity.
func (svc *service) active(now time.Time) bool {
	switch svc.life.status(now) {
	case apiclient.ServiceQueued, apiclient.ServicePaused, apiclient.ServicePausing:
		return false
	}
	return true
}

// load is a daily curve of the service's own phase, 10% to 60%.
// loadCurve is a service's load over a day: base plus swing times a sine of
// the time of day (at a phase of its own). Zero: 0.35 +- 0.25.
type loadCurve struct{ base, swing float64 }

// The demo's clearly oversized and undersized services, for rightsizing:
// one barely loaded, one near its size all day. Clearly at every hour: the
// next size down must hold the idle one's memory peak (40% + half its load,
// of twice that size, plus the 15% headroom) and the busy one's CPU trough
// must exceed its size with the headroom, or the finding follows the clock.
var (
	idleLoad = loadCurve{base: 0.03, swing: 0.02}
	busyLoad = loadCurve{base: 0.95, swing: 0.03}
)

func (svc *service) load(t time.Time) float64 {
	seed := svc.seed()
	t = t.Truncate(time.Minute)
	phase := float64(seed%1440) / 1440 * 2 * math.Pi
	day := float64(t.Unix()%86400) / 86400 * 2 * math.Pi
	c := svc.curve
	if c == (loadCurve{}) {
		c = loadCurve{base: 0.35, swing: 0.25}
	}
	return c.base + c.swing*math.Sin(day+phase)
}

func (svc *service) storageMB(t time.Time) int64 {
	seed := svc.seed()
	age := max(t.Truncate(time.Minute).Sub(svc.created), 0)
	return int64(512+seed%2048) + int64(age.Hours()*float64(1+seed%8))
}
