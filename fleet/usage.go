package fleet

import (
	"time"
	"unique"
)

// PartUsage is the part of the opt-in usage collector.
const PartUsage = "usage"

// Usage returns the usage collector's data in s, nil when it has none.
func (s *Snapshot) Usage() *Usage { return DataOf[Usage](s, PartUsage) }

// Usage is the newest valued bucket of each selected series and label set.
type Usage struct {
	// Series is the collector's own lists, shared so a publish copies no sample.
	Series        [][]UsageSample
	JobsOverLimit int
	// RefreshPeriod is a multiple of the interval when refreshed round-robin.
	RefreshPeriod time.Duration
	Timestamps    bool
}

// UsageSample is the newest non-null bucket of one label set of a series.
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
	for _, list := range u.Series {
		out = append(out, list...)
	}
	return out
}
