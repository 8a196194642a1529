package dataplane

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"
	"unique"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// match finds for each suffix the first available name ending in it.
func (u *usageReader) match(names []string) []string {
	var out []string
	for i, suf := range u.suffixes {
		for _, n := range names {
			if strings.HasSuffix(n, suf) && len(n) > len(suf) {
				if out == nil {
					out = make([]string, len(u.suffixes))
				}
				// Most answers name their series alike: one copy of each name.
				out[i] = unique.Make(n).Value()
				break
			}
		}
	}
	if out == nil {
		return nil
	}
	// And one list of them for the services that have the same.
	key := strings.Join(out, "\x00")
	if shared, ok := u.nameSets[key]; ok {
		return shared
	}
	if len(u.nameSets) >= maxNameSets {
		clear(u.nameSets)
	}
	u.nameSets[key] = out
	return out
}

// maxNameSets: an API may name each service's series its own way.
const maxNameSets = 64

// newestBuckets keeps each label set's newest bucket with a value. Label
// sets that differ only in labels not exported are one series (the first
// wins a tie), so that none is exported twice; only the maxJobs lowest job
// ids are kept, over counts the rest.
func newestBuckets(series []apiclient.Series, maxJobs int) (out []fleet.UsagePoint, over int) {
	type key struct{ role, ordinal, job string }
	index := map[key]int{}
	// Kept until the next read: no room to spare.
	out = make([]fleet.UsagePoint, 0, len(series))
	for _, s := range series {
		var best *apiclient.SeriesPoint
		for i := range s.Data {
			p := &s.Data[i]
			if p.Value.Valid && !p.Time.IsZero() && (best == nil || p.Time.After(best.Time.Time)) {
				best = p
			}
		}
		if best == nil {
			continue
		}
		k := key{s.Labels[apiclient.LabelRole], s.Labels[apiclient.LabelOrdinal], s.Labels[apiclient.LabelJobID]}
		smp := fleet.UsagePoint{Labels: fleet.NewUsageLabels(k.role, k.ordinal, k.job), Value: best.Value.Value, Bucket: fleet.BucketOf(best.Time.Time)}
		if i, ok := index[k]; ok {
			if smp.Bucket > out[i].Bucket {
				out[i] = smp
			}
			continue
		}
		index[k] = len(out)
		out = append(out, smp)
	}
	jobs := map[string]bool{}
	for _, smp := range out {
		if job := smp.Labels.JobID(); job != "" {
			jobs[job] = true
		}
	}
	if len(jobs) <= maxJobs {
		return out, 0
	}
	ids := slices.SortedFunc(maps.Keys(jobs), compareJobIDs)
	for _, id := range ids[maxJobs:] {
		delete(jobs, id)
	}
	out = slices.DeleteFunc(out, func(smp fleet.UsagePoint) bool { job := smp.Labels.JobID(); return job != "" && !jobs[job] })
	return slices.Clip(out), len(ids) - maxJobs
}

func (u *usageReader) publishUsage(start, end time.Time, failures int, unsupported bool) {
	u.publish(u.fill(unsupported), start, end, failures)
}

// showPeriod publishes a new refresh period before the reads: at a short
// budget they take the whole interval, and the first would show none.
func (u *usageReader) showPeriod() {
	if max(u.warnedCycles, 1) != u.shownCycles {
		u.publishData(u.fill(false))
	}
}

// fill makes the usage without the paused services once a paused set.
func (u *usageReader) fill(unsupported bool) func(*fleet.Snapshot) {
	usage := u.build(unsupported)
	var paused map[string]bool
	last := usage
	return func(s *fleet.Snapshot) {
		now := pausedServices(s.Services)
		if !maps.Equal(now, paused) {
			paused, last = now, withoutPaused(usage, now)
		}
		s.SetData(fleet.PartUsage, last)
	}
}

// build runs during a read: it makes nothing per series but the list's header.
func (u *usageReader) build(unsupported bool) *fleet.Usage {
	u.shownCycles = max(u.warnedCycles, 1)
	usage := &fleet.Usage{Timestamps: u.cfg.Timestamps, RefreshPeriod: time.Duration(u.shownCycles) * u.cfg.Interval}
	if unsupported {
		return usage
	}
	// By service id, then suffix: the exposition chunks them so.
	ids := u.sortedIDs()
	usage.Series = make([]*fleet.UsageSeries, 0, u.published)
	var jobs jobSet
	for _, id := range ids {
		svc := u.services[id]
		if len(svc.series) == 0 {
			continue
		}
		jobs.reset()
		over := 0
		for _, i := range u.order {
			over = max(over, int(svc.series[i].jobsOver))
			if pub := u.withinMaxJobs(&svc.pub[i], &jobs); len(pub.Samples) > 0 {
				usage.Series = append(usage.Series, pub)
			}
		}
		svc.shared = true
		// The job series of a service share their jobs, as a rule.
		usage.JobsOverLimit += max(over, len(jobs.over))
	}
	u.published = len(usage.Series)
	return usage
}

// jobSet: a few ids each, so slices rather than maps.
type jobSet struct{ kept, over []string }

func (j *jobSet) reset() { j.kept, j.over = j.kept[:0], j.over[:0] }

// withinMaxJobs returns ser itself (a publish shares it) unless a job is cut.
func (u *usageReader) withinMaxJobs(ser *fleet.UsageSeries, jobs *jobSet) *fleet.UsageSeries {
	list := ser.Samples
	var filtered []fleet.UsagePoint // nil while nothing is left out
	for i, s := range list {
		if job := s.Labels.JobID(); job != "" {
			if !slices.Contains(jobs.kept, job) && len(jobs.kept) >= u.cfg.MaxJobs {
				if !slices.Contains(jobs.over, job) {
					jobs.over = append(jobs.over, job)
				}
				if filtered == nil {
					filtered = slices.Clone(list[:i])
				}
				continue
			}
			if !slices.Contains(jobs.kept, job) {
				jobs.kept = append(jobs.kept, job)
			}
		}
		if filtered != nil {
			filtered = append(filtered, s)
		}
	}
	if filtered == nil {
		return ser
	}
	return &fleet.UsageSeries{ServiceID: ser.ServiceID, Suffix: ser.Suffix, Samples: filtered}
}

// compareJobIDs orders numeric ids by number, whatever their width.
func compareJobIDs(a, b string) int {
	return cmp.Or(cmp.Compare(len(a), len(b)), cmp.Compare(a, b))
}
