package poller

import (
	"context"
	"log/slog"
	"maps"
	"net/http/httptest"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/cloudsim"
	"github.com/clouddb/clouddb_exporter/config"
)

// TestReuseService: a service just read that putService would record
// unchanged is replaced by the kept value (its strings and slices are the
// state's), and its inline replica sets by the kept ones when recorded; a
// changed one shares what is equal and keeps what changed.
func TestReuseService(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	st := newState(slog.New(slog.DiscardHandler), func(string) bool { return true })
	read := func() apiclient.Service {
		// Fresh memory every time, as a decoding gives.
		return apiclient.Service{
			ServiceID: string([]byte("s1")), Name: string([]byte("db")), Status: apiclient.ServiceReady,
			Resources:       []apiclient.Resource{{ID: string([]byte("r1"))}},
			ReadReplicaSets: []apiclient.ReplicaSet{{ID: string([]byte("rs1")), Status: apiclient.ReplicaSetActive}},
		}
	}
	st.setServices([]apiclient.Service{read()}, now)
	kept, keptRS := st.services["s1"].v, st.replicaSets().byParent["s1"].v

	same := read()
	st.reuseService(&same)
	if unsafe.StringData(same.Name) != unsafe.StringData(kept.Name) || &same.Resources[0] != &kept.Resources[0] {
		t.Error("an unchanged service was not replaced by the kept one")
	}
	st.snapshot("p", now, 0)
	st.setServices([]apiclient.Service{same}, now)
	if isDirty(st) {
		t.Errorf("the kept service read again changed the state ")
	}
	if got := st.replicaSets().byParent["s1"].v; len(got) != 1 || &got[0] != &keptRS[0] || !st.inlineReplicaSets["s1"] {
		t.Errorf("replica sets after the reused service: %+v", got)
	}

	// A changed service shares its equal fields only; a new one shares
	// nothing.
	for _, tc := range []struct {
		name   string
		change func(*apiclient.Service)
		shared bool
		// read tells whether svc still has what change gave it.
		read func(*apiclient.Service) bool
	}{
		{"changed", func(s *apiclient.Service) { s.Status = apiclient.ServiceUnstable }, true,
			func(s *apiclient.Service) bool { return s.Status == apiclient.ServiceUnstable }},
		{"new", func(s *apiclient.Service) { s.ServiceID = "s2" }, false,
			func(s *apiclient.Service) bool { return s.ServiceID == "s2" }},
		{"password", func(s *apiclient.Service) { s.InitialPassword = "secret" }, true,
			func(s *apiclient.Service) bool { return s.InitialPassword == "secret" }},
		{"replica set changed", func(s *apiclient.Service) { s.ReadReplicaSets[0].Nodes = 2 }, true,
			func(s *apiclient.Service) bool { return s.ReadReplicaSets[0].Nodes == 2 }},
		{"field did not decode", func(s *apiclient.Service) { s.Dropped = []apiclient.FieldError{{Field: "created", Err: "bad"}} }, true,
			func(s *apiclient.Service) bool { return len(s.Dropped) == 1 }},
	} {
		svc := read()
		tc.change(&svc)
		st.reuseService(&svc)
		if !tc.read(&svc) {
			t.Errorf("%s: the change was lost: %+v", tc.name, svc)
		}
		if shared := unsafe.StringData(svc.Name) == unsafe.StringData(kept.Name) && &svc.Resources[0] == &kept.Resources[0]; shared != tc.shared {
			t.Errorf("%s: equal fields shared %v, want %v", tc.name, shared, tc.shared)
		}
	}
}

// TestUnchangedListHoldsNoCopy: a list of services read again unchanged,
// decoded from the simulator's answer (revision 2026: replica sets
// inline) into the state as it streams in, leaves nothing behind: the
// state keeps the very values it held, and the live heap does not grow,
// where the same list read plain holds its array and a second copy of
// every service.
func TestUnchangedListHoldsNoCopy(t *testing.T) {
	const n = 2000
	creds := cloudsim.Credential{AccessKey: "ak", SecretKey: "sk", ProjectID: "p"}
	sim := cloudsim.New(cloudsim.Options{Credentials: []cloudsim.Credential{creds}, Seed: 1})
	sim.LoadFleet("p", cloudsim.Fleet{Services: n, ReplicaSetsPerService: 1})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	client, err := apiclient.New(apiclient.Config{BaseURL: srv.URL + "/v1", ProjectID: "p", AccessKey: "ak", SecretKey: "sk", RateLimit: 1e6, Burst: 100})
	if err != nil {
		t.Fatal(err)
	}
	p := New(client, Options{Collect: config.Collect{Concurrency: 2}, Logger: slog.New(slog.DiscardHandler)})
	ctx := context.Background()
	if snap := p.Poll(ctx); len(snap.Services) != n || len(snap.ReplicaSets) != n {
		t.Fatalf("first cycle: %d services, %d replica sets", len(snap.Services), len(snap.ReplicaSets))
	}
	p.mu.Lock()
	kept := maps.Clone(p.st.services)
	p.mu.Unlock()

	// held is what read keeps alive, per service, once it returned.
	held := func(read func() any) float64 {
		// Two collections: the first leaves what sync.Pools held (the
		// simulator's answer buffers, in this process) to the second.
		gc := func(m *runtime.MemStats) {
			runtime.GC()
			runtime.GC()
			runtime.ReadMemStats(m)
		}
		var before, after runtime.MemStats
		gc(&before)
		got := read()
		gc(&after)
		runtime.KeepAlive(got)
		return (float64(after.HeapAlloc) - float64(before.HeapAlloc)) / n
	}
	copied := held(func() any {
		list, err := client.ListServices(ctx)
		if err != nil || len(list) != n {
			t.Fatalf("%d services, err %v", len(list), err)
		}
		return list
	})
	streamed := held(func() any {
		p.mu.Lock()
		read := p.st.readServices()
		p.mu.Unlock()
		if err := p.listServices(ctx, read); err != nil {
			t.Fatal(err)
		}
		p.mu.Lock()
		read.complete()
		p.mu.Unlock()
		return nil
	})
	t.Logf("held per service: %.0f B read plain, %.0f B read into the state", copied, streamed)
	if streamed > 32 {
		t.Errorf("a list read again unchanged holds %.0f B per service, want none (a plain read holds %.0f B)", streamed, copied)
	}
	if copied < 400 {
		t.Errorf("a plain read holds only %.0f B per service: the test measures nothing", copied)
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.st.services) != n {
		t.Fatalf("%d services kept after the list read again, want %d", len(p.st.services), n)
	}
	for id, o := range p.st.services {
		if o.v != kept[id].v {
			t.Fatalf("service %s read again unchanged replaced the kept value", id)
		}
	}
}
