package fleet

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
}

// LogCount is how many log entries of one severity a service has written.
type LogCount struct {
	ServiceID, Severity string
	Count               float64
}
