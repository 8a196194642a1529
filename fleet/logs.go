package fleet

// PartLogs is the part of the opt-in log collector.
const PartLogs = "logs"

// Logs returns the log collector's data in s, nil when it has none.
func (s *Snapshot) Logs() *Logs { return DataOf[Logs](s, PartLogs) }

// Logs is what the log collector has counted of a project's services.
type Logs struct {
	// Sorted by ServiceID, then Severity.
	Counts         []LogCount
	PagesTruncated float64
	// Entries counted after a read had passed their timestamp.
	Late float64
	// Log time not read on resuming from a saved position older than the bound.
	SkippedSeconds float64
	// EntriesSkipped counts the entries the first read of a service, after
	// a start without its saved position, saw in the interval before its
	// boundary: a lower bound of what the restart lost.
	EntriesSkipped float64
}

// LogCount is how many log entries of one severity a service has written.
type LogCount struct {
	ServiceID, Severity string
	Count               float64
}
