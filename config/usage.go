package config

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/internal/flagval"
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

// addUsageFlags registers the --collect.usage.* flags.
func addUsageFlags(app *kingpin.Application, u *Usage) {
	app.Flag("collect.usage", "Opt-in: read each selected service's usage series (CPU, memory, disk, I/O, queries, connections, jobs) from the API's usage time series, at a cost of one call per service and series every --collect.usage.interval (see docs/configuration.md).").
		Envar("CLOUDDB_COLLECT_USAGE").BoolVar(&u.Enabled)
	flagval.Duration(app, "collect.usage.interval", "Interval at which each selected usage series is read (at least 1m).",
		DefaultUsageInterval.String(), "CLOUDDB_COLLECT_USAGE_INTERVAL", &u.Interval)
	app.Flag("collect.usage.series", "Usage series to read, by the suffix the API's names end in (repeatable; default: every documented series).").
		Envar("CLOUDDB_COLLECT_USAGE_SERIES").StringsVar(&u.Series)
	addSelectionFlags(app, "usage", "USAGE", "Read the usage of", &u.Selection)
	flagval.Int(app, "collect.usage.max-jobs", "Job label sets exported per service; the rest are counted in clouddb_exporter_usage_jobs_over_limit.",
		fmt.Sprint(DefaultUsageMaxJobs), "CLOUDDB_COLLECT_USAGE_MAX_JOBS", &u.MaxJobs)
	app.Flag("collect.usage.timestamps", "Export the time of the bucket a usage value is from as the sample timestamp (see docs/configuration.md for the staleness trade-off).").
		Envar("CLOUDDB_COLLECT_USAGE_TIMESTAMPS").BoolVar(&u.Timestamps)
}

// validate checks the usage settings; where names a setting's origin.
// minInterval is MinUsageInterval unless a test lowers it.
func (u Usage) validate(where func(string) string, minInterval time.Duration) []error {
	var errs []error
	if !u.Enabled {
		return nil
	}
	if u.Interval < minInterval {
		errs = append(errs, fmt.Errorf("%s must be at least %s", where("usage_interval"), minInterval))
	}
	for _, s := range u.Series {
		switch {
		case strings.TrimSpace(s) == "":
			errs = append(errs, fmt.Errorf("%s must not hold an empty name", where("usage_series")))
		case !slices.Contains(DefaultUsageSeries, strings.TrimPrefix(s, "_")):
			// It would cost calls and export nothing: no metric has it.
			errs = append(errs, fmt.Errorf("%s: %q is not a documented usage series (one of %s)",
				where("usage_series"), s, strings.Join(DefaultUsageSeries, ", ")))
		}
	}
	if u.MaxJobs < 0 {
		errs = append(errs, fmt.Errorf("%s must not be negative", where("usage_max_jobs")))
	}
	errs = append(errs, u.Selection.validate(where, "usage")...)
	return errs
}

// SelectedSeries returns the series to read: Series, or every documented
// one when it is empty.
func (u Usage) SelectedSeries() []string {
	if len(u.Series) == 0 {
		return DefaultUsageSeries
	}
	return u.Series
}
