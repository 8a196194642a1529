package config

import (
	"fmt"
	"regexp"
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
)

// Logs holds the settings of the opt-in log collector (docs/configuration.md).
type Logs struct {
	Enabled bool
	// Interval is how often each selected service's new entries are read.
	Interval time.Duration
	// Environments and ServiceNameRegex select services as for Usage.
	Environments     []string
	ServiceNameRegex string
	// MaxPages bounds the pages read per service per interval.
	MaxPages int
}

// addLogsFlags registers the --collect.logs.* flags.
func addLogsFlags(app *kingpin.Application, l *Logs) {
	app.Flag("collect.logs", "Opt-in: count each selected service's new log entries by severity (clouddb_service_log_entries_total), at a cost of at least one call per service every --collect.logs.interval (see docs/configuration.md).").
		Envar("CLOUDDB_COLLECT_LOGS").BoolVar(&l.Enabled)
	flagval.Duration(app, "collect.logs.interval", "Interval at which each selected service's new log entries are read (at least 10s).",
		DefaultLogsInterval.String(), "CLOUDDB_COLLECT_LOGS_INTERVAL", &l.Interval)
	app.Flag("collect.logs.environment", "Count the logs of services of this environment only (repeatable; default: every environment).").
		Envar("CLOUDDB_COLLECT_LOGS_ENVIRONMENT").StringsVar(&l.Environments)
	app.Flag("collect.logs.service-name-regex", "Count the logs of services whose name matches this regular expression only (anchored; default: every service).").
		Envar("CLOUDDB_COLLECT_LOGS_SERVICE_NAME_REGEX").StringVar(&l.ServiceNameRegex)
	flagval.Int(app, "collect.logs.max-pages", "Pages of 500 entries read per service per interval at most; beyond, the older entries of the interval are not counted and clouddb_exporter_log_pages_truncated_total says so.",
		fmt.Sprint(DefaultLogsMaxPages), "CLOUDDB_COLLECT_LOGS_MAX_PAGES", &l.MaxPages)
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
	if l.MaxPages < 1 {
		errs = append(errs, fmt.Errorf("%s must be at least 1", where("logs_max_pages")))
	}
	if _, err := regexp.Compile("^(?:" + l.ServiceNameRegex + ")$"); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", where("logs_service_name_regex"), err))
	}
	return errs
}

// NameMatcher returns the anchored service name regular expression; nil
// when every name is selected.
func (l Logs) NameMatcher() *regexp.Regexp {
	if l.ServiceNameRegex == "" {
		return nil
	}
	return regexp.MustCompile("^(?:" + l.ServiceNameRegex + ")$")
}
