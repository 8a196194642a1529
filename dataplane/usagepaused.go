package dataplane

import (
	"slices"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// A paused service has no nodes; its job series say how the last run of
// each job went, which stays true.

func pausedServices(services []fleet.Service) map[string]bool {
	var paused map[string]bool
	for _, svc := range services {
		if svc.Status == apiclient.ServicePaused {
			if paused == nil {
				paused = map[string]bool{}
			}
			paused[svc.ServiceID] = true
		}
	}
	return paused
}

func isJobSeries(suffix string) bool {
	return suffix == apiclient.SeriesJobSuccess || suffix == apiclient.SeriesJobDuration
}

// withoutPaused returns u itself when no service is paused.
func withoutPaused(u *fleet.Usage, paused map[string]bool) *fleet.Usage {
	if u == nil || len(u.Series) == 0 || len(paused) == 0 {
		return u
	}
	out := *u
	out.Series = make([]*fleet.UsageSeries, 0, len(u.Series))
	for _, ser := range u.Series {
		if !paused[ser.ServiceID] {
			out.Series = append(out.Series, ser)
			continue
		}
		if jobs := nodeless(ser.Samples); len(jobs) > 0 {
			out.Series = append(out.Series, &fleet.UsageSeries{ServiceID: ser.ServiceID, Suffix: ser.Suffix, Samples: jobs})
		}
	}
	return &out
}

// nodeless returns list itself when it has only job samples, never a
// modified list.
func nodeless(list []fleet.UsagePoint) []fleet.UsagePoint {
	if !slices.ContainsFunc(list, func(s fleet.UsagePoint) bool { return s.Labels.JobID() == "" }) {
		return list
	}
	return slices.DeleteFunc(slices.Clone(list), func(s fleet.UsagePoint) bool { return s.Labels.JobID() == "" })
}

// forgetPaused: a service that resumes shows no value from before its pause.
func (u *usageReader) forgetPaused() {
	for id := range u.paused {
		svc := u.services[id]
		if svc == nil {
			continue
		}
		for i := range svc.pub {
			if list := svc.pub[i].Samples; len(list) > 0 {
				if jobs := nodeless(list); len(jobs) != len(list) {
					u.pubAt(svc, i).Samples = slices.Clip(jobs)
				}
			}
		}
	}
}
