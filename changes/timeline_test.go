package changes

import (
	"bufio"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/fleet"
)

func feed(t *testing.T, tl *Timeline, query string) (int, []Event, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	tl.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/changes"+query, nil))
	var events []Event
	if rec.Code != http.StatusOK {
		return rec.Code, nil, rec.Body.String()
	}
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		events = append(events, e)
	}
	return rec.Code, events, ""
}

func TestFeedValidatesItsQuery(t *testing.T) {
	tl := New(Options{})
	for _, q := range []string{"?foo=1", "?since=-1", "?since=x", "?limit=0", "?limit=10001", "?kind=exploded",
		"?project_id=", "?since=1&since=2", "?object_id=a%00b", "?a;b"} {
		code, _, body := feed(t, tl, q)
		var e feedError
		if code != http.StatusBadRequest || json.Unmarshal([]byte(body), &e) != nil || e.Code != "invalid_query" || e.Message == "" {
			t.Errorf("%s: %d %s, want 400 with {code,message}", q, code, body)
		}
	}
}

func TestFeedFiltersAndPages(t *testing.T) {
	tl := New(Options{Now: func() time.Time { return t0 }})
	d := newDiffer("p1")
	tl.differs["p1"] = d
	tl.Observe(snapAt(0, false, svc("a", "a", 1000, 4), svc("b", "b", 1000, 4)))
	tl.Observe(snapAt(1, false, svc("a", "a2", 2000, 4), svc("b", "b", 1000, 8)))
	_, all, _ := feed(t, tl, "")
	if len(all) != 3 {
		t.Fatalf("%d events, want 3: %v", len(all), kinds(all))
	}
	for i, e := range all {
		if e.Cursor != uint64(i+1) || e.ID == "" || e.Time.IsZero() || e.Source != SourcePoll {
			t.Errorf("event %d: %+v", i, e)
		}
	}
	if _, got, _ := feed(t, tl, "?since=1&limit=1"); len(got) != 1 || got[0].Cursor != 2 {
		t.Errorf("since=1&limit=1: %v", got)
	}
	rec := httptest.NewRecorder()
	tl.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/v1/changes?kind=renamed", nil))
	if rec.Header().Get("X-Changes-First-Cursor") != "1" || rec.Header().Get("X-Changes-Last-Cursor") != "3" ||
		rec.Header().Get("Content-Type") != "application/x-ndjson" {
		t.Errorf("headers %v", rec.Header())
	}
	if _, got, _ := feed(t, tl, "?object_id=b"); len(got) != 1 || got[0].ObjectID != "b" {
		t.Errorf("object_id=b: %v", got)
	}
	if _, got, _ := feed(t, tl, "?kind=renamed&project_id=p1"); len(got) != 1 || got[0].Kind != KindRenamed {
		t.Errorf("kind=renamed: %v", got)
	}
}

func TestRingBounds(t *testing.T) {
	tl := New(Options{MaxEvents: 2, Retention: time.Hour, Now: func() time.Time { return t0.Add(61*time.Minute + 30*time.Second) }})
	for i := range 3 {
		tl.mu.Lock()
		tl.recordLocked(Event{ProjectID: "p", ObjectType: TypeProject, ObjectID: "p", Kind: KindAdded, Time: t0.Add(time.Duration(i) * time.Minute)})
		tl.mu.Unlock()
	}
	// Two kept by count, then the one older than an hour leaves by age.
	if got := eventsOf(tl, Query{}); len(got) != 1 || got[0].Cursor != 3 {
		t.Errorf("kept %v", got)
	}
	if tl.metrics.drops[reasonRing] != 1 {
		t.Errorf("ring drops %v, want 1 (the age bound is no drop)", tl.metrics.drops[reasonRing])
	}
}

func TestFileKeepsFeedAndStateAcrossRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "changes.ndjson")
	open := func() *Timeline {
		tl := New(Options{Now: func() time.Time { return t0.Add(time.Hour) }})
		if err := tl.openFile(path, 1<<20, ""); err != nil {
			t.Fatal(err)
		}
		return tl
	}
	tl := open()
	tl.Observe(snapAt(0, false, svc("a", "a", 1000, 4), svc("b", "b", 1000, 4)))
	tl.Observe(snapAt(1, false, svc("a", "a", 2000, 4), svc("b", "b", 1000, 4)))
	tl.Close(t.Context())

	// Down from minute 1 to 10: a resized, b deleted, c created.
	tl = open()
	if got := eventsOf(tl, Query{}); len(got) != 1 || got[0].Kind != KindResized {
		t.Fatalf("after the restart the feed holds %v", kinds(got))
	}
	tl.Observe(snapAt(10, false, svc("a", "a", 4000, 4), svc("c", "c", 1000, 4)))
	tl.Observe(snapAt(11, false, svc("a", "a", 4000, 4), svc("c", "c", 1000, 4)))
	got := eventsOf(tl, Query{Since: 1})
	if strings.Join(kinds(got), " ") != "service/a/resized service/c/created service/b/deleted" {
		t.Fatalf("changes while down: %v", kinds(got))
	}
	if got[0].Cursor != 2 || !got[0].WindowStart.Equal(t0.Add(time.Minute)) {
		t.Errorf("cursor %d window_start %v: want 2 and the last read before the stop", got[0].Cursor, got[0].WindowStart)
	}
	tl.Close(t.Context())
}

func TestStateOfAnotherShardIsABaseline(t *testing.T) {
	path := filepath.Join(t.TempDir(), "changes.ndjson")
	tl := New(Options{})
	if err := tl.openFile(path, 1<<20, "0/2"); err != nil {
		t.Fatal(err)
	}
	tl.Observe(snapAt(0, false, svc("a", "a", 1000, 4)))
	tl.Close(t.Context())
	tl = New(Options{})
	if err := tl.openFile(path, 1<<20, "1/2"); err != nil {
		t.Fatal(err)
	}
	tl.Observe(snapAt(5, false, svc("b", "b", 1000, 4)))
	tl.Observe(snapAt(6, false, svc("b", "b", 1000, 4)))
	if got := eventsOf(tl, Query{}); len(got) != 0 {
		t.Errorf("another shard's state made %v", kinds(got))
	}
}

func TestFileRotatesOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "changes.ndjson")
	w, err := openEventFile(path, 2000)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		e := Event{Cursor: uint64(i + 1), ProjectID: "p", Kind: KindAdded}
		if err := w.append(&e); err != nil {
			t.Fatal(err)
		}
	}
	_ = w.close()
	var cursors []uint64
	if _, err := readEvents(path, func(e Event) { cursors = append(cursors, e.Cursor) }); err != nil {
		t.Fatal(err)
	}
	if len(cursors) == 0 || cursors[len(cursors)-1] != 40 || len(cursors) >= 40 {
		t.Errorf("kept %v: want the newest, fewer than all", cursors)
	}
	for i := 1; i < len(cursors); i++ {
		if cursors[i] != cursors[i-1]+1 {
			t.Errorf("not in order: %v", cursors)
		}
	}
}

func TestActorFollowsAnAdminWrite(t *testing.T) {
	now := t0
	tl := New(Options{Now: func() time.Time { return now }})
	tl.Observe(snapAt(0, false, svc("a", "a", 1000, 4), svc("b", "b", 1000, 4)))
	tl.ObserveWrite("p1", []string{"a", ""}, "alice")
	tl.Observe(snapAt(1, false, svc("a", "a", 2000, 4), svc("b", "b", 2000, 4)))
	got := eventsOf(tl, Query{})
	if len(got) != 2 || got[0].Actor != "alice" || got[0].Source != SourceAdmin || got[1].Actor != "" || got[1].Source != SourcePoll {
		t.Errorf("events %+v", got)
	}
}

func eventsOf(tl *Timeline, q Query) []Event {
	events, _, _ := tl.events(q)
	return events
}

// The embedded simulator is a new API at each start: a state saved against
// the last one must not be compared with it (its reset is no change).
func TestStateNotComparedWithAFreshAPI(t *testing.T) {
	path := filepath.Join(t.TempDir(), "changes.ndjson")
	open := func(fresh bool) *Timeline {
		f := &Flags{Enabled: true, retention: 1 << 62, maxEvents: DefaultMaxEvents, file: path, fileMaxSize: 1 << 20, FreshAPI: fresh}
		tl, err := f.Open(slog.New(slog.DiscardHandler), "", nil)
		if err != nil {
			t.Fatal(err)
		}
		return tl
	}
	tl := open(false)
	tl.Observe(snapAt(0, false, svc("a", "a", 1000, 4)))
	tl.Observe(snapAt(1, false, svc("a", "a", 2000, 4)))
	tl.Close(t.Context())

	tl = open(true)
	defer tl.Close(t.Context())
	tl.Observe(snapAt(10, false, svc("b", "b", 1000, 4)))
	tl.Observe(snapAt(11, false, svc("b", "b", 1000, 4)))
	got := eventsOf(tl, Query{})
	if len(got) != 1 || got[0].Kind != KindResized || got[0].Cursor != 1 {
		t.Fatalf("with a fresh API the feed holds %v: want the file's one resize and nothing compared with the saved state", kinds(got))
	}
	tl.Observe(snapAt(12, false, svc("b", "b", 2000, 4)))
	if got := eventsOf(tl, Query{Since: 1}); len(got) != 1 || got[0].Cursor != 2 {
		t.Errorf("after the baseline: %v, want one resize at cursor 2", kinds(got))
	}
}

// The API has no call that renames a replica set, so no whole-binary test
// can drive one: its renamed is tested here, while the exporter runs and
// across a restart with the file.
func TestReplicaSetRenamedAcrossRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "changes.ndjson")
	open := func() *Timeline {
		tl := New(Options{Now: func() time.Time { return t0.Add(time.Hour) }})
		if err := tl.openFile(path, 1<<20, ""); err != nil {
			t.Fatal(err)
		}
		return tl
	}
	named := func(name string) fleet.ReplicaSet {
		r := rs("r1", 1)
		r.Name = name
		return r
	}
	tl := open()
	tl.Observe(rsSnap(0, 1, 1, false, named("r1")))
	tl.Observe(rsSnap(1, 1, 1, false, named("reporting")))
	got := eventsOf(tl, Query{})
	if len(got) != 1 || kinds(got)[0] != "replica_set/r1/renamed" || got[0].Before["name"] != "r1" || got[0].After["name"] != "reporting" || got[0].ParentID != "a" {
		t.Fatalf("while running: %+v", got)
	}
	tl.Close(t.Context())

	// Down from minute 1 to 10, renamed again meanwhile.
	tl = open()
	defer tl.Close(t.Context())
	tl.Observe(rsSnap(10, 1, 1, false, named("reports")))
	got = eventsOf(tl, Query{Since: 1})
	if len(got) != 1 || kinds(got)[0] != "replica_set/r1/renamed" || got[0].After["name"] != "reports" {
		t.Fatalf("across the restart: %v", kinds(got))
	}
	// The replica sets' part was last read a second after minute 1's poll.
	if !got[0].WindowStart.Equal(t0.Add(time.Minute + time.Second)) {
		t.Errorf("window_start %v, want the last read before the stop", got[0].WindowStart)
	}
}
