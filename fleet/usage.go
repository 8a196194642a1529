package fleet

import (
	"time"
	"unique"
)

// PartUsage is the part of the opt-in usage collector.
const PartUsage = "usage"

// Usage is the newest bucket with a value of each selected service's usage
// series and label set.
type Usage struct {
	// Sorted by ServiceID and Suffix; the series are the collector's own,
	// shared so that a publish copies none, and never modified once
	// published.
	Series        []*UsageSeries
	JobsOverLimit int
	// The usage interval, or a multiple of it when refreshed round-robin.
	RefreshPeriod time.Duration
	Timestamps    bool
}

// UsageSeries is one series of one service: what its samples share is
// held once, not in each of them.
type UsageSeries struct {
	ServiceID string
	// A documented series name suffix such as apiclient.SeriesCPUUsage.
	Suffix string
	// Sorted by Role, Ordinal and JobID.
	Samples []UsagePoint
}

// UsagePoint is the newest non-null bucket of one label set of a series:
// 24 bytes, where a sample that held its series' ids and a time.Time took 72.
type UsagePoint struct {
	Labels UsageLabels
	Value  float64
	// Bucket is the start of the bucket the value is from, in Unix
	// nanoseconds; 0 for none.
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
	// The start of the bucket the value is from.
	Bucket time.Time
}

// UsageLabels are the API's role, ordinal and job id of a sample ("" when
// absent). Every sample of a label set shares one copy: a sample holds 8
// bytes of labels rather than three strings' 48, and the strings of each
// decoded answer are not kept.
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
	for _, s := range u.Series {
		for _, p := range s.Samples {
			out = append(out, UsageSample{ServiceID: s.ServiceID, Suffix: s.Suffix, Labels: p.Labels, Value: p.Value, Bucket: p.Time()})
		}
	}
	return out
}
