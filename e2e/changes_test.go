package e2e

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// change is what the tests read of a feed line.
type change struct {
	Cursor     uint64         `json:"cursor"`
	ID         string         `json:"id"`
	ProjectID  string         `json:"project_id"`
	ObjectType string         `json:"object_type"`
	ObjectID   string         `json:"object_id"`
	Kind       string         `json:"kind"`
	Source     string         `json:"source"`
	Actor      string         `json:"actor"`
	After      map[string]any `json:"after"`
	// WindowStart is zero when the event has none.
	WindowStart time.Time `json:"window_start"`
}

func feedOf(t *testing.T, url string) []change {
	t.Helper()
	resp, err := http.Get(url + "/api/v1/changes?limit=10000")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("feed: %d", resp.StatusCode)
	}
	var out []change
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c change
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("feed line %q: %v", sc.Text(), err)
		}
		out = append(out, c)
	}
	return out
}

// waitChange waits for the feed to hold an event of kind on object id.
func waitChange(t *testing.T, url, typ, id, kind string) change {
	t.Helper()
	var found change
	testbin.WaitFor(t, 60*time.Second, typ+" "+id+" "+kind+" on the feed", func() bool {
		for _, c := range feedOf(t, url) {
			if c.ObjectType == typ && c.ObjectID == id && c.Kind == kind {
				found = c
				return true
			}
		}
		return false
	})
	return found
}

// waitChanges waits for n events of kind on object id.
func waitChanges(t *testing.T, url, typ, id, kind string, n int) {
	t.Helper()
	testbin.WaitFor(t, 60*time.Second, typ+" "+id+" "+kind+" on the feed", func() bool {
		got := 0
		for _, c := range feedOf(t, url) {
			if c.ObjectType == typ && c.ObjectID == id && c.Kind == kind {
				got++
			}
		}
		return got >= n
	})
}

func changesArgs(extra ...string) []string {
	return append([]string{"--collect.interval=1s", "--collect.transition-interval=300ms"}, extra...)
}

// kindCounts are the feed's events by object type and kind.
func kindCounts(feed []change) map[string]int {
	out := map[string]int{}
	for _, c := range feed {
		out[c.ObjectType+"/"+c.Kind]++
	}
	return out
}

// TestChangesEveryKind drives the simulator through every kind it can make
// and sees each exactly once on the feed and in clouddb_changes_total; the
// admin write names its caller.
func TestChangesEveryKind(t *testing.T) {
	t.Parallel()
	sim := testbin.StartSim(t, append([]string{"--scenario=empty"}, instantSim...)...)
	e := testbin.StartWithAdmin(t, sim, changesArgs()...)
	s := e.Sim
	p := "/projects/" + testbin.SimProject
	testbin.WaitFor(t, 30*time.Second, "the changes counters", e.MetricIs("clouddb_changes_total", 0,
		"project_id", testbin.SimProject, "object_type", "service", "kind", "created"))

	var vpc struct {
		ID string `json:"id"`
	}
	s.APIWrite(t, "POST", p+"/vpcs", `{"name":"v1","cidr":"10.30.0.0/16","region_code":"us-east-1"}`, 201, &vpc)
	waitChange(t, e.URL, "vpc", vpc.ID, "created")
	s.APIWrite(t, "POST", p+"/vpcs/"+vpc.ID+"/rename", `{"name":"v2"}`, 200, nil)
	waitChange(t, e.URL, "vpc", vpc.ID, "renamed")

	var svc struct {
		ServiceID string `json:"service_id"`
	}
	s.APIWrite(t, "POST", p+"/services", `{"name":"s1","addons":["time-series"],"region_code":"us-east-1","cpu_millis":1000,"memory_gbs":4}`, 202, &svc)
	sp := p + "/services/" + svc.ServiceID
	waitChange(t, e.URL, "service", svc.ServiceID, "created")
	var fork struct {
		ServiceID string `json:"service_id"`
	}
	s.APIWrite(t, "POST", sp+"/forkService", `{"fork_strategy":"NOW","name":"f1"}`, 202, &fork)
	if c := waitChange(t, e.URL, "service", fork.ServiceID, "created"); fmt.Sprint(c.After["forked_from"]) != fmt.Sprintf("map[project_id:%s service_id:%s]", testbin.SimProject, svc.ServiceID) {
		t.Errorf("the fork's created event: after %v, want forked_from its parent", c.After)
	}
	code, _, body := e.Admin(t, "POST", "/api/v1"+sp+"/resize", `{"cpu_millis":2000,"memory_gbs":8}`)
	if code != http.StatusAccepted {
		t.Fatalf("admin resize: %d %s", code, body)
	}
	if c := waitChange(t, e.URL, "service", svc.ServiceID, "resized"); c.Actor == "" || c.Source != "admin" {
		t.Errorf("the resize made through the admin surface: actor %q source %q", c.Actor, c.Source)
	}
	for _, step := range []struct {
		path, body string
		status     int
		kind       string
	}{
		{"/setHA", `{"replica_count":1}`, 202, "ha_changed"},
		{"/enablePooler", ``, 200, "pooler_enabled"},
		{"/disablePooler", ``, 200, "pooler_disabled"},
		{"/attachToVPC", `{"vpc_id":"` + vpc.ID + `"}`, 202, "vpc_attached"},
		{"/detachFromVPC", `{"vpc_id":"` + vpc.ID + `"}`, 202, "vpc_detached"},
		{"/setEnvironment", `{"environment":"PROD"}`, 200, "environment_changed"},
		{"/rename", `{"name":"s2"}`, 200, "renamed"},
	} {
		s.APIWrite(t, "POST", sp+step.path, step.body, step.status, nil)
		waitChange(t, e.URL, "service", svc.ServiceID, step.kind)
	}
	s.ServiceStatus(t, svc.ServiceID, "UNSTABLE")
	waitChange(t, e.URL, "service", svc.ServiceID, "status_changed")
	s.ServiceStatus(t, svc.ServiceID, "")
	waitChanges(t, e.URL, "service", svc.ServiceID, "status_changed", 2)

	s.APIWrite(t, "POST", sp+"/replicaSets", `{"name":"r1","cpu_millis":1000,"memory_gbs":4,"nodes":1}`, 202, nil)
	var sets []struct {
		ID string `json:"id"`
	}
	s.APIGet(t, sp+"/replicaSets", &sets)
	if len(sets) != 1 {
		t.Fatalf("replica sets %v", sets)
	}
	rp := sp + "/replicaSets/" + sets[0].ID
	waitChange(t, e.URL, "replica_set", sets[0].ID, "created")
	for _, step := range []struct {
		method, path, body string
		status             int
		kind               string
	}{
		{"POST", "/resize", `{"cpu_millis":"2000","memory_gbs":8}`, 202, "resized"},
		{"POST", "/enablePooler", ``, 200, "pooler_enabled"},
		{"POST", "/disablePooler", ``, 200, "pooler_disabled"},
		{"POST", "/setEnvironment", `{"environment":"DEV"}`, 200, "environment_changed"},
	} {
		s.APIWrite(t, step.method, rp+step.path, step.body, step.status, nil)
		waitChange(t, e.URL, "replica_set", sets[0].ID, step.kind)
	}
	s.ReplicaSetStatus(t, svc.ServiceID, sets[0].ID, "error")
	waitChange(t, e.URL, "replica_set", sets[0].ID, "status_changed")
	s.ReplicaSetStatus(t, svc.ServiceID, sets[0].ID, "")
	waitChanges(t, e.URL, "replica_set", sets[0].ID, "status_changed", 2)
	s.APIWrite(t, "DELETE", rp, ``, 202, nil)
	waitChange(t, e.URL, "replica_set", sets[0].ID, "deleted")

	var peering struct {
		ID string `json:"id"`
	}
	s.APIWrite(t, "POST", p+"/vpcs/"+vpc.ID+"/peerings", `{"peer_account_id":"111122223333","peer_region_code":"eu-west-1","peer_vpc_id":"vpc-1"}`, 201, &peering)
	waitChange(t, e.URL, "peering", peering.ID, "created")
	s.PeeringError(t, vpc.ID, peering.ID, "route conflict")
	waitChange(t, e.URL, "peering", peering.ID, "status_changed")
	s.APIWrite(t, "DELETE", p+"/vpcs/"+vpc.ID+"/peerings/"+peering.ID, ``, 204, nil)
	waitChange(t, e.URL, "peering", peering.ID, "deleted")

	s.APIWrite(t, "DELETE", sp, ``, 202, nil)
	waitChange(t, e.URL, "service", svc.ServiceID, "deleted")
	s.APIWrite(t, "DELETE", p+"/vpcs/"+vpc.ID, ``, 204, nil)
	waitChange(t, e.URL, "vpc", vpc.ID, "deleted")

	feed := feedOf(t, e.URL)
	want := map[string]int{}
	for _, k := range []string{"vpc/created", "vpc/renamed", "vpc/deleted", "service/created", "service/resized", "service/ha_changed",
		"service/pooler_enabled", "service/pooler_disabled", "service/vpc_attached", "service/vpc_detached", "service/environment_changed",
		"service/renamed", "service/deleted", "replica_set/created", "replica_set/resized", "replica_set/pooler_enabled",
		"replica_set/pooler_disabled", "replica_set/environment_changed", "replica_set/deleted", "peering/created",
		"peering/status_changed", "peering/deleted"} {
		want[k] = 1
	}
	// A forced status and its clearing: two changes each.
	want["service/status_changed"], want["replica_set/status_changed"] = 2, 2
	want["service/created"] = 2 // s1 and its fork
	got := kindCounts(feed)
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: %d on the feed, want %d", k, got[k], n)
		}
		typ, kind, _ := strings.Cut(k, "/")
		testbin.WaitFor(t, 10*time.Second, "the counter of "+k, e.MetricIs("clouddb_changes_total", float64(n),
			"project_id", testbin.SimProject, "object_type", typ, "kind", kind))
	}
	for k := range got {
		if want[k] == 0 {
			t.Errorf("%s: %d unexpected on the feed: %v", k, got[k], feed)
		}
	}
}

// TestChangesSimulateDemo: under --simulate the feed shows the demo's
// timeline from its first minute (here on short intervals), then the
// peering's recovery and the created service's deletion.
func TestChangesSimulateDemo(t *testing.T) {
	t.Parallel()
	simAddr := testbin.FreeAddr(t)
	_, url := testbin.StartExporter(t, nil, "--simulate", "--simulate.listen-address="+simAddr, "--collect.interval=2s", "--collect.transition-interval=1s")
	for _, want := range []struct{ typ, kind string }{
		{"service", "resized"}, {"service", "ha_changed"}, {"peering", "status_changed"}, {"service", "created"},
	} {
		testbin.WaitFor(t, 60*time.Second, want.typ+" "+want.kind+" on the demo's feed", func() bool {
			for _, c := range feedOf(t, url) {
				if c.ObjectType == want.typ && c.Kind == want.kind {
					return true
				}
			}
			return false
		})
	}
	// After the first poll of them, the peering recovers and the created
	// service is deleted (75 s after the start, and a deletion is confirmed
	// by a second read).
	testbin.WaitFor(t, 120*time.Second, "the peering's recovery and the created service's deletion", func() bool {
		errs, created, deleted := map[string]int{}, map[string]bool{}, false
		for _, c := range feedOf(t, url) {
			switch {
			case c.ObjectType == "peering" && c.Kind == "status_changed":
				errs[c.ObjectID]++
			case c.ObjectType == "service" && c.Kind == "created":
				created[c.ObjectID] = true
			case c.ObjectType == "service" && c.Kind == "deleted" && created[c.ObjectID]:
				deleted = true
			}
		}
		recovered := false
		for _, n := range errs {
			recovered = recovered || n >= 2
		}
		return recovered && deleted
	})
}
