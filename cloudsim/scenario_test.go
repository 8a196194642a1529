package cloudsim

import (
	"context"
	"net/http"
	"reflect"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

func listIDs(t *testing.T, e *env) []string {
	t.Helper()
	var ids []string
	for _, s := range decode[[]apiclient.Service](t, e.must(http.StatusOK, "GET", servicesPath, nil)) {
		ids = append(ids, s.ServiceID)
	}
	for _, v := range decode[[]apiclient.VPC](t, e.must(http.StatusOK, "GET", vpcsPath, nil)) {
		ids = append(ids, v.ID)
	}
	return ids
}

func TestDemo(t *testing.T) {
	e := newEnv(t, Timings{})
	e.sim.LoadDemo(testProject)
	services := decode[[]apiclient.Service](t, e.must(http.StatusOK, "GET", servicesPath, nil))
	if len(services) < 6 || len(services) > 8 {
		t.Fatalf("%d demo services, want 6 to 8", len(services))
	}
	types, statuses, envs := map[string]int{}, map[string]int{}, map[string]int{}
	var pooler, ha, replicaSets, rsPooler int
	for _, s := range services {
		types[s.ServiceType]++
		statuses[s.Status]++
		envs[s.Environment()]++
		if s.ConnectionPooler != nil {
			pooler++
		}
		if len(s.Resources) > 1 {
			ha++
		}
		if s.Status == apiclient.ServicePaused && !s.IsPaused() {
			t.Errorf("%s is PAUSED with paused=false", s.Name)
		}
		for _, rs := range decode[[]apiclient.ReplicaSet](t, e.must(http.StatusOK, "GET", servicesPath+"/"+s.ServiceID+"/replicaSets", nil)) {
			replicaSets++
			if rs.ConnectionPooler != nil {
				rsPooler++
			}
		}
	}
	if len(types) != 3 || statuses[apiclient.ServicePaused] != 1 || statuses[apiclient.ServiceConfiguring] != 1 ||
		statuses[apiclient.ServiceUnstable] != 0 || statuses[apiclient.ServiceReady] < 4 || envs["DEV"] != 1 ||
		pooler < 1 || ha < 1 || replicaSets < 2 || rsPooler != 1 {
		t.Errorf("demo mix: types %v statuses %v envs %v pooler %d ha %d replica sets %d (pooler %d)",
			types, statuses, envs, pooler, ha, replicaSets, rsPooler)
	}
	// The CONFIGURING service stays so for a while, then settles.
	e.clock.Advance(10 * time.Minute)
	if n := countStatus(t, e, apiclient.ServiceConfiguring); n != 1 {
		t.Errorf("%d CONFIGURING after 10 minutes, want 1", n)
	}
	e.clock.Advance(time.Hour)
	if n := countStatus(t, e, apiclient.ServiceConfiguring); n != 0 {
		t.Errorf("%d CONFIGURING after an hour, want 0", n)
	}

	vpcs := decode[[]apiclient.VPC](t, e.must(http.StatusOK, "GET", vpcsPath, nil))
	if len(vpcs) != 2 || vpcs[0].RegionCode == vpcs[1].RegionCode {
		t.Fatalf("demo VPCs: %+v", vpcs)
	}
	e.clock.Advance(-time.Hour) // back to the pending window
	peerStatus := map[string]int{}
	var withError int
	for _, v := range vpcs {
		for _, p := range decode[[]apiclient.Peering](t, e.must(http.StatusOK, "GET", vpcsPath+"/"+v.ID+"/peerings", nil)) {
			peerStatus[p.Status]++
			if p.ErrorMessage != nil {
				withError++
			}
		}
	}
	if peerStatus["active"] != 2 || peerStatus["pending"] != 1 || withError != 1 {
		t.Errorf("demo peerings: %v, %d with an error", peerStatus, withError)
	}
	// One service is attached: deleting its VPC is a conflict.
	conflicts := 0
	for _, v := range vpcs {
		if status, _, _ := e.do("DELETE", vpcsPath+"/"+v.ID, nil); status == http.StatusConflict {
			conflicts++
		}
	}
	if conflicts != 2 {
		t.Errorf("%d VPC deletes refused, want 2 (peerings and an attachment)", conflicts)
	}
}

func countStatus(t *testing.T, e *env, status string) int {
	t.Helper()
	n := 0
	for _, s := range decode[[]apiclient.Service](t, e.must(http.StatusOK, "GET", servicesPath, nil)) {
		if s.Status == status {
			n++
		}
	}
	return n
}

func TestScenarioDeterminism(t *testing.T) {
	load := func(seed int64, fleet bool) []string {
		e := newEnv(t, Timings{})
		e.sim.seed = seed
		if fleet {
			e.sim.LoadFleet(testProject, Fleet{Services: 20, ReplicaSetsPerService: 2, VPCs: 3, PeeringsPerVPC: 2})
		} else {
			e.sim.LoadDemo(testProject)
		}
		return listIDs(t, e)
	}
	for _, fleet := range []bool{false, true} {
		a, b, c := load(1, fleet), load(1, fleet), load(2, fleet)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("fleet=%v: same seed, different ids:\n%v\n%v", fleet, a, b)
		}
		if reflect.DeepEqual(a, c) {
			t.Errorf("fleet=%v: different seeds, same ids", fleet)
		}
	}
}

func TestFleet(t *testing.T) {
	e := newEnv(t, Timings{})
	e.sim.LoadFleet(testProject, Fleet{Services: 10000, ReplicaSetsPerService: 1, VPCs: 5, PeeringsPerVPC: 3})
	services := decode[[]apiclient.Service](t, e.must(http.StatusOK, "GET", servicesPath, nil))
	if len(services) != 10000 {
		t.Fatalf("%d services, want 10000", len(services))
	}
	seen := map[string]bool{}
	for _, s := range services {
		if s.Status != apiclient.ServiceReady || seen[s.ServiceID] {
			t.Fatalf("service %s: status %s, duplicate %v", s.ServiceID, s.Status, seen[s.ServiceID])
		}
		seen[s.ServiceID] = true
	}
	last := services[len(services)-1].ServiceID
	rs := decode[[]apiclient.ReplicaSet](t, e.must(http.StatusOK, "GET", servicesPath+"/"+last+"/replicaSets", nil))
	if len(rs) != 1 || rs[0].Status != apiclient.ReplicaSetActive {
		t.Errorf("replica sets of the last service: %+v", rs)
	}
	vpcs := decode[[]apiclient.VPC](t, e.must(http.StatusOK, "GET", vpcsPath, nil))
	if len(vpcs) != 5 {
		t.Fatalf("%d VPCs", len(vpcs))
	}
	if p := decode[[]apiclient.Peering](t, e.must(http.StatusOK, "GET", vpcsPath+"/"+vpcs[4].ID+"/peerings", nil)); len(p) != 3 || p[0].Status != "active" {
		t.Errorf("peerings: %+v", p)
	}
	// Deleting one service keeps the list consistent.
	e.must(http.StatusAccepted, "DELETE", servicesPath+"/"+services[5000].ServiceID, nil)
	if n := len(decode[[]apiclient.Service](t, e.must(http.StatusOK, "GET", servicesPath, nil))); n != 9999 {
		t.Errorf("%d services after a delete", n)
	}
}

func TestChurnChangesState(t *testing.T) {
	e := newEnv(t, Timings{})
	e.sim.LoadDemo(testProject)
	before := string(e.must(http.StatusOK, "GET", servicesPath, nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.sim.Churn(ctx, time.Millisecond); close(done) }()
	testbin.WaitFor(t, 20*time.Second, "churn to change something", func() bool {
		return string(e.must(http.StatusOK, "GET", servicesPath, nil)) != before
	})
	cancel()
	<-done
	e.sim.Churn(context.Background(), 0) // returns at once when disabled
}

// TestChurnKeepsForcedStatus: a status forced through the controls stays
// while churn runs, so that the demo's "break something" works.
func TestChurnKeepsForcedStatus(t *testing.T) {
	e := newEnv(t, Timings{})
	e.sim.LoadDemo(testProject)
	services := decode[[]apiclient.Service](t, e.must(http.StatusOK, "GET", servicesPath, nil))
	for _, svc := range services {
		if err := e.sim.SetServiceStatus(testProject, svc.ServiceID, apiclient.ServiceUnstable); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { e.sim.Churn(ctx, time.Millisecond); close(done) }()
	// Many churn steps: each would pick a service and, before the fix,
	// resize it or end its "blip".
	for range 200 {
		for _, svc := range decode[[]apiclient.Service](t, e.must(http.StatusOK, "GET", servicesPath, nil)) {
			if svc.Status != apiclient.ServiceUnstable {
				cancel()
				<-done
				t.Fatalf("service %s is %s under churn, want the forced UNSTABLE", svc.ServiceID, svc.Status)
			}
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-done
	// Clearing the override ends it.
	id := services[0].ServiceID
	if err := e.sim.SetServiceStatus(testProject, id, ""); err != nil {
		t.Fatal(err)
	}
	if svc := decode[apiclient.Service](t, e.must(http.StatusOK, "GET", servicesPath+"/"+id, nil)); svc.Status == apiclient.ServiceUnstable {
		t.Errorf("status still forced after clearing: %s", svc.Status)
	}
}

// TestDemoUsageShapes: over a day, orders-db stays far below its size and
// search-ai near it (the demo's rightsizing findings), while the others
// follow the daily curve.
func TestDemoUsageShapes(t *testing.T) {
	e := newEnv(t, Timings{})
	e.sim.LoadDemo(testProject)
	p := e.sim.projects[testProject]
	byName := map[string]*service{}
	for _, svc := range p.services {
		byName[svc.name] = svc
	}
	for name, want := range map[string]struct{ lo, hi float64 }{
		"orders-db":   {0, 0.1},
		"search-ai":   {0.8, 1},
		"dev-sandbox": {0.09, 0.61},
	} {
		svc := byName[name]
		if svc == nil {
			t.Fatalf("the demo has no %s", name)
		}
		lo, hi := 1.0, 0.0
		for m := range 1440 {
			l := svc.load(e.clock.Now().Add(time.Duration(m) * time.Minute))
			lo, hi = min(lo, l), max(hi, l)
		}
		if lo < want.lo || hi > want.hi || hi-lo < 0.04 {
			t.Errorf("%s: load from %.2f to %.2f over a day; want within [%v, %v] and a daily swing", name, lo, hi, want.lo, want.hi)
		}
	}
}
