package fleet

import (
	"time"
	"unique"
)

// PartUsage is the part of the opt-in usage collector.
const PartUsage = "usage"

// Usage returns the usage collector's data in s, nil when it has none.
func (s *Snapshot) Usage() *Usage { return DataOf[Usage](s, PartUsage) }

// Usage is the newest bucket with a value of each selected service's usage
// series and label set.
type Usage struct {
	// Sorted by ServiceID and Suffix, each list by Role, Ordinal and JobID; the
	// lists are the collector's own, shared so a publish copies no sample.
	Series        [][]UsageSample
	JobsOverLimit int
	// The usage interval, or a multiple of it when refreshed round-robin.
	RefreshPeriod time.Duration
	Timestamps    bool
}

// UsageSample is the newest non-null bucket of one label set of a series.
type UsageSample struct {
	ServiceID string
	// A documented series name suffix such as apiclient.SeriesCPUUsage.
	Suffix string
	Labels UsageLabels
	Value  float64
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
	for _, list := range u.Series {
		out = append(out, list...)
	}
	return out
}
