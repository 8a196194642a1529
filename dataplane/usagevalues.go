package dataplane

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// match finds, for each selected suffix in order, the first available
// name that ends in it (see availability.names); nil when none does.
// Names the collector does not select are ignored.
func (u *usageReader) match(names []string) []string {
	var out []string
	for i, suf := range u.suffixes {
		for _, n := range names {
			if strings.HasSuffix(n, suf) && len(n) > len(suf) {
				if out == nil {
					out = make([]string, len(u.suffixes))
				}
				out[i] = n
				break
			}
		}
	}
	return out
}

// newestBuckets keeps, for each label set of an answer, the newest bucket
// with a value; a label set whose window is all null is left out. Label
// sets that differ only in labels the exporter does not export (an extra
// zone, say) are one series: the newest bucket of them wins, the first in
// the answer on a tie, so that no series is exported twice. Of the job ids,
// only the maxJobs lowest are kept; over is how many more there were.
func newestBuckets(t usageTask, series []apiclient.Series, maxJobs int) (out []fleet.UsageSample, over int) {
	type key struct{ role, ordinal, job string }
	index := map[key]int{}
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
		smp := fleet.UsageSample{
			ServiceID: t.serviceID, Suffix: t.suffix, Role: k.role, Ordinal: k.ordinal, JobID: k.job,
			Value: best.Value.Value, Bucket: best.Time.Time,
		}
		if i, ok := index[k]; ok {
			if smp.Bucket.After(out[i].Bucket) {
				out[i] = smp
			}
			continue
		}
		index[k] = len(out)
		out = append(out, smp)
	}
	jobs := map[string]bool{}
	for _, smp := range out {
		if smp.JobID != "" {
			jobs[smp.JobID] = true
		}
	}
	if len(jobs) <= maxJobs {
		return out, 0
	}
	ids := slices.SortedFunc(maps.Keys(jobs), compareJobIDs)
	for _, id := range ids[maxJobs:] {
		delete(jobs, id)
	}
	out = slices.DeleteFunc(out, func(smp fleet.UsageSample) bool { return smp.JobID != "" && !jobs[smp.JobID] })
	return slices.Clip(out), len(ids) - maxJobs
}

// publishUsage publishes the last values with the part's health.
func (u *usageReader) publishUsage(start, end time.Time, failures int, unsupported bool) {
	u.publish(u.fill(unsupported), start, end, failures)
}

// fill returns what puts the last values into a snapshot.
func (u *usageReader) fill(unsupported bool) func(*fleet.Snapshot) {
	usage := u.build(unsupported)
	return func(s *fleet.Snapshot) { s.Usage = withoutPaused(usage, s.Services) }
}

// build makes the project's usage from the last values.
func (u *usageReader) build(unsupported bool) *fleet.Usage {
	usage := &fleet.Usage{Timestamps: u.cfg.Timestamps, RefreshPeriod: time.Duration(max(u.warnedCycles, 1)) * u.cfg.Interval}
	if !unsupported {
		// By service id, then suffix: the exposition chunks them so. Each
		// list is the series' own (apply replaces it, never modifies it),
		// copied only when max-jobs leaves some of its jobs out.
		keys := slices.SortedFunc(maps.Keys(u.series), compareSeriesKeys)
		usage.Series = make([][]fleet.UsageSample, 0, len(keys))
		jobs := map[string]map[string]bool{} // service -> job ids kept
		over := map[string]map[string]bool{} // service -> job ids left out
		for _, k := range keys {
			list := u.series[k].values
			if len(list) == 0 {
				continue
			}
			var filtered []fleet.UsageSample // nil while nothing is left out
			for i, s := range list {
				if s.JobID != "" {
					kept := jobs[s.ServiceID]
					if kept == nil {
						kept = map[string]bool{}
						jobs[s.ServiceID] = kept
					}
					if !kept[s.JobID] && len(kept) >= u.cfg.MaxJobs {
						if over[s.ServiceID] == nil {
							over[s.ServiceID] = map[string]bool{}
						}
						over[s.ServiceID][s.JobID] = true
						if filtered == nil {
							filtered = slices.Clone(list[:i])
						}
						continue
					}
					kept[s.JobID] = true
				}
				if filtered != nil {
					filtered = append(filtered, s)
				}
			}
			switch {
			case filtered == nil:
				usage.Series = append(usage.Series, list)
			case len(filtered) > 0:
				usage.Series = append(usage.Series, filtered)
			}
		}
		// The job series of a service have the same jobs, as a rule: the
		// larger count of those left out of one answer or across answers.
		counted := map[string]int{}
		for k, s := range u.series {
			if s.jobsOver > 0 {
				counted[k.serviceID] = max(counted[k.serviceID], s.jobsOver)
			}
		}
		for id, ids := range over {
			counted[id] = max(counted[id], len(ids))
		}
		for _, n := range counted {
			usage.JobsOverLimit += n
		}
	}
	return usage
}

// compareJobIDs orders job ids shortest first, then as text: numeric ids
// by number, so that max-jobs keeps the lowest ids whatever their width.
func compareJobIDs(a, b string) int {
	return cmp.Or(cmp.Compare(len(a), len(b)), cmp.Compare(a, b))
}
