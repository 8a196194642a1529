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

// Usage holds the settings of the opt-in usage collector.
type Usage struct {
	Enabled  bool
	Interval time.Duration
	// Series empty means DefaultUsageSeries (see SelectedSeries).
	Series []string
	Selection
	MaxJobs    int
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
