package collector

import (
	"github.com/clouddb/clouddb_exporter/fleet"
)

var (
	collectorSuccessDesc = newDesc("clouddb_exporter_collector_success",
		"Whether the last poll of one part of a project succeeded completely.",
		"project_id", "collector")
	collectorDurationDesc = newDesc("clouddb_exporter_collector_duration_seconds",
		"Duration of the last poll of one part of a project, in seconds.",
		"project_id", "collector")
	collectorLastSuccessDesc = newDesc("clouddb_exporter_collector_last_success_timestamp_seconds",
		"Time of the last fully successful poll of a project's part, in Unix seconds.",
		"project_id", "collector")
	upDesc = newDesc("clouddb_up",
		"Whether the project's last services list was answered with success.",
		"project_id")
	projectDownCauseDesc = newDesc("clouddb_project_down_cause",
		"Why the project's last services list failed, 1 for the cause.",
		"project_id", "cause")
	clockSkewDesc = newDesc("clouddb_api_clock_skew_seconds",
		"The API's clock minus the exporter's, in seconds.",
		"project_id")
	snapshotTimestampDesc = newDesc("clouddb_exporter_snapshot_timestamp_seconds",
		"Time of the newest data of a project served, in Unix seconds.",
		"project_id")
)

func collectHealth(out *Sink, s *fleet.Snapshot) {
	p := s.ProjectID
	for _, part := range s.Parts {
		out.gauge(collectorSuccessDesc, boolValue(part.Success), p, part.Name)
		out.gauge(collectorDurationDesc, part.Duration.Seconds(), p, part.Name)
		// 0, not absent: time() - 0 makes any staleness alert fire.
		lastSuccess := 0.0
		if !part.LastSuccess.IsZero() {
			lastSuccess = unixSeconds(part.LastSuccess)
		}
		out.gauge(collectorLastSuccessDesc, lastSuccess, p, part.Name)
	}
	read := 0.0
	if !s.Read.IsZero() {
		read = unixSeconds(s.Read)
	}
	out.gauge(snapshotTimestampDesc, read, p)
	if s.ClockSkewKnown {
		out.gauge(clockSkewDesc, s.ClockSkew.Seconds(), p)
	}
	if s.Access.Known {
		out.gauge(upDesc, boolValue(s.Access.Up), p)
		for _, cause := range fleet.AccessCauses {
			out.gauge(projectDownCauseDesc, boolValue(!s.Access.Up && s.Access.Cause == cause), p, cause)
		}
	}
}
