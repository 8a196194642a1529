package changes

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// fleetSnapshot is n services with a replica set each, two VPCs with a peering each.
func fleetSnapshot(n, m int) *fleet.Snapshot {
	s := snapAt(m, false)
	for i := range n {
		id := fmt.Sprintf("svc-%05d", i)
		v := svc(id, id, 1000, 4)
		v.HAReplicas = &apiclient.HAReplicas{ReplicaCount: intp(1), SyncReplicaCount: intp(0)}
		s.Services = append(s.Services, fleet.Service{Service: v})
		s.ReplicaSets = append(s.ReplicaSets, fleet.ReplicaSet{ServiceID: id, ReplicaSet: &apiclient.ReplicaSet{ID: "rs-" + id, Name: "r", Nodes: 1}})
	}
	for i := range 2 {
		id := fmt.Sprint("vpc-", i)
		s.VPCs = append(s.VPCs, apiclient.VPC{ID: id, Name: id})
		s.Peerings = append(s.Peerings, fleet.Peering{VPCID: id, Peering: &apiclient.Peering{ID: "pe-" + id, Status: "active"}})
	}
	s.Parts = append(s.Parts, fleet.PartHealth{Name: fleet.PartReplicaSets, Success: true, LastSuccess: s.Taken},
		fleet.PartHealth{Name: fleet.PartVPCs, Success: true, LastSuccess: s.Taken},
		fleet.PartHealth{Name: fleet.PartPeerings, Success: true, LastSuccess: s.Taken})
	return s
}

// nextUnchanged is the next cycle's snapshot of an unchanged fleet: the
// poller shares every unchanged value (and list) with the previous one.
func nextUnchanged(s *fleet.Snapshot, m int) *fleet.Snapshot {
	next := *s
	at := t0.Add(time.Duration(m) * time.Minute)
	next.Taken, next.Read = at, at
	next.Parts = s.Parts // the poller builds them anew; kept here to count the differ alone
	return &next
}

// BenchmarkDiffUnchanged compares an unchanged fleet's successive snapshots
// whose lists were rebuilt (what a change elsewhere costs the differ) and
// shared (what a cycle with no change costs it).
func BenchmarkDiffUnchanged(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		s := fleetSnapshot(n, 0)
		b.Run(fmt.Sprintf("N=%d/rebuilt", n), func(b *testing.B) {
			d := newDiffer("p1")
			d.observe(s)
			copies := [2]*fleet.Snapshot{}
			for i := range copies {
				c := *s
				c.Services = append([]fleet.Service(nil), s.Services...)
				c.ReplicaSets = append([]fleet.ReplicaSet(nil), s.ReplicaSets...)
				copies[i] = &c
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				d.observe(copies[i%2])
			}
		})
		b.Run(fmt.Sprintf("N=%d/shared", n), func(b *testing.B) {
			d := newDiffer("p1")
			d.observe(s)
			// One snapshot, its times moved on in place: every call is a new
			// complete read of the same lists, and allocates only if the differ does.
			next := *s
			next.Parts = append([]fleet.PartHealth(nil), s.Parts...)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				at := t0.Add(time.Duration(i+1) * time.Minute)
				next.Taken, next.Read = at, at
				for j := range next.Parts {
					next.Parts[j].LastSuccess = at
				}
				d.observe(&next)
			}
		})
	}
}

// BenchmarkDiffMemory reports what the differ keeps per object (a service
// and its replica set are two) once it has read a fleet of N services.
func BenchmarkDiffMemory(b *testing.B) {
	for _, n := range []int{10000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			s := fleetSnapshot(n, 0)
			var kept float64
			for range b.N {
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				d := newDiffer("p1")
				d.observe(s)
				runtime.GC()
				runtime.ReadMemStats(&after)
				kept = float64(after.HeapAlloc-before.HeapAlloc) / float64(2*n)
				runtime.KeepAlive(d)
			}
			b.ReportMetric(kept, "bytes/object")
		})
	}
}

// BenchmarkRingMemory reports what the feed keeps per event once its ring
// is full (--changes.retention.events) of resizes, as the sizing table says.
func BenchmarkRingMemory(b *testing.B) {
	for _, n := range []int{DefaultMaxEvents} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			var kept float64
			for range b.N {
				runtime.GC()
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				tl := New(Options{MaxEvents: n})
				start := time.Now()
				// Three times over: the ring evicts as it does after hours.
				for i := range 3 * n {
					tl.mu.Lock()
					tl.recordLocked(Event{Time: start, WindowStart: &start, ProjectID: "project-0001", ObjectType: TypeService,
						ObjectID: fmt.Sprintf("svc-%08d", i%n), ObjectName: fmt.Sprintf("service-%d", i%n), Kind: KindResized, Source: SourcePoll,
						Before: Fields{"cpu_millis": int64(2000), "memory_gbs": int64(8)}, After: Fields{"cpu_millis": int64(1000), "memory_gbs": int64(4)}})
					tl.mu.Unlock()
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				kept = float64(after.HeapAlloc-before.HeapAlloc) / float64(n)
				runtime.KeepAlive(tl)
			}
			b.ReportMetric(kept, "bytes/event")
		})
	}
}
