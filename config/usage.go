package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// Defaults of the opt-in usage collector.
const (
	DefaultUsageInterval = 5 * time.Minute
	// MinUsageInterval is the shortest: the API's smallest bucket is a minute.
	MinUsageInterval    = time.Minute
	DefaultUsageMaxJobs = 50
)

// DefaultUsageSeries is every documented series suffix, without its leading underscore.
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
	Series   []string
	Selection
	MaxJobs    int
	Timestamps bool
}

// SelectedSeries returns Series, or every documented series when it is empty.
func (u Usage) SelectedSeries() []string {
	if len(u.Series) == 0 {
		return DefaultUsageSeries
	}
	return u.Series
}

func init() {
	AddSettings([]Setting{
		{"collect.usage", "collect.usage.enabled", "Opt-in: read each selected service's usage series (CPU, memory, disk, I/O, queries, connections, jobs) from the API's usage time series, at a cost of one call per service and series every --collect.usage.interval (see docs/configuration.md).", "",
			func(_ *API, c *Collect) any { return &c.Usage.Enabled }, nil},
		{"collect.usage.interval", "collect.usage.interval", "Interval at which each selected usage series is read (at least 1m).", DefaultUsageInterval.String(),
			func(_ *API, c *Collect) any { return &c.Usage.Interval }, ifUsage(atLeastDataInterval(MinUsageInterval))},
		{"collect.usage.series", "collect.usage.series", "Usage series to read, by the suffix the API's names end in (repeatable; default: every documented series).", "",
			func(_ *API, c *Collect) any { return &c.Usage.Series }, ifUsage(usageSeries)},
		{"collect.usage.environment", "collect.usage.environments", "Read the usage of services of this environment only (PROD or DEV; repeatable; default: every environment).", "",
			func(_ *API, c *Collect) any { return &c.Usage.Environments }, ifUsage(environments)},
		{"collect.usage.service-name-regex", "collect.usage.service_name_regex", "Read the usage of services whose name matches this regular expression only (anchored; default: every service).", "",
			func(_ *API, c *Collect) any { return &c.Usage.ServiceNameRegex }, ifUsage(nameRegex)},
		{"collect.usage.max-jobs", "collect.usage.max_jobs", "Job label sets exported per service; the rest are counted in clouddb_exporter_usage_jobs_over_limit.", fmt.Sprint(DefaultUsageMaxJobs),
			func(_ *API, c *Collect) any { return &c.Usage.MaxJobs }, ifUsage(notNegativeJobs)},
		{"collect.usage.timestamps", "collect.usage.timestamps", "Export the time of the bucket a usage value is from as the sample timestamp (see docs/configuration.md for the staleness trade-off).", "",
			func(_ *API, c *Collect) any { return &c.Usage.Timestamps }, nil},
	}...)
}

func ifUsage(c check) check {
	return func(p Project, v any) []string {
		if !p.Collect.Usage.Enabled {
			return nil
		}
		return c(p, v)
	}
}
