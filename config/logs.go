package config

import (
	"fmt"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/clouddb/clouddb_exporter/internal/flagval"
)

// Defaults of the opt-in log collector.
const (
	DefaultLogsInterval = time.Minute
	// MinLogsInterval is the shortest log interval.
	MinLogsInterval     = 10 * time.Second
	DefaultLogsMaxPages = 5
	// MaxLogsDelay is the longest log delay.
	MaxLogsDelay = time.Hour
)

// Logs holds the settings of the opt-in log collector (docs/configuration.md).
type Logs struct {
	Enabled bool
	// Interval is how often each selected service's new entries are read.
	Interval time.Duration
	// Selection picks the services whose logs are counted.
	Selection
	// MaxPages bounds the pages read per service per interval.
	MaxPages int
	// Delay is how long before each read its entries end, so that entries
	// the provider delivers late are still counted.
	Delay time.Duration
	// StateFile is where the counting's positions of every project are
	// kept across restarts; "" keeps none. A flag only: one file holds
	// every project.
	StateFile string
}

// addLogsFlags registers the --collect.logs.* flags.
func addLogsFlags(app *kingpin.Application, l *Logs) {
	app.Flag("collect.logs", "Opt-in: count each selected service's new log entries by severity (clouddb_service_log_entries_total), at a cost of at least one call per service every --collect.logs.interval (see docs/configuration.md).").
		Envar("CLOUDDB_COLLECT_LOGS").BoolVar(&l.Enabled)
	flagval.Duration(app, "collect.logs.interval", "Interval at which each selected service's new log entries are read (at least 10s).",
		DefaultLogsInterval.String(), "CLOUDDB_COLLECT_LOGS_INTERVAL", &l.Interval)
	addSelectionFlags(app, "logs", "LOGS", "Count the logs of", &l.Selection)
	flagval.Int(app, "collect.logs.max-pages", "Pages of 500 entries read per service per interval at most; beyond, the older entries of the interval are not counted and clouddb_exporter_log_pages_truncated_total says so.",
		fmt.Sprint(DefaultLogsMaxPages), "CLOUDDB_COLLECT_LOGS_MAX_PAGES", &l.MaxPages)
	flagval.Duration(app, "collect.logs.delay", "How long before each read its entries end: entries the provider delivers later than this after their timestamp are not counted (see docs/configuration.md). Counts lag by as much.",
		"0s", "CLOUDDB_COLLECT_LOGS_DELAY", &l.Delay)
	app.Flag("collect.logs.state-file", "File in which the log collector keeps, for every project and service, where its counting stands and its counts, so that a restart counts the entries written while it was down (up to 1h back) and the counters go on. Written atomically every 10s at most and at shutdown; its directory must exist and be writable. Default: none, and a restart loses the entries written while it was down (see docs/configuration.md).").
		Envar("CLOUDDB_COLLECT_LOGS_STATE_FILE").StringVar(&l.StateFile)
}

// validate checks the log settings; where names a setting's origin.
func (l Logs) validate(where func(string) string, minInterval time.Duration) []error {
	if !l.Enabled {
		return nil
	}
	var errs []error
	if l.Interval < minInterval {
		errs = append(errs, fmt.Errorf("%s must be at least %s", where("logs_interval"), minInterval))
	}
	if l.Delay < 0 || l.Delay > MaxLogsDelay {
		errs = append(errs, fmt.Errorf("%s must be between 0s and %s", where("logs_delay"), MaxLogsDelay))
	}
	if l.MaxPages < 1 {
		errs = append(errs, fmt.Errorf("%s must be at least 1", where("logs_max_pages")))
	}
	errs = append(errs, l.Selection.validate(where, "logs")...)
	return errs
}
