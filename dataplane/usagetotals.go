package dataplane

import (
	"hash/fnv"
	"hash/maphash"
	"io"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// The nodes' totals (_system_cpu_total_millicores and
// _system_memory_total_bytes) change only when their service changes
// shape: a resize, a node more or less or replaced, a pause. They were
// read every interval, 2 of the 15 calls a service. A total is read
// again when it is due:
//   - it was never read, or it exports nothing (a new service's first
//     buckets lag; a paused service's were forgotten), or fewer nodes than
//     another node series of the service (a node's bucket was lost);
//   - the service's shape changed, every interval until a read made an
//     interval and the API's lag after the change succeeded: the read
//     right after a change may still find the old size's buckets;
//   - once a totalsRefresh, at a second of the period that is the
//     service's own (totalsPhase), so that a fleet's totals fall due a few
//     a tick, as many each tick, and not all in one tick an hour after
//     the start: the budget's round-robin counts the calls due, and a
//     spike would flap its WARN.
//
// They are read every interval as the other series are with sample
// timestamps (an hour-old timestamp goes stale in Prometheus), or when
// no other node series is selected (the totals then are the nodes' only
// fresh bucket, clouddb_service_usage_bucket_timestamp_seconds).

// totalsRefresh is how often a total is read when nothing changes.
const totalsRefresh = availableSeriesTTL

// totalsMask has bit i set when suffixes[i] is a node's total; fewer
// than 64 series are documented.
func totalsMask(suffixes []string) uint64 {
	var mask uint64
	for i, suffix := range suffixes {
		for _, total := range totalOf {
			if suffix == total && i < 64 {
				mask |= 1 << i
			}
		}
	}
	return mask
}

// spacedTotals reports whether the totals of suffixes are read only when
// due: without sample timestamps and with another node series selected.
func spacedTotals(suffixes []string, timestamps bool) bool {
	if timestamps {
		return false
	}
	totals := totalsMask(suffixes)
	for i, suffix := range suffixes {
		if totals>>i&1 == 0 && !isJobSeries(suffix) {
			return totals != 0
		}
	}
	return false
}

// totalsPhase is the second of each totalsRefresh at which a service's
// totals and available series fall due: FNV-1a of its id, spread
// evenly over the period, the same in every process (a restart keeps the
// spread, and tests see one).
func totalsPhase(id string) uint16 {
	h := fnv.New32a()
	_, _ = io.WriteString(h, id)
	return uint16(h.Sum32() % uint32(totalsRefresh/time.Second))
}

// shapeSeed: shapes need only hold within one process.
var shapeSeed = maphash.MakeSeed()

// nextRefresh is the stamp at which a total or the available series read
// at stamp readAt fall due: the first of its service's phase at least
// half a period later, so that a read off the phase (the first, one after
// a change) is not followed by another within minutes.
func nextRefresh(phase uint16, readAt uint32) uint32 {
	period := int64(totalsRefresh / time.Second)
	at, read := int64(phase), int64(readAt)-1
	next := at + (read+period-at)/period*period
	if next-read < period/2 {
		next += period
	}
	return uint32(min(next+1, int64(^uint32(0))))
}

// settleSeconds: a read this long after a shape change finds the new
// shape's buckets (usageWindowSlack covers the API's lag).
func (u *usageReader) settleSeconds() uint32 {
	return uint32((u.cfg.Interval + usageWindowSlack) / time.Second)
}

// isTotal reports whether series i is a node's total read only when due.
func (u *usageReader) isTotal(i int) bool {
	return u.spaced && i < 64 && u.totals>>i&1 == 1
}

// due reports whether series i of svc is to be read at now: always, but
// for a total that is not due.
func (u *usageReader) due(svc *usageService, i int, now time.Time) bool {
	if !u.isTotal(i) || i >= len(svc.series) || svc.pub == nil || u.lacksNode(svc, i) {
		return true
	}
	s := svc.series[i]
	return s.readAt == 0 || s.readAt < u.settledAt(svc) || u.stamp(now) >= nextRefresh(svc.phase, s.readAt)
}

// lacksNode reports whether series i of svc exports fewer nodes than
// another of its node series: none yet, or a node whose bucket the last
// read lacked (one node per point of a node series).
func (u *usageReader) lacksNode(svc *usageService, i int) bool {
	n := len(svc.pub.Series(i))
	if n == 0 {
		return true
	}
	for j, suffix := range u.suffixes {
		if j != i && !isJobSeries(suffix) && len(svc.pub.Series(j)) > n {
			return true
		}
	}
	return false
}

// settledAt is the stamp from which a read of svc's totals follows its
// last shape change; 0 without one.
func (u *usageReader) settledAt(svc *usageService) uint32 {
	if svc.reshaped == 0 {
		return 0
	}
	return svc.reshaped + u.settleSeconds()
}

// staleFrom is the stamp from which series i of svc counts as not
// refreshed, which --collect.max-staleness measures: its last read, or
// for a total read since, when it fell due.
func (u *usageReader) staleFrom(svc *usageService, i int, s *usageSeries) uint32 {
	if !u.isTotal(i) || s.readAt == 0 {
		return s.readAt
	}
	if s.readAt < u.settledAt(svc) {
		return max(s.readAt, svc.reshaped)
	}
	return nextRefresh(svc.phase, s.readAt)
}

// observeShapes notes the shape of each selected service of snap: a
// change makes its totals due (see due). A service's first shape is no
// change: its totals were never read.
func (u *usageReader) observeShapes(snap *fleet.Snapshot, now time.Time) {
	if !u.spaced || snap == nil {
		return
	}
	for _, s := range snap.Services {
		if !u.sel.selects(s) {
			continue
		}
		svc, sig := u.service(s.ServiceID), shapeOf(s.Service)
		switch svc.shape {
		case sig:
		case 0:
			svc.shape = sig
		default:
			svc.shape, svc.reshaped = sig, u.stamp(now)
		}
	}
}

// shapeOf is a signature of what sets the nodes' totals of s: its status,
// its paused flag, each resource's id and size, its HA replicas. Never 0,
// which is "not seen yet"; 16 bits, which fit in a service's padding: a
// change missed one time in 65,536 is read at the next refresh.
func shapeOf(s *apiclient.Service) uint16 {
	var h maphash.Hash
	h.SetSeed(shapeSeed)
	size := func(v *apiclient.Int) {
		n := int64(-1)
		if v != nil {
			n = int64(*v)
		}
		maphash.WriteComparable(&h, n)
	}
	maphash.WriteComparable(&h, s.Status)
	maphash.WriteComparable(&h, s.IsPaused())
	maphash.WriteComparable(&h, len(s.Resources))
	for _, r := range s.Resources {
		maphash.WriteComparable(&h, r.ID)
		if r.Spec == nil {
			maphash.WriteComparable(&h, int64(-2))
			continue
		}
		size(r.Spec.CPUMillis)
		size(r.Spec.MemoryGBs)
	}
	if ha := s.HAReplicas; ha != nil {
		size(ha.ReplicaCount)
		size(ha.SyncReplicaCount)
	} else {
		maphash.WriteComparable(&h, int64(-2))
	}
	sum := h.Sum64()
	return max(1, uint16(sum^sum>>16^sum>>32^sum>>48))
}
