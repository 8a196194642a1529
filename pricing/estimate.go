package pricing

import (
	"math"
	"strconv"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// PartCost is the data part the estimate is published as in each snapshot.
const PartCost = "cost"

// Components of a service's cost, the values of the component label.
const (
	Compute      = "compute"
	HA           = "ha"
	ReadReplicas = "read_replicas"
	Storage      = "storage"
	Pooler       = "pooler"
)

// Components lists every component in the order they are exported.
var Components = []string{Compute, HA, ReadReplicas, Storage, Pooler}

// ServiceCost is one service's estimate per hour, one value per component.
type ServiceCost struct {
	ID string
	// PerHour[i] is Components[i]'s, valid when Priced has bit i.
	PerHour [5]float64
	Priced  uint8
}

// Costs is a project's estimate, the snapshot's data part PartCost.
type Costs struct {
	// Services is sorted by ID, as the snapshot's.
	Services []ServiceCost
	// Unpriced counts the components (a replica set's nodes are one) that
	// the table has no price for or whose amount the API did not send.
	Unpriced int
}

// Of returns the estimate in s, nil when pricing is off.
func Of(s *fleet.Snapshot) *Costs { return fleet.DataOf[Costs](s, PartCost) }

// set rounds to a billionth, so that 2 x 0.09 + 0.045 reads 0.225, not
// the 0.22499999999999998 of binary floating point.
func (c *ServiceCost) set(component int, v float64) {
	c.PerHour[component] = math.Round(v*1e9) / 1e9
	c.Priced |= 1 << component
}

// missing is a price the file lacks: Key is where the file would hold it
// (compute.us-east-1."1000/4"), Region and Size what it prices, when any.
type missing struct {
	Key, Region, Size string
}

// missFunc hears of each price the table lacks; nil hears nothing.
type missFunc func(missing)

func (m missFunc) report(key, region, size string) {
	if m != nil {
		m(missing{key, region, size})
	}
}

func (m missFunc) compute(region string, size Size) {
	if m != nil {
		m(missing{"compute." + region + "." + strconv.Quote(size.String()), region, size.String()})
	}
}

// Estimate prices every service of s from its size, HA replicas, replica
// sets, pooler and storage as the snapshot last read them.
func Estimate(t *Table, s *fleet.Snapshot) *Costs { return estimate(t, s, nil) }

// estimate is Estimate, telling miss of each price t lacks (once a
// component: a price many services lack is told many times).
func estimate(t *Table, s *fleet.Snapshot, miss missFunc) *Costs {
	out := &Costs{Services: make([]ServiceCost, 0, len(s.Services))}
	rs := s.ReplicaSets
	for i := range s.Services {
		svc := s.Services[i].Service
		// Both lists are sorted by service id: a merge, not a lookup.
		for len(rs) > 0 && rs[0].ServiceID < svc.ServiceID {
			rs = rs[1:]
		}
		n := 0
		for n < len(rs) && rs[n].ServiceID == svc.ServiceID {
			n++
		}
		c, unpriced := estimateService(t, svc, rs[:n], miss)
		out.Services = append(out.Services, c)
		out.Unpriced += unpriced
		rs = rs[n:]
	}
	return out
}

const (
	iCompute = iota
	iHA
	iReadReplicas
	iStorage
	iPooler
)

func estimateService(t *Table, svc *apiclient.Service, sets []fleet.ReplicaSet, miss missFunc) (ServiceCost, int) {
	c := ServiceCost{ID: svc.ServiceID}
	unpriced := priceStorage(t, svc, &c, miss)
	if svc.IsPaused() {
		// A paused service keeps its data and nothing else runs.
		for _, i := range []int{iCompute, iHA, iReadReplicas, iPooler} {
			c.set(i, 0)
		}
		return c, unpriced
	}
	unpriced += priceCompute(t, svc, &c, miss)
	unpriced += priceReplicaSets(t, svc.RegionCode, sets, &c, miss)
	poolers := 0
	if svc.ConnectionPooler != nil {
		poolers++
	}
	for _, r := range sets {
		if r.ConnectionPooler != nil {
			poolers++
		}
	}
	switch price, ok := t.Pooler(); {
	case poolers == 0:
		c.set(iPooler, 0)
	case ok:
		c.set(iPooler, float64(poolers)*price)
	default:
		unpriced += poolers
		miss.report("pooler", "", "")
	}
	return c, unpriced
}

func priceStorage(t *Table, svc *apiclient.Service, c *ServiceCost, miss missFunc) int {
	if svc.Metrics == nil || svc.Metrics.StorageMB == nil {
		return 1 // the first revision sends no storage
	}
	price, ok := t.StorageGBMonth(svc.RegionCode)
	if !ok {
		miss.report("storage_gb_month."+svc.RegionCode, svc.RegionCode, "")
		return 1
	}
	c.set(iStorage, float64(*svc.Metrics.StorageMB)/1024*price/HoursPerMonth)
	return 0
}

// priceCompute prices the primary and its HA replicas, which follow its size.
func priceCompute(t *Table, svc *apiclient.Service, c *ServiceCost, miss missFunc) int {
	replicas := haReplicas(svc)
	if svc.Shared() {
		// A shared-resource service has no dedicated size to pay for.
		c.set(iCompute, 0)
		c.set(iHA, 0)
		return 0
	}
	size, sized := primarySize(svc)
	price, ok := t.Compute(svc.RegionCode, size)
	if sized && !ok {
		miss.compute(svc.RegionCode, size)
	}
	if !sized || !ok {
		if replicas > 0 {
			return 2
		}
		c.set(iHA, 0)
		return 1
	}
	c.set(iCompute, price)
	if replicas == 0 {
		c.set(iHA, 0)
		return 0
	}
	fraction, ok := t.HAReplica()
	if !ok {
		miss.report("ha_replica", "", "")
		return 1
	}
	c.set(iHA, float64(replicas)*fraction*price)
	return 0
}

func priceReplicaSets(t *Table, region string, sets []fleet.ReplicaSet, c *ServiceCost, miss missFunc) int {
	unpriced := 0
	total := 0.0
	for _, r := range sets {
		size := Size{int64(r.CPUMillis), int64(r.MemoryGBs)}
		price, ok := t.Compute(region, size)
		if !ok {
			miss.compute(region, size)
			unpriced++
			continue
		}
		total += float64(r.Nodes) * price
	}
	if unpriced == 0 {
		c.set(iReadReplicas, total)
	}
	return unpriced
}

func primarySize(svc *apiclient.Service) (Size, bool) {
	if len(svc.Resources) == 0 || svc.Resources[0].Spec == nil {
		return Size{}, false
	}
	spec := svc.Resources[0].Spec
	if spec.CPUMillis == nil || spec.MemoryGBs == nil {
		return Size{}, false
	}
	return Size{int64(*spec.CPUMillis), int64(*spec.MemoryGBs)}, true
}

// haReplicas reads revision 2026's ha_replicas.replica_count (the
// synchronous ones are among them), else counts the resources beyond the
// primary, as the first revision lists HA replicas.
func haReplicas(svc *apiclient.Service) int {
	if ha := svc.HAReplicas; ha != nil && ha.ReplicaCount != nil {
		return int(*ha.ReplicaCount)
	}
	return max(len(svc.Resources)-1, 0)
}
