package fleet

import (
	"fmt"
	"time"
)

// PartLogs is the part of the opt-in log collector.
const PartLogs = "logs"

// Logs returns the log collector's data in s, nil when it has none.
func (s *Snapshot) Logs() *Logs { return DataOf[Logs](s, PartLogs) }

// Logs is what the log collector has counted of a project's services.
type Logs struct {
	Counts         []LogCount
	PagesTruncated float64
	Late           float64
	SkippedSeconds float64
	EntriesSkipped float64
	// ReadPeriod is how often each selected service's logs are read at the
	// call budget: the log interval, or longer when the budget falls short.
	ReadPeriod time.Duration
}

// LogCount is how many log entries of one severity a service has written.
// Its ids are pointers to strings its maker keeps once: 24 bytes, not 40
// (70,000 counts at 10,000 services). unique.Make would keep some 300
// bytes a service id.
type LogCount struct {
	service, severity *string
	Count             float64
}

// NewLogCount returns the count of a service's entries of a severity.
func NewLogCount(serviceID, severity string, count float64) LogCount {
	return SharedLogCount(&serviceID, &severity, count)
}

// SharedLogCount is NewLogCount for ids its caller keeps and never changes.
func SharedLogCount(serviceID, severity *string, count float64) LogCount {
	return LogCount{service: serviceID, severity: severity, Count: count}
}

// ServiceID returns the id of the service counted.
func (c LogCount) ServiceID() string { return *c.service }

// Severity returns the severity counted.
func (c LogCount) Severity() string { return *c.severity }

// Equal compares the counts' values: their ids may be kept apart.
func (c LogCount) Equal(d LogCount) bool {
	return c.Count == d.Count && *c.service == *d.service && *c.severity == *d.severity
}

// String names the count in test failures.
func (c LogCount) String() string {
	return fmt.Sprintf("{%s %s %g}", c.ServiceID(), c.Severity(), c.Count)
}
