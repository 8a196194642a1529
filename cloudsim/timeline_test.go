package cloudsim

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// TestDemoTimeline: the demo's timeline steps resize a service, change one's
// HA, fail a peering and recover it, and create a service then delete it.
func TestDemoTimeline(t *testing.T) {
	sim := New(Options{Credentials: []Credential{rwCred}, Seed: 1})
	sim.LoadDemo(testProject)
	run := &timelineRun{sim: sim, cred: rwCred}
	services := func() map[string]apiclient.Service {
		var list []apiclient.Service
		if err := run.call(http.MethodGet, run.project()+"/services", "", &list); err != nil {
			t.Fatal(err)
		}
		out := map[string]apiclient.Service{}
		for _, s := range list {
			out[s.ServiceID] = s
		}
		return out
	}
	before := services()
	steps := DemoTimelineSteps()
	if last := steps[len(steps)-1].At; last > 20*time.Second {
		t.Errorf("the last step comes %v after the start: the deletion it makes, seen missing by two polls of the demo (every 10 s), should reach the demo's feed within a minute", last)
	}
	var peeringErrors []string
	var created string
	for _, st := range steps {
		if err := st.do(run); err != nil {
			t.Fatalf("step %s: %v", st.Name, err)
		}
		if st.Name == "peering fails" || st.Name == "peering recovers" {
			var p apiclient.Peering
			if err := run.call(http.MethodGet, run.project()+"/vpcs/"+run.peering[0]+"/peerings/"+run.peering[1], "", &p); err != nil {
				t.Fatal(err)
			}
			msg := ""
			if p.ErrorMessage != nil {
				msg = *p.ErrorMessage
			}
			peeringErrors = append(peeringErrors, msg)
		}
		if st.Name == "create" {
			if created = run.created; created == "" {
				t.Fatal("no service created")
			}
		}
	}
	if len(peeringErrors) != 2 || peeringErrors[0] == "" || peeringErrors[1] != "" {
		t.Errorf("peering error messages %q: want one set, then cleared", peeringErrors)
	}
	after := services()
	if s, ok := after[created]; ok && s.Status != apiclient.ServiceDeleting && s.Status != apiclient.ServiceDeleted {
		t.Errorf("the created service is %s, not deleted", s.Status)
	}
	resized, ha := 0, 0
	for id, s := range after {
		b, ok := before[id]
		if !ok {
			continue
		}
		if cpuOf(s) != cpuOf(b) {
			resized++
		}
		if replicasOf(s) != replicasOf(b) {
			ha++
		}
	}
	if resized != 1 || ha != 1 {
		t.Errorf("resized %d, HA changed %d; want 1 each", resized, ha)
	}
}

func TestRunTimelineStopsWithItsContext(t *testing.T) {
	sim := New(Options{Credentials: []Credential{rwCred}, Seed: 1})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	ran := 0
	go func() {
		defer close(done)
		sim.RunTimeline(ctx, rwCred, []TimelineStep{{Name: "count", do: func(*timelineRun) error { ran++; cancel(); return nil }}}, time.Hour)
	}()
	<-done
	if ran != 1 {
		t.Errorf("ran %d steps", ran)
	}
}

func cpuOf(s apiclient.Service) int64 {
	if len(s.Resources) == 0 || s.Resources[0].Spec == nil || s.Resources[0].Spec.CPUMillis == nil {
		return -1
	}
	return int64(*s.Resources[0].Spec.CPUMillis)
}

func replicasOf(s apiclient.Service) int64 {
	if s.HAReplicas == nil || s.HAReplicas.ReplicaCount == nil {
		return -1
	}
	return int64(*s.HAReplicas.ReplicaCount)
}
