package dataplane

import (
	"cmp"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
	"unique"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// match finds for each suffix the first available name ending in it.
func (u *usageReader) match(names []string) *[]string {
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
	u.nameSets[key] = &out
	return &out
}

// maxNameSets: an API may name each service's series its own way.
const maxNameSets = 64

// newestBuckets keeps each label set's newest bucket with a value that
// check (nil: any) accepts; a newer one it rejects goes to reject, once a
// label set. Label sets that differ only in labels not exported are one
// series (the first wins a tie), so that none is exported twice; only the
// maxJobs lowest job ids are kept, over counts the rest. It appends to out.
func newestBuckets(out []UsagePoint, series []apiclient.Series, maxJobs int, check func(role, ordinal string, v float64) string, reject func(reason string, v float64)) ([]UsagePoint, int) {
	type key struct{ role, ordinal, job string }
	index := map[key]int{}
	for _, s := range series {
		k := key{s.Labels[apiclient.LabelRole], s.Labels[apiclient.LabelOrdinal], s.Labels[apiclient.LabelJobID]}
		var best, newest *apiclient.SeriesPoint
		why := ""
		for i := range s.Data {
			p := &s.Data[i]
			if !p.Value.Valid || p.Time.IsZero() {
				continue
			}
			if newest == nil || p.Time.After(newest.Time.Time) {
				newest = p
			}
			if check != nil {
				if r := check(k.role, k.ordinal, p.Value.Value); r != "" {
					if p == newest {
						why = r
					}
					continue
				}
			}
			if best == nil || p.Time.After(best.Time.Time) {
				best = p
			}
		}
		if newest != best && why != "" && reject != nil {
			reject(why, newest.Value.Value)
		}
		if best == nil {
			continue
		}
		smp := UsagePoint{Labels: NewUsageLabels(k.role, k.ordinal, k.job), Value: best.Value.Value, Bucket: BucketOf(best.Time.Time)}
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
	out = slices.DeleteFunc(out, func(smp UsagePoint) bool { job := smp.Labels.JobID(); return job != "" && !jobs[job] })
	return out, len(ids) - maxJobs
}

// maxScratch: a hostile answer may hold thousands of points.
const maxScratch = 1024

// setPoints makes points series i's of svc: in place unless a publish holds
// svc.pub or the count changes. Ends is never modified in place, so that
// copies and services with as many points a series share it.
func (u *usageReader) setPoints(svc *usageService, i int, points []UsagePoint) {
	pub := svc.pub
	if pub == nil {
		if len(points) == 0 {
			return
		}
		pub = &UsageService{ID: svc.id, Ends: u.movedEnds(nil, 0, 0)}
		svc.pub, svc.shared = pub, false
	}
	start, end := 0, int(pub.Ends[i])
	if i > 0 {
		start = int(pub.Ends[i-1])
	}
	rest := len(pub.Points) - (end - start)
	// Ends are 16 bits: far more points than a service has.
	points = points[:min(len(points), math.MaxUint16-rest)]
	if !svc.shared && len(points) == end-start {
		copy(pub.Points[start:end], points)
		return
	}
	if rest+len(points) == 0 {
		svc.pub = nil
		return
	}
	next := make([]UsagePoint, 0, rest+len(points))
	next = append(append(append(next, pub.Points[:start]...), points...), pub.Points[end:]...)
	ends := pub.Ends
	if d := len(points) - (end - start); d != 0 {
		ends = u.movedEnds(ends, i, d)
	}
	if svc.shared {
		pub = &UsageService{ID: svc.id}
		svc.pub, svc.shared = pub, false
	}
	pub.Points, pub.Ends = next, ends
}

// maxEndSets: services' shapes are few, as a rule.
const maxEndSets = 256

// movedEnds returns ends (none: every series empty) with the ends of
// series i on moved by d, in a list shared by the services with the same
// (32 B a service): a service's ends were its own.
func (u *usageReader) movedEnds(ends []uint16, i, d int) []uint16 {
	key := u.endsKey[:0]
	for j := range u.suffixes {
		e := 0
		if j < len(ends) {
			e = int(ends[j])
		}
		if j >= i {
			e += d
		}
		key = append(key, byte(e), byte(e>>8))
	}
	u.endsKey = key
	if shared, ok := u.endSets[string(key)]; ok {
		return shared
	}
	out := make([]uint16, len(u.suffixes))
	for j := range out {
		out[j] = uint16(key[2*j]) | uint16(key[2*j+1])<<8
	}
	if u.endSets == nil || len(u.endSets) >= maxEndSets {
		u.endSets = map[string][]uint16{}
	}
	u.endSets[string(key)] = out
	return out
}

// filtered returns s itself when keep keeps every point (called once each,
// in order), else a copy of the points kept; never a modified s.
func filtered(s *UsageService, keep func(UsagePoint) bool) *UsageService {
	var out *UsageService
	start := 0
	for i, end := range s.Ends {
		for j := start; j < int(end) && j < len(s.Points); j++ {
			switch k := keep(s.Points[j]); {
			case k && out != nil:
				out.Points = append(out.Points, s.Points[j])
			case !k && out == nil:
				out = &UsageService{ID: s.ID, Points: append(make([]UsagePoint, 0, len(s.Points)), s.Points[:j]...),
					Ends: append(make([]uint16, 0, len(s.Ends)), s.Ends[:i]...)}
			}
		}
		if out != nil {
			out.Ends = append(out.Ends, uint16(len(out.Points)))
		}
		start = int(end)
	}
	if out == nil {
		return s
	}
	return out
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
		s.SetData(PartUsage, last)
	}
}

// build runs during a read: it makes nothing per service but a pointer.
func (u *usageReader) build(unsupported bool) *Usage {
	u.shownCycles = max(u.warnedCycles, 1)
	usage := &Usage{Suffixes: u.suffixes, Timestamps: u.cfg.Timestamps, RefreshPeriod: time.Duration(u.shownCycles) * u.cfg.Interval,
		Rejected: u.rejectedCounts()}
	if unsupported {
		return usage
	}
	// By service id: the exposition chunks them so.
	ids := u.sortedIDs()
	usage.Services = make([]*UsageService, 0, u.published)
	var jobs jobSet
	for _, id := range ids {
		svc := u.services[id]
		if len(svc.series) == 0 {
			continue
		}
		jobs.reset()
		over := 0
		for _, s := range svc.series {
			over = max(over, int(s.jobsOver))
		}
		if svc.pub != nil {
			if pub := u.withinMaxJobs(svc.pub, &jobs); len(pub.Points) > 0 {
				usage.Services = append(usage.Services, pub)
			}
			svc.shared = true
		}
		// The job series of a service share their jobs, as a rule.
		usage.JobsOverLimit += max(over, len(jobs.over))
	}
	u.published = len(usage.Services)
	return usage
}

// jobSet: a few ids each, so slices rather than maps.
type jobSet struct{ kept, over []string }

func (j *jobSet) reset() { j.kept, j.over = j.kept[:0], j.over[:0] }

// withinMaxJobs returns svc itself (a publish shares it) unless a job is cut.
func (u *usageReader) withinMaxJobs(svc *UsageService, jobs *jobSet) *UsageService {
	return filtered(svc, func(p UsagePoint) bool {
		job := p.Labels.JobID()
		switch {
		case job == "" || slices.Contains(jobs.kept, job):
			return true
		case len(jobs.kept) < u.cfg.MaxJobs:
			jobs.kept = append(jobs.kept, job)
			return true
		}
		if !slices.Contains(jobs.over, job) {
			jobs.over = append(jobs.over, job)
		}
		return false
	})
}

// compareJobIDs orders numeric ids by number, whatever their width.
func compareJobIDs(a, b string) int {
	return cmp.Or(cmp.Compare(len(a), len(b)), cmp.Compare(a, b))
}
