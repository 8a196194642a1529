package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/exporter-toolkit/web"

	"github.com/clouddb/clouddb_exporter/changes"
	"github.com/clouddb/clouddb_exporter/dataplane"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/dataplanetest"
)

// TestStatusPage: the landing page shows each project's state from its
// snapshot (parts, errors, access, data age, budget, data plane), keeps
// the links, and escapes whatever the API sent.
func TestStatusPage(t *testing.T) {
	snaps := dataplanetest.Snapshots()
	a, b := *snaps[0], *snaps[1]
	a.Parts = append([]fleet.PartHealth(nil), a.Parts...)
	a.Parts[1].LastError = `apiclient: listReplicaSets: 500 <script>alert(1)</script>`
	a.Budget = fleet.Budget{Needed: 54, Planned: 27, PerInterval: 30, RefreshPeriod: 90 * time.Second}
	b.ProjectName = `Project <b>B</b>`
	b.Access = fleet.Access{Known: true, Up: false, Cause: fleet.CauseCredentials}
	b.Budget = fleet.Budget{Needed: 4, Planned: 4, PerInterval: -1, RefreshPeriod: time.Minute}
	now := a.Read.Add(90 * time.Second)
	h := newStatusPage(statusPage{
		snapshots: func() []*fleet.Snapshot { return []*fleet.Snapshot{&a, &b} },
		notReady:  func() string { return "the API refuses project proj-b (credentials)" },
		links:     []web.LandingLinks{{Address: "/metrics", Text: "Metrics"}, {Address: "/-/healthy", Text: "Health"}},
		now:       func() time.Time { return now },
	})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	body, _ := io.ReadAll(rec.Body)
	page := string(body)
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("status %d, content type %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	for _, want := range []string{
		`href="/metrics"`, `href="/-/healthy"`, "Not ready: the API refuses project proj-b (credentials)",
		"proj-a", "Project &lt;b&gt;B&lt;/b&gt;", "proj-b",
		"replica_sets", "peerings", "usage", "logs",
		"500 &lt;script&gt;alert(1)&lt;/script&gt;",
		"down: credentials", "1m30s", // proj-a's data is 90s old
		"27 of 54 calls per cycle (30 allowed)", "every 1m30s", "4 of 4 calls per cycle (no limit)",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, unwanted := range []string{"<script>", "<b>B</b>"} {
		if strings.Contains(page, unwanted) {
			t.Errorf("the page shows %q unescaped", unwanted)
		}
	}
	// proj-a read both, proj-b neither; another reader would be off in both.
	for _, title := range []string{"Usage series", "Log counts"} {
		on, off := strings.Count(page, title+"</th><td>on<"), strings.Count(page, title+`</th><td><span class="off">off`)
		if on != 1 || off != 1 {
			t.Errorf("%s: on %d, off %d times, want once each (proj-a's, proj-b's)", title, on, off)
		}
	}
}

// TestStatusPageNoProject: before the first snapshot the page says so.
func TestStatusPageNoProject(t *testing.T) {
	h := newStatusPage(statusPage{snapshots: func() []*fleet.Snapshot { return nil }, notReady: func() string { return "" }, now: time.Now})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	if page := rec.Body.String(); rec.Code != http.StatusOK || !strings.Contains(page, "No project has been polled yet") || !strings.Contains(page, "Ready") {
		t.Errorf("status %d, page:\n%s", rec.Code, page)
	}
}

// TestStatusPageReaderNotReadYet: a reader that is on but has read nothing
// yet (its data is nil in the snapshot) shows as on, not off.
func TestStatusPageReaderNotReadYet(t *testing.T) {
	s := *dataplanetest.Snapshots()[1]
	h := newStatusPage(statusPage{
		snapshots: func() []*fleet.Snapshot { return []*fleet.Snapshot{&s} },
		notReady:  func() string { return "" },
		now:       time.Now,
		dataPlane: func(_, part string) bool { return part == dataplane.PartUsage },
	})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
	page := rec.Body.String()
	if !strings.Contains(page, "Usage series</th><td>on, nothing read yet") || !strings.Contains(page, `Log counts</th><td><span class="off">off`) {
		t.Errorf("want usage on with nothing read yet and logs off:\n%s", page)
	}
}

// TestStatusPageChanges: each project lists its latest changes in plain
// words, newest first, escaped; none at all with --no-changes.
func TestStatusPageChanges(t *testing.T) {
	snaps := dataplanetest.Snapshots()
	start := snaps[0].Read
	latest := func(projectID string, n int) []changes.Event {
		if projectID != snaps[0].ProjectID || n != 50 {
			return nil
		}
		return []changes.Event{
			{ObjectType: changes.TypeService, ObjectName: "<i>db</i>", Kind: changes.KindRenamed, Time: start.Add(time.Minute), WindowStart: &start,
				Before: changes.Fields{"name": "a"}, After: changes.Fields{"name": "<i>db</i>"}},
			{ObjectType: changes.TypeService, ObjectName: "a", Kind: changes.KindResized, Time: start, WindowStart: &start,
				Before: changes.Fields{"cpu_millis": int64(2000), "memory_gbs": int64(8)}, After: changes.Fields{"cpu_millis": int64(1000), "memory_gbs": int64(4)}},
		}
	}
	page := func(changes func(string, int) []changes.Event) string {
		h := newStatusPage(statusPage{snapshots: func() []*fleet.Snapshot { return snaps }, notReady: func() string { return "" },
			now: func() time.Time { return start }, changes: changes})
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		return rec.Body.String()
	}
	got := page(latest)
	renamed := strings.Index(got, "service &lt;i&gt;db&lt;/i&gt; renamed a -&gt; &lt;i&gt;db&lt;/i&gt;")
	resized := strings.Index(got, "service a resized 2 CPU / 8 GB -&gt; 1 CPU / 4 GB")
	if renamed < 0 || resized < renamed {
		t.Errorf("the changes are not listed newest first, escaped:\n%s", got)
	}
	if !strings.Contains(got, "No change seen yet") {
		t.Errorf("the second project does not say it has no change yet")
	}
	if got := page(nil); strings.Contains(got, "Latest changes") {
		t.Errorf("--no-changes still lists changes")
	}
}
