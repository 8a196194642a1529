// Package dataplanetest adds the data plane's parts to the fixtures of
// internal/fleettest, for the tests of what renders them: the exposition's
// and the status page's. The collector's own tests cannot import it (the
// data plane imports the collector).
package dataplanetest

import (
	"fmt"
	"slices"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/dataplane"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/fleettest"
)

// Snapshots returns fleettest.Snapshots with usage and log counts in the
// first project: together they exercise every metric.
func Snapshots() []*fleet.Snapshot {
	snaps := fleettest.Snapshots()
	snaps[0].SetData(dataplane.PartUsage, usage("svc-1"))
	snaps[0].SetData(dataplane.PartLogs, &dataplane.Logs{PagesTruncated: 2, EntriesSkipped: 5, ReadPeriod: 3 * time.Minute, Counts: []*dataplane.ServiceLogs{
		LogCounts("svc-1", map[string]float64{"ERROR": 17, "FATAL": 0, "LOG": 1234, "OTHER": 3}),
	}})
	return snaps
}

// WithDataPlane gives every service of s usage samples and log counts, and
// returns s.
func WithDataPlane(s *fleet.Snapshot) *fleet.Snapshot {
	u, l := &dataplane.Usage{RefreshPeriod: 10 * time.Minute}, &dataplane.Logs{ReadPeriod: time.Minute}
	s.SetData(dataplane.PartUsage, u)
	s.SetData(dataplane.PartLogs, l)
	for i, svc := range s.Services {
		one := usage(svc.ServiceID)
		u.Suffixes = one.Suffixes
		u.Services = append(u.Services, one.Services...)
		l.Counts = append(l.Counts, LogCounts(svc.ServiceID, map[string]float64{"ERROR": float64(i % 7), "WARNING": float64(i % 11)}))
	}
	return s
}

// LogCounts returns a service's log counts by severity.
func LogCounts(serviceID string, counts map[string]float64) *dataplane.ServiceLogs {
	l := dataplane.NewServiceLogs(&serviceID)
	for sev, n := range counts {
		l.Set(dataplane.LogSeverityIndex(sev), n)
	}
	return l
}

// One primary and one replica, two jobs: one over a max-jobs of 2.
func usage(serviceID string) *dataplane.Usage {
	u := &dataplane.Usage{RefreshPeriod: 10 * time.Minute, JobsOverLimit: 1,
		Rejected: []dataplane.Rejected{{Field: "system_memory_usage_bytes", Reason: "over_total", N: 2}}}
	bucket := fleettest.Time("2025-03-01T11:58:00Z")
	points := map[string][]dataplane.UsagePoint{}
	for i, suffix := range apiclient.UsageSeriesSuffixes {
		u.Suffixes = append(u.Suffixes, suffix)
		if suffix == apiclient.SeriesJobDuration || suffix == apiclient.SeriesJobSuccess {
			for j, job := range []string{"1000", "1001"} {
				points[suffix] = append(points[suffix], dataplane.UsagePoint{Labels: dataplane.NewUsageLabels("primary", "0", job),
					Value: float64(250_000 * (j + 1)), Bucket: dataplane.BucketOf(bucket.Add(-time.Duration(j) * time.Minute))})
			}
		} else {
			for n, role := range []string{"primary", "replica"} {
				points[suffix] = append(points[suffix], dataplane.UsagePoint{Labels: dataplane.NewUsageLabels(role, fmt.Sprint(n), ""),
					Value: float64(1000 * (i + 1) * (n + 1)), Bucket: dataplane.BucketOf(bucket)})
			}
		}
	}
	// As the reader publishes them: the series by suffix.
	slices.Sort(u.Suffixes)
	var series [][]dataplane.UsagePoint
	for _, suffix := range u.Suffixes {
		series = append(series, points[suffix])
	}
	u.Services = []*dataplane.UsageService{newUsageService(serviceID, series...)}
	return u
}

// newUsageService returns a service's series, series[i] being Suffixes[i]'s.
func newUsageService(id string, series ...[]dataplane.UsagePoint) *dataplane.UsageService {
	s := &dataplane.UsageService{ID: id, Ends: make([]uint16, len(series))}
	for i, points := range series {
		s.Points = append(s.Points, points...)
		s.Ends[i] = uint16(len(s.Points))
	}
	return s
}
