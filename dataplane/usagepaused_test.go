package dataplane

import (
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// TestUsagePausedServiceDropsNodeSeries: once the state says a service is
// PAUSED, the next snapshot has none of its node series (a paused service
// has no nodes), without waiting for a usage read; its job series, which
// tell how the last run went, stay. Its node series are not read while it
// is paused, and do not come back with their old values when it resumes.
func TestUsagePausedServiceDropsNodeSeries(t *testing.T) {
	h := newUsageHarness(t, 2, 0, usageSettings{Series: []string{"system_cpu_usage_millicores", "database_job_success"}},
		"x_system_cpu_usage_millicores", "x_database_job_success")
	now := h.clock.Now().Truncate(time.Minute)
	h.fu.series["x_system_cpu_usage_millicores"] = []apiclient.Series{{Labels: apiclient.SeriesLabels{"role": "primary", "ordinal": "0"}, Data: []apiclient.SeriesPoint{point(now, f64(950))}}}
	h.fu.series["x_database_job_success"] = []apiclient.Series{{Labels: apiclient.SeriesLabels{"role": "primary", "ordinal": "0", "job_id": "1"}, Data: []apiclient.SeriesPoint{point(now, f64(1))}}}
	h.tick()
	setStatus := func(status string) {
		h.host.setServices(func(list []fleet.Service) []fleet.Service {
			list[1].Status = status
			return list
		})
	}
	setStatus(apiclient.ServicePaused)
	paused := usageOf(h.host.Snapshot())
	if got := series(paused); got != "svc00 job, svc00 cpu, svc01 job" {
		t.Errorf("the snapshot after svc01 is PAUSED has %s, want svc01's node series gone", got)
	}
	// The poller publishes many snapshots a cycle: with the same services
	// paused, each holds the same usage, not a new list of every series.
	if again := usageOf(h.host.Snapshot()); again != paused {
		t.Error("a second snapshot with the same paused services made the usage without them again")
	}
	h.clock.Advance(5 * time.Minute)
	asked := len(h.fu.asked)
	h.tick()
	if n := len(h.fu.asked) - asked; n != 3 {
		t.Errorf("%d series reads with svc01 paused, want 3 (its node series not read)", n)
	}
	setStatus(apiclient.ServiceResuming)
	if got := series(usageOf(h.host.Snapshot())); got != "svc00 job, svc00 cpu, svc01 job" {
		t.Errorf("svc01 resuming, before a read: %s, want its old node values not back", got)
	}
}

// series names the usage's series by service and kind.
func series(u *Usage) string {
	var out string
	for _, svc := range u.Services {
		for i := range u.Suffixes {
			points := svc.Series(i)
			if len(points) == 0 {
				continue
			}
			kind := "cpu"
			if points[0].Labels.JobID() != "" {
				kind = "job"
			}
			if out != "" {
				out += ", "
			}
			out += svc.ID + " " + kind
		}
	}
	return out
}
