package fleet

import (
	"time"
	"unique"
)

// PartUsage is the part of the opt-in usage collector, reported beside
// Parts when it is on.
const PartUsage = "usage"

// Usage is what the usage collector last read of a project's usage series:
// for each selected service, series and label set, the newest bucket that
// had a value. It is immutable once published.
type Usage struct {
	// Series holds the samples of each series of each service (never an
	// empty list), sorted by ServiceID and Suffix; each list is sorted by
	// Role, Ordinal and JobID. The lists are the collector's own, shared
	// by every Usage that holds them: a publish costs a list header per
	// series, not a copy of every sample.
	Series [][]UsageSample
	// JobsOverLimit counts the job label sets left out because a service
	// had more jobs than the collector's max-jobs.
	JobsOverLimit int
	// RefreshPeriod is how long refreshing every selected series takes at
	// the call budget: the usage interval, or a multiple of it when the
	// series are refreshed round-robin.
	RefreshPeriod time.Duration
	// Timestamps asks for the bucket's time as the sample timestamp.
	Timestamps bool
}

// UsageSample is the newest non-null bucket of one label set of one usage
// series of a service.
type UsageSample struct {
	ServiceID string
	// Suffix is the documented series name suffix the API's name ends in
	// (apiclient.SeriesCPUUsage, say); the value is as the API sent it.
	Suffix string
	Labels UsageLabels
	Value  float64
	// Bucket is the start of the bucket the value is from.
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
