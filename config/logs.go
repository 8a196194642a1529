package config

import "time"

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
	// StateFile keeps the counting's positions of every project across
	// restarts; "" keeps none. A flag only: one file holds every project.
	StateFile string
}
