package dataplane

import (
	"time"
	"unique"

	"github.com/clouddb/clouddb_exporter/fleet"
)

// PartUsage is the part of the opt-in usage collector.
const PartUsage = "usage"

// usageOf returns the usage collector's data in s, nil when it has none.
func usageOf(s *fleet.Snapshot) *Usage { return fleet.DataOf[Usage](s, PartUsage) }

// Usage is the newest valued bucket of each selected series and label set.
type Usage struct {
	// Suffixes names every service's series, sorted; shared, never modified.
	Suffixes []string
	// Services is sorted by ID, and never modified once published.
	Services      []*UsageService
	JobsOverLimit int
	RefreshPeriod time.Duration
	Timestamps    bool
	// Rejected counts values no node can have, by field and reason.
	Rejected []Rejected
}

// UsageService holds the points of every series of one service in one list,
// a couple of bytes a series rather than a header each.
type UsageService struct {
	ID string
	// Points holds series i (Suffixes[i]) at Points[Ends[i-1]:Ends[i]] (from 0
	// for the first), each series sorted by Role, Ordinal and JobID.
	Points []UsagePoint
	Ends   []uint16
}

// Series returns the points of series i, nil when s has none or is malformed.
func (s *UsageService) Series(i int) []UsagePoint {
	if i < 0 || i >= len(s.Ends) {
		return nil
	}
	start, end := 0, int(s.Ends[i])
	if i > 0 {
		start = int(s.Ends[i-1])
	}
	if start > end || end > len(s.Points) {
		return nil
	}
	return s.Points[start:end:end]
}

// SeriesWithPoints counts the series of s that have points.
func (s *UsageService) SeriesWithPoints() int {
	n, last := 0, uint16(0)
	for _, end := range s.Ends {
		if end != last {
			n++
		}
		last = end
	}
	return n
}

// UsagePoint is the newest non-null bucket of one label set of a series.
type UsagePoint struct {
	Labels UsageLabels
	Value  float64
	// Bucket is the bucket's start in Unix nanoseconds; 0 for none.
	Bucket int64
}

// Time returns the start of the point's bucket (the zero time for none).
func (p UsagePoint) Time() time.Time {
	if p.Bucket == 0 {
		return time.Time{}
	}
	return time.Unix(0, p.Bucket).UTC()
}

// BucketOf returns t as a UsagePoint's Bucket.
func BucketOf(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// UsageSample is one sample with its series' ids, as Samples lists them.
type UsageSample struct {
	ServiceID string
	Suffix    string
	Labels    UsageLabels
	Value     float64
	Bucket    time.Time
}

// UsageLabels is an interned label set: 8 bytes per sample, no decoded strings kept.
type UsageLabels struct{ h unique.Handle[usageLabelSet] }

type usageLabelSet struct{ role, ordinal, jobID string }

// NewUsageLabels returns the shared labels of a label set.
func NewUsageLabels(role, ordinal, jobID string) UsageLabels {
	if role == "" && ordinal == "" && jobID == "" {
		return UsageLabels{}
	}
	return UsageLabels{unique.Make(usageLabelSet{role, ordinal, jobID})}
}

func (l UsageLabels) set() usageLabelSet {
	if l == (UsageLabels{}) {
		return usageLabelSet{}
	}
	return l.h.Value()
}

// Role is the API's role label.
func (l UsageLabels) Role() string { return l.set().role }

// Ordinal is the API's ordinal label.
func (l UsageLabels) Ordinal() string { return l.set().ordinal }

// JobID is the API's job id label.
func (l UsageLabels) JobID() string { return l.set().jobID }

// Samples returns every sample of u, in order, as one new list.
func (u *Usage) Samples() []UsageSample {
	var out []UsageSample
	for _, s := range u.Services {
		for i, suffix := range u.Suffixes {
			for _, p := range s.Series(i) {
				out = append(out, UsageSample{ServiceID: s.ID, Suffix: suffix, Labels: p.Labels, Value: p.Value, Bucket: p.Time()})
			}
		}
	}
	return out
}
