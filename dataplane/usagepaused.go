package dataplane

import (
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
func withoutPaused(u *Usage, paused map[string]bool) *Usage {
	if u == nil || len(u.Services) == 0 || len(paused) == 0 {
		return u
	}
	out := *u
	out.Services = make([]*UsageService, 0, len(u.Services))
	for _, svc := range u.Services {
		if !paused[svc.ID] {
			out.Services = append(out.Services, svc)
			continue
		}
		if jobs := nodeless(svc); len(jobs.Points) > 0 {
			out.Services = append(out.Services, jobs)
		}
	}
	return &out
}

// nodeless returns svc itself when it has only job samples, never a
// modified svc.
func nodeless(svc *UsageService) *UsageService {
	return filtered(svc, func(p UsagePoint) bool { return p.Labels.JobID() != "" })
}

// forgetPaused: a service that resumes shows no value from before its pause.
func (u *usageReader) forgetPaused() {
	for id := range u.paused {
		svc := u.services[id]
		if svc == nil || svc.pub == nil {
			continue
		}
		if jobs := nodeless(svc.pub); jobs != svc.pub {
			svc.pub, svc.shared = jobs, false
			if len(jobs.Points) == 0 {
				svc.pub = nil
			}
		}
	}
}
