package dataplane

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/collector"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// Why a usage value is rejected: no node can have it. A rejected bucket
// counts as empty, so that the series keeps its newest possible value.
const (
	rejectNotFinite = "not_finite"
	rejectNegative  = "negative"
	rejectOverTotal = "over_total"
	rejectOverAny   = "over_any_node"
)

// overTotalFactor: usage above this many times the node's total is no
// measurement (a burst above the total is, by a little).
const overTotalFactor = 4

// anyNode bounds CPU and memory, usage and total, far beyond any machine
// (100,000 cores, 1 PiB): the check against the node's total needs that
// total selected and sane, and a total of 1e308 was taken as true.
var anyNode = map[string]float64{
	apiclient.SeriesCPUUsage:    1e8,
	apiclient.SeriesCPUTotal:    1e8,
	apiclient.SeriesMemoryUsage: 1 << 50,
	apiclient.SeriesMemoryTotal: 1 << 50,
}

// totalOf names the series of a node's total that bounds a usage series.
var totalOf = map[string]string{
	apiclient.SeriesCPUUsage:    apiclient.SeriesCPUTotal,
	apiclient.SeriesMemoryUsage: apiclient.SeriesMemoryTotal,
}

var valuesRejectedDesc = collector.NewCounterDesc("clouddb_exporter_api_values_rejected_total",
	"Values of API answers rejected because no resource can have them.",
	"project_id", "field", "reason")

// Rejected is one count of clouddb_exporter_api_values_rejected_total.
type Rejected struct {
	Field, Reason string
	N             float64
}

type rejectKey struct{ field, reason string }

// totalsFirst puts the reads of the nodes' totals first, each part in its
// order, and returns both parts, to be read in that order: parallel reads
// answer in any order, and a usage value applied before its node's total
// of a service's first read went unchecked (1e308 bytes of memory). It
// sorts tasks in place: two lists appended anew were kept while the read
// lasted (2.3 MB at 10,000 services).
func (u *usageReader) totalsFirst(tasks []usageTask) [2][]usageTask {
	totals := u.totals
	part := func(t usageTask) int { return 1 - int(totals>>t.idx&1) }
	slices.SortStableFunc(tasks, func(a, b usageTask) int { return part(a) - part(b) })
	n, _ := slices.BinarySearchFunc(tasks, 1, func(t usageTask, p int) int { return part(t) - p })
	return [2][]usageTask{tasks[:n], tasks[n:]}
}

// valueCheck returns why v cannot be the value of series suffix of the
// node (role, ordinal) of svc, or "".
func (u *usageReader) valueCheck(svc *usageService, suffix string) func(role, ordinal string, v float64) string {
	totals := u.nodeTotals(svc, suffix)
	limit, bounded := anyNode[suffix]
	return func(role, ordinal string, v float64) string {
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			return rejectNotFinite
		case v < 0:
			return rejectNegative
		}
		for _, p := range totals {
			if p.Labels.Role() == role && p.Labels.Ordinal() == ordinal && p.Value > 0 && v > overTotalFactor*p.Value {
				return rejectOverTotal
			}
		}
		if bounded && v > limit {
			return rejectOverAny
		}
		return ""
	}
}

// nodeTotals are the points of the total that bounds suffix, when it is
// selected and was read.
func (u *usageReader) nodeTotals(svc *usageService, suffix string) []UsagePoint {
	total, ok := totalOf[suffix]
	if !ok || svc.pub == nil {
		return nil
	}
	i, found := slices.BinarySearch(u.suffixes, total)
	if !found {
		return nil
	}
	return svc.pub.Series(i)
}

// reject counts a rejected value and warns once per field and reason.
func (u *usageReader) reject(serviceID, suffix, reason string, v float64) {
	k := rejectKey{strings.TrimPrefix(suffix, "_"), reason}
	if u.rejected == nil {
		u.rejected = map[rejectKey]float64{}
	}
	if _, seen := u.rejected[k]; !seen {
		u.logger.Warn("The API sent a usage value no node can have; it is not exported, the series keeps its newest possible bucket",
			"service_id", serviceID, "series", k.field, "value", v, "reason", reason,
			"counted_in", "clouddb_exporter_api_values_rejected_total")
	}
	u.rejected[k]++
}

// rejectedCounts are sorted, for a stable exposition.
func (u *usageReader) rejectedCounts() []Rejected {
	out := make([]Rejected, 0, len(u.rejected))
	for k, n := range u.rejected {
		out = append(out, Rejected{k.field, k.reason, n})
	}
	slices.SortFunc(out, func(a, b Rejected) int { return cmp.Or(cmp.Compare(a.Field, b.Field), cmp.Compare(a.Reason, b.Reason)) })
	return out
}

func collectRejected(out *collector.Sink, s *fleet.Snapshot, u *Usage) {
	for _, r := range u.Rejected {
		out.Gauge(valuesRejectedDesc, r.N, s.ProjectID, r.Field, r.Reason)
	}
}
