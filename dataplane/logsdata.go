package dataplane

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/clouddb/clouddb_exporter/fleet"
)

// PartLogs is the part of the opt-in log collector.
const PartLogs = "logs"

// logsOf returns the log collector's data in s, nil when it has none.
func logsOf(s *fleet.Snapshot) *Logs { return fleet.DataOf[Logs](s, PartLogs) }

// Logs is what the log collector has counted of a project's services.
type Logs struct {
	// Counts are each service's, by service id.
	Counts         []*ServiceLogs
	PagesTruncated float64
	Late           float64
	SkippedSeconds float64
	EntriesSkipped float64
	// SkewSkipped are entries sent from before a read's window.
	SkewSkipped float64
	// PageCapSkipped is a lower bound of the entries the page cap left.
	PageCapSkipped float64
	// ReadPeriod is how often each selected service's logs are read at the
	// call budget: the log interval, or longer when the budget falls short.
	ReadPeriod time.Duration
}

// LogSeverities are the severities counted, by name: PostgreSQL's, and
// OTHER for any other. ServiceLogs holds its counts in this order.
var LogSeverities = [...]string{"DEBUG", "DEBUG1", "DEBUG2", "DEBUG3", "DEBUG4", "DEBUG5",
	"ERROR", "FATAL", "INFO", "LOG", "NOTICE", "OTHER", "PANIC", "WARNING"}

// LogSeverityIndex returns the index of severity in LogSeverities, or -1.
func LogSeverityIndex(severity string) int {
	if i, ok := slices.BinarySearch(LogSeverities[:], severity); ok {
		return i
	}
	return -1
}

// ServiceLogs is how many log entries of each severity a service has
// written. Its maker shares it with the publishes until the counts change,
// then counts in a copy: a count a severity in a list took 24 bytes, 170
// a service a publish (10,000 services, a publish every 5 s of a read).
// Counts are whole numbers, held as 32 bits each (80 bytes, a size class,
// where float64s took 128), and as float64s in wide from the first that
// is not a uint32 on.
type ServiceLogs struct {
	service *string
	wide    *[numSeverities]float64
	// A bit a severity counted: only those are published.
	has uint16
	n   [numSeverities]uint32
}

// NewServiceLogs returns a service's counts, none yet; serviceID is kept.
func NewServiceLogs(serviceID *string) *ServiceLogs { return &ServiceLogs{service: serviceID} }

// Clone returns a copy to change.
func (s *ServiceLogs) Clone() *ServiceLogs {
	c := *s
	if s.wide != nil {
		wide := *s.wide
		c.wide = &wide
	}
	return &c
}

// Set sets the count of LogSeverities[i].
func (s *ServiceLogs) Set(i int, n float64) {
	s.has |= 1 << i
	if s.wide == nil {
		if u := uint32(n); float64(u) == n && !math.Signbit(n) {
			s.n[i] = u
			return
		}
		s.wide = new([numSeverities]float64)
		for j, u := range s.n {
			s.wide[j] = float64(u)
		}
	}
	s.wide[i] = n
}

// Count returns the count of LogSeverities[i] and whether it is counted.
func (s *ServiceLogs) Count(i int) (float64, bool) {
	counted := s.has&(1<<i) != 0
	if s.wide != nil {
		return s.wide[i], counted
	}
	return float64(s.n[i]), counted
}

// ServiceID returns the id of the service counted.
func (s *ServiceLogs) ServiceID() string { return *s.service }

// Equal compares the counts' values: their ids may be kept apart.
func (s *ServiceLogs) Equal(t *ServiceLogs) bool {
	switch {
	case s == t:
		return true
	case *s.service != *t.service || s.has != t.has:
		return false
	case s.wide == nil && t.wide == nil:
		return s.n == t.n
	}
	for i := range numSeverities {
		a, _ := s.Count(i)
		if b, _ := t.Count(i); a != b {
			return false
		}
	}
	return true
}

// String names the counts in test failures.
func (s *ServiceLogs) String() string {
	var b strings.Builder
	b.WriteString("{" + s.ServiceID())
	for i, sev := range LogSeverities {
		if n, ok := s.Count(i); ok {
			fmt.Fprintf(&b, " %s=%g", sev, n)
		}
	}
	return b.String() + "}"
}
