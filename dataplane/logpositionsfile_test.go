package dataplane

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// oldSaved is a cursor's position as the exporter saved it while the
// positions were kept as maps, and json.Marshal wrote them.
func oldSaved(c *logCursor) fileCursor {
	fc := fileCursor{Boundary: unixTime(c.boundary), ReadUntil: unixTime(c.readUntil), AtBoundary: map[string]int{}, Counts: map[string]float64{}}
	for i, sev := range LogSeverities {
		if n, ok := c.counts.Count(i); ok {
			fc.Counts[sev] = n
		}
	}
	for _, k := range c.recent {
		if k.ts() == c.boundary {
			fc.AtBoundary[strconv.FormatUint(uint64(k.key), 16)]++
		}
	}
	return fc
}

// oldResumeCursor is resumeCursor as it was, on a position parsed as it was.
func oldResumeCursor(id string, fc fileCursor, until time.Time) (*logCursor, time.Duration) {
	var skipped time.Duration
	from := until.Add(-MaxLogResume)
	boundary := fc.Boundary.UTC()
	switch {
	case boundary.After(until):
		boundary = until
	case boundary.Before(from):
		boundary = from
		skipped = max(from.Sub(fc.ReadUntil), 0)
	}
	c := newLogCursor(id, boundary)
	for sev, n := range fc.Counts {
		c.counts.Set(severityIndex(sev), n)
	}
	if boundary.Equal(fc.Boundary) {
		for k, n := range fc.AtBoundary {
			key, _ := strconv.ParseUint(k, 16, 64)
			for range n {
				c.recent = append(c.recent, at(c.boundary, foldKey(key)))
			}
		}
		slices.SortFunc(c.recent, compareEntries)
	}
	c.readUntil = minTime(maxTime(fc.ReadUntil, boundary), until).UnixNano()
	return c, skipped
}

// oddCursors are positions whose JSON takes json.Marshal's less common
// paths: escaped ids, keys whose hex order is not their numeric order, a
// key counted more than once, no key, counts in exponent form, no counts.
func oddCursors() map[string]*logCursor {
	b := time.Date(2026, 3, 1, 11, 59, 30, 123456789, time.UTC)
	cursors := map[string]*logCursor{}
	for i, id := range []string{"svc-a", `q"uote<&>`, "ünï", "bad\xffutf8", "tab\there", ""} {
		c := newLogCursor(id, b.Add(time.Duration(i)*time.Second))
		cursors[id] = c
		switch i {
		case 0:
			for _, k := range []uint32{0x9, 0xa, 0x10, 0x10, 0x10, 0xffffffff, 0} {
				c.recent = append(c.recent, at(c.boundary, k))
			}
			c.recent = append([]entryAt{at(c.boundary-1, 7)}, c.recent...)
			slices.SortFunc(c.recent, compareEntries)
			c.counts.Set(severityIndex("ERROR"), 1e21)
			c.counts.Set(severityIndex("OTHER"), 1.5e-7)
			c.counts.Set(severityIndex("DEBUG3"), 12345678.5)
		case 1:
			c.counts = NewServiceLogs(&id)
		case 2:
			c.readUntil = c.boundary + int64(time.Hour)
		}
	}
	return cursors
}

// TestLogPositionsWrittenAsBefore: the file streamed service by service is
// byte for byte what json.Marshal made of the maps the positions were
// kept as, so that a file of either reads in the other.
func TestLogPositionsWrittenAsBefore(t *testing.T) {
	l := savingReader(t, t.TempDir(), 50, 2)
	maps.Copy(l.cursors, oddCursors())
	old := positionsFile{Format: positionsFormat, Version: positionsVersion, Projects: map[string]fileProject{}}
	services := map[string]fileCursor{}
	for id, c := range l.cursors {
		services[id] = oldSaved(c)
	}
	old.Projects["p1"] = fileProject{APIURL: testAPI, Services: services}
	old.Projects["p<0>"] = fileProject{APIURL: "http://other.example.net/v1", Services: map[string]fileCursor{}}
	want, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	l.savePositions()
	pos := l.opts.Positions
	pos.save("p<0>", "http://other.example.net/v1", nil)
	var got bytes.Buffer
	if err := writePositions(&got, pos.projects, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("the file differs from json.Marshal's:\n got %s\nwant %s", got.Bytes(), want)
	}
	for _, c := range l.cursors {
		if !c.shared {
			t.Fatalf("a cursor's counts are saved but not marked shared: it would change them in place")
		}
	}
}

// TestLogPositionsReadAsBefore: a file the exporter wrote before resumes
// each service as it did, the times beyond what Unix nanoseconds hold
// (a file of another clock, or edited) included; and what the exporter
// writes now reads back the same.
func TestLogPositionsReadAsBefore(t *testing.T) {
	until := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	east := time.FixedZone("east", 5*3600)
	services := map[string]fileCursor{}
	for id, c := range oddCursors() {
		services[id] = oldSaved(c)
	}
	// Its id reads back with U+FFFD, before and now: the API's ids are UTF-8.
	delete(services, "bad\xffutf8")
	for name, times := range map[string][2]time.Time{
		"far past":           {time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC), time.Date(1, 1, 1, 0, 0, 2, 0, time.UTC)},
		"far future":         {time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)},
		"read in the past":   {until.Add(-time.Minute), time.Date(1, 1, 1, 0, 0, 1, 0, time.UTC)},
		"read long ago":      {until.Add(-5 * time.Hour), until.Add(-4 * time.Hour)},
		"another zone":       {until.Add(-time.Minute).In(east), until.Add(-time.Second).In(east)},
		"read in the future": {until.Add(-time.Minute), time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		services[name] = fileCursor{Boundary: times[0], ReadUntil: times[1], Counts: map[string]float64{"LOG": 3},
			AtBoundary: map[string]int{"ff": 2, strconv.FormatUint(0x1234_5678_9abc_def0, 16): 1}}
	}
	b, err := json.Marshal(positionsFile{Format: positionsFormat, Version: positionsVersion,
		Projects: map[string]fileProject{"p1": {APIURL: testAPI, Services: services}}})
	if err != nil {
		t.Fatal(err)
	}
	projects, err := parsePositions(b)
	if err != nil {
		t.Fatal(err)
	}
	saved := projects["p1"].services
	if len(saved) != len(services) || projects["p1"].apiURL != testAPI {
		t.Fatalf("%d services of %s read, want %d of %s", len(saved), projects["p1"].apiURL, len(services), testAPI)
	}
	for id, fc := range services {
		sc, ok := saved.find(id)
		if !ok {
			t.Fatalf("service %q not found", id)
		}
		got, gotSkipped := resumeCursor(id, sc, until)
		want, wantSkipped := oldResumeCursor(id, fc, until)
		if !sameCursor(got, want) || gotSkipped != wantSkipped {
			t.Errorf("service %q resumes as %+v %v, skipped %v; before as %+v %v, skipped %v",
				id, got, got.counts, gotSkipped, want, want.counts, wantSkipped)
		}
	}
	var again bytes.Buffer
	if err := writePositions(&again, projects, nil); err != nil {
		t.Fatal(err)
	}
	reread, err := parsePositions(again.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	for i, sc := range reread["p1"].services {
		if !sameSaved(sc, saved[i]) {
			t.Errorf("written and read again, %+v became %+v", saved[i], sc)
		}
	}
}

func sameCursor(a, b *logCursor) bool {
	return a.boundary == b.boundary && a.lateFrom == b.lateFrom && a.readUntil == b.readUntil &&
		slices.Equal(a.recent, b.recent) && a.counts.Equal(b.counts)
}

func sameSaved(a, b savedCursor) bool {
	return a.boundary == b.boundary && a.readUntil == b.readUntil && a.counts.Equal(b.counts) && slices.Equal(a.atBoundary, b.atBoundary)
}

// TestLogPositionsWrittenWhileSaving: the file is written outside the
// lock from the positions saved, which the passes saving meanwhile and
// the cursors counting on never change (run with -race); the last write
// holds the last pass's counts.
func TestLogPositionsWrittenWhileSaving(t *testing.T) {
	path := filepath.Join(t.TempDir(), "positions.json")
	h := newLogsHarness(t, 3, 5)
	pos := h.restart(t, path, 0, testAPI)
	h.tick()
	done := make(chan struct{})
	writes := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-done:
				writes <- n
				return
			default:
				pos.mu.Lock()
				pos.dirty = true
				pos.mu.Unlock()
				pos.write()
				n++
			}
		}
	}()
	for i := range 5 {
		h.fl.add("svc01", h.clock.Now().Add(-time.Second), "ERROR", fmt.Sprint("m", i), 2)
		h.tick()
	}
	close(done)
	if n := <-writes; n == 0 {
		t.Fatal("no write ran beside the passes")
	}
	pos.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	projects, err := parsePositions(b)
	if err != nil {
		t.Fatal(err)
	}
	sc, ok := projects["p1"].services.find("svc01")
	if n, _ := sc.counts.Count(severityIndex("ERROR")); !ok || n != 10 {
		t.Errorf("the file holds %v ERROR entries of svc01, want 10", n)
	}
}

// TestLogPositionsWriteFailureRetried: a write that fails is logged once,
// however many fail, and retried until one succeeds, which is logged too.
func TestLogPositionsWriteFailureRetried(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "positions.json")
	h := newLogsHarness(t, 2, 5)
	pos := h.restart(t, path, 0, testAPI)
	h.tick()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		h.tick()
		pos.write()
	}
	if n := strings.Count(h.logs.String(), "Cannot write the log state file"); n != 1 {
		t.Errorf("%d lines about the failed writes, want 1:\n%s", n, h.logs)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	pos.write() // nothing saved since the last failure
	if !strings.Contains(h.logs.String(), "The log state file is written again") {
		t.Errorf("the write after the failures was not retried or not logged:\n%s", h.logs)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if projects, err := parsePositions(b); err != nil || len(projects["p1"].services) != 2 {
		t.Errorf("the file written after the failures holds %v, %v; want 2 services", projects, err)
	}
}
