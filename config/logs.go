package config

import "time"

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
}
