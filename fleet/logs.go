package fleet

// PartLogs is the part of the opt-in log collector, reported beside Parts
// when it is on.
const PartLogs = "logs"

// Logs is what the log collector has counted of a project's services. It
// is immutable once published.
type Logs struct {
	// Counts are sorted by ServiceID, then Severity.
	Counts []LogCount
	// PagesTruncated counts the reads that hit the page cap.
	PagesTruncated float64
	// Late counts the entries counted after a read had passed their
	// timestamp (they arrived late).
	Late float64
	// SkippedSeconds counts the log time not read on resuming from a
	// saved position older than the resume bound.
	SkippedSeconds float64
	// EntriesSkipped counts the entries the first read of a service, after
	// a start without its saved position, saw in the interval before its
	// boundary: a lower bound of what the restart lost.
	EntriesSkipped float64
}

// LogCount is how many log entries of one severity a service has written
// since the collector started reading it.
type LogCount struct {
	ServiceID, Severity string
	Count               float64
}
