package dataplane

import (
	"slices"

	"github.com/clouddb/clouddb_exporter/collector"
	"github.com/clouddb/clouddb_exporter/fleet"
)

var (
	logEntriesDesc = collector.NewCounterDesc("clouddb_service_log_entries_total",
		"Log entries of a database service, by severity.",
		"project_id", "service_id", "severity")
	logPagesTruncatedDesc = collector.NewCounterDesc("clouddb_exporter_log_pages_truncated_total",
		"Reads of a service's new log entries that left some uncounted.",
		"project_id")
	logEntriesLateDesc = collector.NewCounterDesc("clouddb_exporter_log_entries_late_total",
		"Log entries that arrived after a read had passed their timestamp.",
		"project_id")
	logSkippedDesc = collector.NewCounterDesc("clouddb_exporter_log_skipped_seconds_total",
		"Log time not read on resuming from an old state file position, in seconds.",
		"project_id")
	logEntriesSkippedDesc = collector.NewCounterDesc("clouddb_exporter_log_entries_skipped_total",
		"Log entries read but not counted, by reason.",
		"project_id", "reason")
	logReadPeriodDesc = collector.NewDesc("clouddb_exporter_log_read_period_seconds",
		"How often each selected service's logs are read at the call budget, in seconds.",
		"project_id")
)

func registerLogsMetrics() {
	counts := collector.ListGroup(PartLogs, func(l *Logs) []*ServiceLogs { return l.Counts },
		func(c **ServiceLogs) collector.Key { return collector.Key{(*c).ServiceID()} },
		func(_ *Logs, c []*ServiceLogs) *Logs { return &Logs{Counts: c} }, collectLogs)
	counts.Equal = equalLogs
	totals := collector.DataGroup(PartLogs, func(s *fleet.Snapshot) any {
		l := logsOf(s)
		return &Logs{PagesTruncated: l.PagesTruncated, Late: l.Late, SkippedSeconds: l.SkippedSeconds, EntriesSkipped: l.EntriesSkipped, SkewSkipped: l.SkewSkipped, PageCapSkipped: l.PageCapSkipped,
			ReadPeriod: l.ReadPeriod}
	}, collectLogsTotals)
	collector.RegisterPart(PartLogs, []*collector.Desc{logEntriesDesc, logPagesTruncatedDesc, logEntriesLateDesc, logSkippedDesc, logEntriesSkippedDesc, logReadPeriodDesc}, counts, totals)
}

func collectLogs(out *collector.Sink, s *fleet.Snapshot) {
	l := logsOf(s)
	if l == nil {
		return
	}
	for _, c := range l.Counts {
		for i, sev := range LogSeverities {
			if n, ok := c.Count(i); ok {
				out.Gauge(logEntriesDesc, n, s.ProjectID, c.ServiceID(), sev)
			}
		}
	}
}

func equalLogs(a, b *fleet.Snapshot) bool {
	return a.ProjectID == b.ProjectID && slices.EqualFunc(logsOf(a).Counts, logsOf(b).Counts, (*ServiceLogs).Equal)
}

func collectLogsTotals(out *collector.Sink, s *fleet.Snapshot) {
	if l := logsOf(s); l != nil {
		out.Gauge(logPagesTruncatedDesc, l.PagesTruncated, s.ProjectID)
		out.Gauge(logEntriesLateDesc, l.Late, s.ProjectID)
		out.Gauge(logSkippedDesc, l.SkippedSeconds, s.ProjectID)
		out.Gauge(logEntriesSkippedDesc, l.EntriesSkipped, s.ProjectID, "start")
		out.Gauge(logEntriesSkippedDesc, l.SkewSkipped, s.ProjectID, "clock_skew")
		out.Gauge(logEntriesSkippedDesc, l.PageCapSkipped, s.ProjectID, "page_cap")
		out.Gauge(logReadPeriodDesc, l.ReadPeriod.Seconds(), s.ProjectID)
	}
}
