package fleet

import "time"

// PartUsage is the part of the opt-in usage collector.
const PartUsage = "usage"

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
	Suffix               string
	Role, Ordinal, JobID string
	Value                float64
	Bucket               time.Time
}

// Samples returns every sample of u, in order, as one new list.
func (u *Usage) Samples() []UsageSample {
	var out []UsageSample
	for _, list := range u.Series {
		out = append(out, list...)
	}
	return out
}
