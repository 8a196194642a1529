package collector

import (
	"slices"
	"strings"

	"github.com/clouddb/clouddb_exporter/fleet"
)

// collectorSuccessDesc's HELP lists the parts: the state's, then the registered data parts'
// (set by allDescs once the registry closes).
var collectorSuccessDesc = newCollectorSuccessDesc(fleet.Parts)

func newCollectorSuccessDesc(parts []string) *Desc {
	return newDesc("clouddb_exporter_collector_success",
		"Whether the last poll of one part of a project ("+strings.Join(parts, ", ")+") succeeded completely (1) or not (0). Cached from the last poll of the API.",
		"project_id", "collector")
}

// withDataParts names the data parts in collectorSuccessDesc's HELP; the descriptor
// keeps its address, which the collect functions hold.
func withDataParts(parts []string) {
	*collectorSuccessDesc = *newCollectorSuccessDesc(slices.Concat(fleet.Parts, parts))
}

var (
	collectorDurationDesc = newDesc("clouddb_exporter_collector_duration_seconds",
		"How long the last poll of one part of a project took, in seconds. Cached from the last poll of the API.",
		"project_id", "collector")
	collectorLastSuccessDesc = newDesc("clouddb_exporter_collector_last_success_timestamp_seconds",
		"Unix seconds of the last poll of one part of a project that succeeded completely, 0 if none has. Cached from the last poll of the API.",
		"project_id", "collector")
	upDesc = newDesc("clouddb_up",
		"Whether the project's last services list, the call every poll cycle makes, was answered with success (1) or not (0): refused credentials, a wrong URL or project id, an unreachable or failing API (the log says which, once, with the fix). Absent before the first answer. Cached from the last poll of the API.",
		"project_id")
	projectDownCauseDesc = newDesc("clouddb_project_down_cause",
		"Why the project's last services list failed, as a state set: 1 for the cause (credentials: the key pair refused, 401; permission: the keys cannot read the project, 403; not_found: a wrong --api.url or project id, 404; unreachable: no HTTP answer; error: any other failure, the API's own), 0 for the others; all 0 while clouddb_up is 1. Absent before the first answer. Cached from the last poll of the API.",
		"project_id", "cause")
	clockSkewDesc = newDesc("clouddb_api_clock_skew_seconds",
		"The API's clock minus the exporter's in seconds, from the Date header of the project's newest answer against the middle of its request (0 within the header's one-second precision): the data-plane readers read log and usage times in the API's clock. Absent before the first answer. Cached from the last poll of the API.",
		"project_id")
	snapshotTimestampDesc = newDesc("clouddb_exporter_snapshot_timestamp_seconds",
		"Unix seconds of the newest data of a project that this exposition shows: the end of the project's last API call that succeeded. It stops advancing while no call succeeds (an outage, refused credentials), so time() minus it is how long the exporter has had nothing new from the API; 0 before the first success. Which parts are stale: clouddb_exporter_collector_last_success_timestamp_seconds.",
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
