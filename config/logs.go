package config

import (
	"fmt"
	"time"
)

// Defaults of the opt-in log collector.
const (
	DefaultLogsInterval = time.Minute
	MinLogsInterval     = 10 * time.Second
	DefaultLogsMaxPages = 5
	MaxLogsDelay        = time.Hour
)

// Logs holds the settings of the opt-in log collector.
type Logs struct {
	Enabled  bool
	Interval time.Duration
	Selection
	MaxPages int
	Delay    time.Duration
	// StateFile is a flag only: one file holds every project's positions.
	StateFile string
}

func init() {
	AddSettings([]Setting{
		{"collect.logs", "collect.logs.enabled", "Opt-in: count each selected service's new log entries by severity (clouddb_service_log_entries_total), at a cost of at least one call per service every --collect.logs.interval (see docs/configuration.md).", "",
			func(_ *API, c *Collect) any { return &c.Logs.Enabled }, nil},
		{"collect.logs.interval", "collect.logs.interval", "Interval at which each selected service's new log entries are read (at least 10s).", DefaultLogsInterval.String(),
			func(_ *API, c *Collect) any { return &c.Logs.Interval }, ifLogs(atLeastDataInterval(MinLogsInterval))},
		{"collect.logs.environment", "collect.logs.environments", "Count the logs of services of this environment only (PROD or DEV; repeatable; default: every environment).", "",
			func(_ *API, c *Collect) any { return &c.Logs.Environments }, ifLogs(environments)},
		{"collect.logs.service-name-regex", "collect.logs.service_name_regex", "Count the logs of services whose name matches this regular expression only (anchored; default: every service).", "",
			func(_ *API, c *Collect) any { return &c.Logs.ServiceNameRegex }, ifLogs(nameRegex)},
		{"collect.logs.max-pages", "collect.logs.max_pages", "Pages of 500 entries read per service per interval at most; beyond, the older entries of the interval are not counted and clouddb_exporter_log_pages_truncated_total says so.", fmt.Sprint(DefaultLogsMaxPages),
			func(_ *API, c *Collect) any { return &c.Logs.MaxPages }, ifLogs(atLeastOnePage)},
		{"collect.logs.delay", "collect.logs.delay", "How long before each read its entries end: entries the provider delivers later than this after their timestamp are not counted (see docs/configuration.md). Counts lag by as much.", "0s",
			func(_ *API, c *Collect) any { return &c.Logs.Delay }, ifLogs(logsDelay)},
		{"collect.logs.state-file", "", "File in which the log collector keeps, for every project and service, where its counting stands and its counts, so that a restart counts the entries written while it was down (up to 1h back) and the counters go on. Written atomically every 10s at most and at shutdown; its directory must exist and be writable. Default: none, and a restart loses the entries written while it was down (see docs/configuration.md).", "",
			func(_ *API, c *Collect) any { return &c.Logs.StateFile }, nil},
	}...)
}

func ifLogs(c check) check {
	return func(p Project, v any) []string {
		if !p.Collect.Logs.Enabled {
			return nil
		}
		return c(p, v)
	}
}
