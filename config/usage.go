package config

import (
	"strings"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// Defaults of the opt-in usage collector.
const (
	DefaultUsageInterval = 5 * time.Minute
	// MinUsageInterval is the shortest usage interval: the API's smallest
	// bucket is a minute.
	MinUsageInterval    = time.Minute
	DefaultUsageMaxJobs = 50
)

// DefaultUsageSeries is every documented usage series suffix, without its
// leading underscore as the flag takes it.
var DefaultUsageSeries = func() []string {
	out := make([]string, len(apiclient.UsageSeriesSuffixes))
	for i, s := range apiclient.UsageSeriesSuffixes {
		out[i] = strings.TrimPrefix(s, "_")
	}
	return out
}()

// Usage holds the settings of the opt-in usage collector (docs/configuration.md).
type Usage struct {
	Enabled bool
	// Interval is how often each selected series is read.
	Interval time.Duration
	// Series are the suffixes of the series to read, without their
	// leading underscore (system_cpu_usage_millicores); empty means
	// DefaultUsageSeries (see SelectedSeries).
	Series []string
	// Selection picks the services whose usage is read.
	Selection
	// MaxJobs bounds the job label sets exported per service.
	MaxJobs int
	// Timestamps exports the bucket's time as the sample timestamp.
	Timestamps bool
}

// SelectedSeries returns the series to read: Series, or every documented
// one when it is empty.
func (u Usage) SelectedSeries() []string {
	if len(u.Series) == 0 {
		return DefaultUsageSeries
	}
	return u.Series
}
