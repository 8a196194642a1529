package dataplane

import (
	"slices"

	"github.com/clouddb/clouddb_exporter/collector"
	"github.com/clouddb/clouddb_exporter/fleet"
)

var (
	logEntriesDesc = collector.NewCounterDesc("clouddb_service_log_entries_total",
		"Log entries a database service wrote since the exporter started reading its logs (opt-in, --collect.logs), by severity: PostgreSQL's, upper case; any other is OTHER. Counted from the API's service logs, each entry once across pages and reads; no entry before the first read is counted. Cached from the last log read.",
		"project_id", "service_id", "severity")
	logPagesTruncatedDesc = collector.NewCounterDesc("clouddb_exporter_log_pages_truncated_total",
		"Reads of one service's new log entries that left some uncounted: they hit --collect.logs.max-pages (the older entries of that interval), the API sent a page again (a repeated or ignored cursor), or a page held an entry over --api.max-value-size (the whole interval, skipped). Cached from the last log read.",
		"project_id")
	logEntriesLateDesc = collector.NewCounterDesc("clouddb_exporter_log_entries_late_total",
		"Log entries that arrived after a read had passed their timestamp (older than the newest entry counted of their service): counted in clouddb_service_log_entries_total at the next read when at most one --collect.logs.interval older than that newest entry, not seen at all when older still (see --collect.logs.delay). Cached from the last log read.",
		"project_id")
	logSkippedDesc = collector.NewCounterDesc("clouddb_exporter_log_skipped_seconds_total",
		"Seconds of log time not read when the log collector resumed from a --state.file position older than the resume bound (1h): the entries of that span are not counted. Cached from the last log read.",
		"project_id")
	logEntriesSkippedDesc = collector.NewCounterDesc("clouddb_exporter_log_entries_skipped_total",
		"Log entries read but not counted in clouddb_service_log_entries_total, by reason. start: written in the --collect.logs.interval before the log collector started counting a service without a --state.file position, read once at start (one page at most), a lower bound of the entries a restart lost. clock_skew: sent by a read but stamped before its window, which is in the API's clock (clouddb_api_clock_skew_seconds): the API's clock or its filter is off by more than measured. page_cap: in the page after a read's --collect.logs.max-pages, read to count them (one page: 500 when full, and at least that many were left; the read is counted in clouddb_exporter_log_pages_truncated_total). Cached from the last log read.",
		"project_id", "reason")
	logReadPeriodDesc = collector.NewDesc("clouddb_exporter_log_read_period_seconds",
		"How often each selected service's logs in a project are read at the call budget the state calls leave, in seconds: --collect.logs.interval when the budget suffices, longer when it cannot read every selected service once an interval (a WARN gives the fix); set before the first read returns. Cached from the last log read.",
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
