package e2e

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// listCalls sums the services lists the exporter at url made, any outcome.
func listCalls(url string) float64 {
	_, body := testbin.Get(url + "/metrics")
	sum := 0.0
	for line := range strings.Lines(body) {
		if strings.HasPrefix(line, "clouddb_exporter_api_requests_total{") && strings.Contains(line, `operation="listServices"`) {
			f := strings.Fields(line)
			v, _ := strconv.ParseFloat(f[len(f)-1], 64)
			sum += v
		}
	}
	return sum
}

// waitCycles waits for n more full poll cycles of the exporter at url (the
// services list is made once a cycle, retries aside).
func waitCycles(t *testing.T, url string, n float64) {
	t.Helper()
	start := listCalls(url)
	testbin.WaitFor(t, 60*time.Second, strconv.Itoa(int(n))+" more poll cycles", func() bool {
		return listCalls(url) >= start+n
	})
}

// TestChangesNoFalseEvents: an API outage, lists that do not decode or are
// cut, and services created and deleted while the list is cut leave the
// feed empty, since nothing that was read whole changed.
func TestChangesNoFalseEvents(t *testing.T) {
	t.Parallel()
	sim := testbin.StartSim(t, instantSim...)
	s := testbin.SimAt(sim)
	services := len(s.ServiceIDs(t))
	_, url := testbin.StartExporter(t, s.Env(), changesArgs("--collect.max-resources-per-list="+strconv.Itoa(services))...)
	waitCycles(t, url, 2)

	s.Fault(t, `{"status":500,"count":40}`)
	testbin.WaitFor(t, 60*time.Second, "the outage", testbin.MetricEquals(url+"/metrics", "clouddb_up", 0, "project_id", testbin.SimProject))
	s.ClearFaults(t)
	s.Fault(t, `{"operation":"listServices","malformed":true,"count":3}`)
	s.Fault(t, `{"operation":"listVPCs","truncated":true,"count":3}`)
	s.Fault(t, `{"operation":"listReplicaSets","status":429,"count":5}`)
	s.Fault(t, `{"operation":"listPeerings","status":503,"count":5}`)
	waitCycles(t, url, 4)

	// The list holds as many services as it may: one more cuts it (the two
	// creations cannot be made at once, and a whole list between them would
	// truly show the first), it fails, and
	// nothing is created or deleted; they go before it is whole again.
	var a, b struct {
		ServiceID string `json:"service_id"`
	}
	p := "/projects/" + testbin.SimProject
	body := `{"name":"extra","addons":["time-series"],"region_code":"us-east-1","cpu_millis":1000,"memory_gbs":4}`
	s.APIWrite(t, "POST", p+"/services", body, 202, &a)
	s.APIWrite(t, "POST", p+"/services", body, 202, &b)
	testbin.WaitFor(t, 60*time.Second, "the cut list", testbin.MetricEquals(url+"/metrics", "clouddb_exporter_collector_success", 0,
		"project_id", testbin.SimProject, "collector", "services"))
	waitCycles(t, url, 2)
	s.APIWrite(t, "DELETE", p+"/services/"+a.ServiceID, ``, 202, nil)
	s.APIWrite(t, "DELETE", p+"/services/"+b.ServiceID, ``, 202, nil)
	testbin.WaitFor(t, 60*time.Second, "the whole list again", testbin.MetricEquals(url+"/metrics", "clouddb_exporter_collector_success", 1,
		"project_id", testbin.SimProject, "collector", "services"))
	waitCycles(t, url, 3)

	// A real change still comes through, alone: the timeline was comparing
	// all along (an empty feed alone would also pass with none).
	var vpc struct {
		ID string `json:"id"`
	}
	s.APIWrite(t, "POST", p+"/vpcs", `{"name":"control","cidr":"10.40.0.0/16","region_code":"us-east-1"}`, 201, &vpc)
	waitChange(t, url, "vpc", vpc.ID, "created")
	if feed := feedOf(t, url); len(feed) != 1 {
		t.Errorf("false events: %+v", feed)
	}
}

// TestChangesAcrossRestartAndTwoExporters: two exporters watching one
// project give a change the same id; one restarted with --changes.file keeps
// its feed and cursors and reports what changed while it was down, once.
func TestChangesAcrossRestartAndTwoExporters(t *testing.T) {
	t.Parallel()
	sim := testbin.StartSim(t, instantSim...)
	s := testbin.SimAt(sim)
	file := filepath.Join(t.TempDir(), "changes.ndjson")
	procA, urlA := testbin.StartExporter(t, s.Env(), changesArgs("--changes.file="+file)...)
	_, urlB := testbin.StartExporter(t, s.Env(), changesArgs()...)
	waitCycles(t, urlA, 2)
	waitCycles(t, urlB, 2)

	id := s.ServiceIDs(t)[0]
	sp := "/projects/" + testbin.SimProject + "/services/" + id
	s.APIWrite(t, "POST", sp+"/setEnvironment", `{"environment":"DEV"}`, 200, nil)
	s.APIWrite(t, "POST", sp+"/setEnvironment", `{"environment":"PROD"}`, 200, nil)
	s.APIWrite(t, "POST", sp+"/rename", `{"name":"before-the-stop"}`, 200, nil)
	x := waitChange(t, urlA, "service", id, "renamed")
	if xb := waitChange(t, urlB, "service", id, "renamed"); xb.ID != x.ID {
		t.Errorf("two exporters, one change, ids %s and %s", x.ID, xb.ID)
	}

	if err := procA.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := procA.Wait(t, 30*time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if _, err := os.Stat(file + ".state"); err != nil {
		t.Fatalf("no state saved at the stop: %v", err)
	}
	s.APIWrite(t, "POST", sp+"/rename", `{"name":"while-down"}`, 200, nil)
	yb := waitChange(t, urlB, "service", id, "renamed")
	for yb.After["name"] != "while-down" {
		feed := feedOf(t, urlB)
		yb = feed[len(feed)-1]
	}

	_, urlA = testbin.StartExporter(t, s.Env(), changesArgs("--changes.file="+file)...)
	testbin.WaitFor(t, 60*time.Second, "the change made while down", func() bool {
		return len(feedOf(t, urlA)) >= 2
	})
	waitCycles(t, urlA, 3)
	feed := feedOf(t, urlA)
	var renames []change
	for _, c := range feed {
		if c.Kind == "renamed" {
			renames = append(renames, c)
		}
	}
	if len(renames) != 2 || renames[0].Cursor != x.Cursor || renames[0].ID != x.ID || renames[1].ID != yb.ID || renames[1].Cursor <= x.Cursor {
		t.Errorf("after the restart: %+v; want %+v kept and the rename made while down (id %s) once", renames, x, yb.ID)
	}
	if len(feed) != 2 {
		t.Errorf("feed %+v", feed)
	}
}

// TestChangesKeyRotatedAndProjectAdded: a key rotation picked up from the
// key files is one api_key rotated event; a project the discovery finds
// later is one project added event, one a reload drops one project removed.
func TestChangesKeyRotatedAndProjectAdded(t *testing.T) {
	t.Parallel()
	t.Run("rotated", func(t *testing.T) {
		t.Parallel()
		const newAccess, newSecret, newAPIKey = "rotated-access-key", "rotated-secret-value", "rotated-api-key-value"
		s := testbin.SimAt(testbin.StartSim(t, instantSim...))
		dir := t.TempDir()
		apiKeyFile := filepath.Join(t.TempDir(), "api-key")
		writeKey := func(v string) {
			if err := os.WriteFile(apiKeyFile+".tmp", []byte(v+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(apiKeyFile+".tmp", apiKeyFile); err != nil {
				t.Fatal(err)
			}
		}
		writeKey(testbin.SimAPIKey)
		env := append([]string{"CLOUDDB_API_URL=" + s.URL + "/v1", "CLOUDDB_API_PROJECT_ID=" + testbin.SimProject},
			keyFiles(t, dir, testbin.SimAccessKey, testbin.SimSecretKey)...)
		_, url := testbin.StartExporter(t, env, changesArgs("--api.credentials-check-interval=300ms", "--api.key-file="+apiKeyFile)...)
		waitCycles(t, url, 2)
		s.IssueCredential(t, testbin.SimAccessKey, newAccess, newSecret, newAPIKey)
		keyFiles(t, dir, newAccess, newSecret)
		writeKey(newAPIKey)
		waitChange(t, url, "api_key", "api_key", "rotated")
		waitCycles(t, url, 2)
		if got := kindCounts(feedOf(t, url)); got["api_key/rotated"] != 1 || len(got) != 1 {
			t.Errorf("feed %v, want one rotation", got)
		}
		if _, body := testbin.Get(url + "/api/v1/changes"); strings.Contains(body, newAccess) || strings.Contains(body, testbin.SimAccessKey) {
			t.Errorf("a key is on the feed: %s", body)
		}
		testbin.WaitFor(t, 10*time.Second, "the rotation counted", testbin.MetricEquals(url+"/metrics", "clouddb_changes_total", 1,
			"project_id", testbin.SimProject, "object_type", "api_key", "kind", "rotated"))
	})
	t.Run("added", func(t *testing.T) {
		t.Parallel()
		s := testbin.SimAt(testbin.StartSim(t, "--extra-project-id=second-project"))
		env := []string{"CLOUDDB_API_URL=" + s.URL + "/v1", "CLOUDDB_ACCESS_KEY=" + testbin.SimAccessKey, "CLOUDDB_SECRET_KEY=" + testbin.SimSecretKey}
		_, url := testbin.StartExporter(t, env, changesArgs()...)
		waitCycles(t, url, 1)
		s.AddProject(t, "third-project")
		c := waitChange(t, url, "project", "third-project", "added")
		if c.ProjectID != "third-project" {
			t.Errorf("event %+v", c)
		}
		if got := kindCounts(feedOf(t, url)); got["project/added"] != 1 {
			t.Errorf("feed %v, want one project added (the first projects are a baseline)", got)
		}
		testbin.WaitFor(t, 10*time.Second, "the project added counted", testbin.MetricEquals(url+"/metrics", "clouddb_changes_total", 1,
			"project_id", "third-project", "object_type", "project", "kind", "added"))
	})
	t.Run("removed", func(t *testing.T) {
		t.Parallel()
		s := testbin.SimAt(testbin.StartSim(t, "--extra-project-id=second-project"))
		dir := t.TempDir()
		keyFiles(t, dir, testbin.SimAccessKey, testbin.SimSecretKey)
		cfg := filepath.Join(dir, "clouddb.yml")
		write := func(ids ...string) {
			var b strings.Builder
			b.WriteString("projects:\n")
			for _, id := range ids {
				b.WriteString("  - id: " + id + "\n    access_key_file: " + filepath.Join(dir, "access") + "\n    secret_key_file: " + filepath.Join(dir, "secret") + "\n")
			}
			if err := os.WriteFile(cfg, []byte(b.String()), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		write(testbin.SimProject, "second-project")
		p, url := testbin.StartExporter(t, []string{"CLOUDDB_API_URL=" + s.URL + "/v1"}, changesArgs("--config.file="+cfg)...)
		waitCycles(t, url, 1)
		write(testbin.SimProject)
		if err := p.Signal(syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		c := waitChange(t, url, "project", "second-project", "removed")
		if c.ProjectID != "second-project" {
			t.Errorf("event %+v", c)
		}
		waitCycles(t, url, 1)
		if got := kindCounts(feedOf(t, url)); got["project/removed"] != 1 || len(got) != 1 {
			t.Errorf("feed %v, want one project removed and nothing else", got)
		}
	})
}

// TestChangesSinkToLoki: the built exporter pushes its changes to a Loki
// push API, retrying a refused push, and flushes on SIGTERM.
func TestChangesSinkToLoki(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var lines []string
	calls := 0
	loki := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 1 || r.URL.Path != "/loki/api/v1/push" {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		var push struct {
			Streams []struct {
				Stream map[string]string `json:"stream"`
				Values [][2]string       `json:"values"`
			} `json:"streams"`
		}
		if err := json.NewDecoder(r.Body).Decode(&push); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		for _, s := range push.Streams {
			for _, v := range s.Values {
				lines = append(lines, s.Stream["kind"]+" "+v[1])
			}
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer loki.Close()
	s := testbin.SimAt(testbin.StartSim(t, instantSim...))
	p, url := testbin.StartExporter(t, s.Env(), changesArgs("--changes.sink.url="+loki.URL+"/loki/api/v1/push")...)
	waitCycles(t, url, 2)
	id := s.ServiceIDs(t)[0]
	s.APIWrite(t, "POST", "/projects/"+testbin.SimProject+"/services/"+id+"/rename", `{"name":"pushed"}`, 200, nil)
	waitChange(t, url, "service", id, "renamed")
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.Wait(t, 30*time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lines) != 1 || !strings.HasPrefix(lines[0], "renamed {") || !strings.Contains(lines[0], `"name":"pushed"`) || calls < 2 {
		t.Errorf("%d pushes, lines %q: want the rename once, after a refused push", calls, lines)
	}
}

// TestChangesRestartedFromLogs: a log entry saying the database is ready to
// accept connections is one restarted event, dated by the entry.
func TestChangesRestartedFromLogs(t *testing.T) {
	t.Parallel()
	sim, id := quietOrdersDB(t)
	_, url := testbin.StartExporter(t, sim.Env(), "--collect.logs", "--collect.min-data-interval=1s", "--collect.logs.interval=1s",
		"--collect.logs.service-name-regex=orders-db", "--api.rate-limit=1000", "--collect.interval=1s")
	testbin.WaitFor(t, 60*time.Second, "the first log read", testbin.MetricEquals(url+"/metrics", "clouddb_service_log_entries_total", 0,
		"service_id", id, "severity", "LOG"))
	sim.AddLogEntries(t, id, []map[string]string{
		{"severity": "LOG", "message": "database system was shut down at 2026-03-01 03:04:00 UTC"},
		{"severity": "LOG", "message": "database system is ready to accept connections"},
	}, -1)
	c := waitChange(t, url, "service", id, "restarted")
	if c.Source != "logs" {
		t.Errorf("restarted event %+v", c)
	}
	testbin.WaitFor(t, 60*time.Second, "more log reads", testbin.MetricEquals(url+"/metrics", "clouddb_service_log_entries_total", 2,
		"service_id", id, "severity", "LOG"))
	waitCycles(t, url, 3)
	if got := kindCounts(feedOf(t, url)); got["service/restarted"] != 1 {
		t.Errorf("feed %v, want one restart", got)
	}
	testbin.WaitFor(t, 10*time.Second, "the restart counted", testbin.MetricEquals(url+"/metrics", "clouddb_changes_total", 1,
		"project_id", testbin.SimProject, "object_type", "service", "kind", "restarted"))
}
