package dataplane

import (
	"bytes"
	"encoding/json"
	"hash/fnv"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const testAPI = "http://api.example.net/v1"

// restart stops h's reader as a shutdown does (the state file written at
// Close), lets down pass, and starts a new reader on the same fake API and
// clock from the file at path, as the next process does.
func (h *logsHarness) restart(t *testing.T, path string, down time.Duration, apiURL string) *LogPositions {
	t.Helper()
	if h.l.opts.Positions != nil {
		h.l.opts.Positions.Close()
	}
	h.clock.Advance(down)
	pos, err := OpenLogPositions(path, slog.New(slog.NewTextHandler(h.logs, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	h.host = newFakeHost(len(h.host.services))
	opts := h.l.opts
	opts.Positions, opts.APIURL = pos, apiURL
	h.l = newLogsReader(newRunner(h.host, opts, PartLogs, logsKey.Of(opts.Collect).Interval), h.fl)
	h.l.unpaced = true
	return pos
}

// TestLogPositionsResume: with a state file, the entries written while
// the exporter was down are counted by the first read after the restart
// and the counters go on from where they stopped: the increase across the
// restart is what was written, entries at the saved boundary included,
// and nothing is counted twice.
func TestLogPositionsResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "positions.json")
	h := newLogsHarness(t, 2, 5)
	h.restart(t, path, 0, testAPI)
	h.tick()
	t0 := h.clock.Now()
	h.fl.add("svc00", t0.Add(-20*time.Second), "ERROR", "before", 3)
	h.fl.add("svc00", t0.Add(-10*time.Second), "DEBUG1", "d", 1)
	h.fl.add("svc01", t0.Add(-10*time.Second), "FATAL", "boundary", 2)
	h.tick()
	h.tick()
	if l := logsOf(h.host.Snapshot()); count(l, "svc00", "ERROR") != 3 || count(l, "svc00", "DEBUG1") != 1 || count(l, "svc01", "FATAL") != 2 {
		t.Fatalf("before the restart: %v", l.Counts)
	}

	// Down for 15 minutes: entries written then, one more at svc01's
	// boundary timestamp (delivered late, exactly there).
	h.fl.add("svc00", h.clock.Now().Add(5*time.Minute), "ERROR", "while down", 4)
	h.fl.add("svc01", t0.Add(-10*time.Second), "FATAL", "boundary", 1)
	h.restart(t, path, 15*time.Minute, testAPI)
	l := h.tick()
	if count(l, "svc00", "ERROR") != 7 || count(l, "svc00", "DEBUG1") != 1 || count(l, "svc01", "FATAL") != 3 || count(l, "svc01", "LOG") != 0 {
		t.Fatalf("the first read after the restart: %v; want ERROR 3+4, DEBUG1 1, FATAL 2+1", l.Counts)
	}
	for range 3 {
		h.tick()
	}
	if l := logsOf(h.host.Snapshot()); count(l, "svc00", "ERROR") != 7 || count(l, "svc01", "FATAL") != 3 || l.SkippedSeconds != 0 || l.Late != 0 {
		t.Errorf("reads after the resume changed the counts: %v, skipped %v, late %v", l.Counts, l.SkippedSeconds, l.Late)
	}
	if strings.Contains(h.logs.String(), "refused") || strings.Contains(h.logs.String(), "resume bound") {
		t.Errorf("a good file was refused or bounded:\n%s", h.logs)
	}
}

// TestLogPositionsResumeBound: a position older than MaxLogResume resumes
// at that bound: older entries are not read, the span is counted in
// SkippedSeconds and logged once.
func TestLogPositionsResumeBound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "positions.json")
	h := newLogsHarness(t, 1, 5)
	h.restart(t, path, 0, testAPI)
	h.tick()
	h.tick()
	stopped := h.clock.Now()
	h.fl.add("svc00", stopped.Add(30*time.Minute), "ERROR", "beyond the bound", 2)
	h.fl.add("svc00", stopped.Add(150*time.Minute), "ERROR", "within the bound", 5)
	h.restart(t, path, 3*time.Hour, testAPI)
	l := h.tick()
	next := h.tick()
	// The last read before the stop ended a minute before it (the tick
	// advances the clock after reading). The span is counted from the next
	// publish, so that the series is served at 0 first.
	wantSkipped := (3*time.Hour + time.Minute - MaxLogResume).Seconds()
	if count(l, "svc00", "ERROR") != 5 || l.SkippedSeconds != 0 || next.SkippedSeconds != wantSkipped {
		t.Errorf("after 3h down: ERROR %v, skipped %vs then %vs; want 5, 0s then %vs", count(l, "svc00", "ERROR"), l.SkippedSeconds, next.SkippedSeconds, wantSkipped)
	}
	if n := strings.Count(h.logs.String(), "resume bound"); n != 1 {
		t.Errorf("%d lines about the resume bound, want 1:\n%s", n, h.logs)
	}
}

// TestLogPositionsRefused: a file that cannot be used whole (corrupt, cut
// short, another program's or format version's, a value out of range, more
// entries at the boundaries than resume should make) or
// positions of another API are refused with one WARN line, and counting
// starts fresh; the next write replaces the file.
func TestLogPositionsRefused(t *testing.T) {
	good := func() map[string]any {
		return map[string]any{"format": positionsFormat, "version": positionsVersion, "projects": map[string]any{
			"p1": map[string]any{"api_url": testAPI, "services": map[string]any{
				"svc00": map[string]any{"boundary": "2026-03-01T11:00:00Z", "read_until": "2026-03-01T11:00:00Z",
					"at_boundary": map[string]int{"ff": 1}, "counts": map[string]float64{"ERROR": 9}}}}}}
	}
	svc := func(m map[string]any) map[string]any {
		return m["projects"].(map[string]any)["p1"].(map[string]any)["services"].(map[string]any)["svc00"].(map[string]any)
	}
	for name, tc := range map[string]struct {
		content string
		edit    func(map[string]any)
		api     string
	}{
		"corrupt":             {edit: func(map[string]any) {}, content: "cut"},
		"another version":     {edit: func(m map[string]any) { m["version"] = 2 }},
		"unknown field":       {edit: func(m map[string]any) { m["zextra"] = true }},
		"negative count":      {edit: func(m map[string]any) { svc(m)["counts"] = map[string]float64{"ERROR": -1} }},
		"unknown severity":    {edit: func(m map[string]any) { svc(m)["counts"] = map[string]float64{"error": 1} }},
		"no boundary":         {edit: func(m map[string]any) { delete(svc(m), "boundary") }},
		"bad boundary key":    {edit: func(m map[string]any) { svc(m)["at_boundary"] = map[string]int{"zz": 1} }},
		"another API's":       {api: "http://other.example.net/v1"},
		"trailing data":       {edit: func(map[string]any) {}, content: "{}"},
		"boundary count zero": {edit: func(m map[string]any) { svc(m)["at_boundary"] = map[string]int{"ff": 0} }},
		"boundary count huge": {edit: func(m map[string]any) { svc(m)["at_boundary"] = map[string]int{"ff": 1 << 40} }},
		"boundaries too many": {edit: func(m map[string]any) {
			svc(m)["at_boundary"] = map[string]int{"ff": maxBoundaryEntries / 2, "fe": maxBoundaryEntries/2 + 1}
		}},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "positions.json")
			content := []byte(tc.content)
			if tc.edit != nil || tc.api != "" {
				m := good()
				if tc.edit != nil {
					tc.edit(m)
				}
				b, _ := json.Marshal(m)
				if tc.content == "cut" {
					b, content = b[:len(b)-20], nil
				}
				content = append(b, content...)
			}
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			h := newLogsHarness(t, 1, 5)
			api := testAPI
			if tc.api != "" {
				api = tc.api
			}
			pos := h.restart(t, path, 0, api)
			l := h.tick()
			if count(l, "svc00", "ERROR") != 0 {
				t.Errorf("counting did not start fresh: %v", l.Counts)
			}
			if n := strings.Count(h.logs.String(), `msg="Log state file refused`); n != 1 {
				t.Errorf("%d lines refusing the file, want 1:\n%s", n, h.logs)
			}
			if tc.api == "" {
				aside, _ := filepath.Glob(path + ".refused-*")
				if len(aside) != 1 {
					t.Fatalf("the refused file was not moved aside: %v", aside)
				}
				if b, err := os.ReadFile(aside[0]); err != nil || !bytes.Equal(b, content) {
					t.Errorf("the file moved aside is not the refused one: %v", err)
				}
			}
			pos.Close()
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := parsePositions(b); err != nil {
				t.Errorf("the file was not replaced by a good one: %v", err)
			}
		})
	}
}

// TestLogPositionsFile: the file is written whole, with nothing left
// beside it, holds no message and no user information of the API URL, is
// not written when nothing changed, and its path is checked at start.
func TestLogPositionsFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "positions.json")
	h := newLogsHarness(t, 1, 5)
	pos := h.restart(t, path, 0, "http://user:pass@api.example.net/v1?token=x")
	h.tick()
	h.fl.add("svc00", h.clock.Now().Add(-time.Second), "ERROR", "secret message", 1)
	h.tick()
	pos.write()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"secret message", "pass", "token"} {
		if bytes.Contains(b, []byte(s)) {
			t.Errorf("the file holds %q: %s", s, b)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the directory holds %d files, want the state file only", len(entries))
	}
	st, _ := os.Stat(path)
	pos.write() // nothing changed
	if st2, _ := os.Stat(path); !st2.ModTime().Equal(st.ModTime()) {
		t.Errorf("an unchanged state was written again")
	}
	if err := CheckLogPositions(filepath.Join(dir, "missing", "p.json")); err == nil {
		t.Errorf("a missing directory was accepted")
	}
	if err := CheckLogPositions(dir); err == nil {
		t.Errorf("a directory was accepted as the file")
	}
}

// FuzzParsePositions: no input makes the parser panic, and what it
// accepts resumes without panicking either.
func FuzzParsePositions(f *testing.F) {
	f.Add([]byte(`{"format":"clouddb_exporter log positions","version":1,"projects":{"p":{"api_url":"x","services":{"s":{"boundary":"2026-03-01T11:00:00Z","read_until":"2026-03-01T11:00:00Z","at_boundary":{"ff":1},"counts":{"ERROR":1}}}}}}`))
	f.Add([]byte(`{"format":"clouddb_exporter log positions","version":1}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		projects, err := parsePositions(b)
		if err != nil {
			return
		}
		for _, sp := range projects {
			for _, sc := range sp.services {
				c, _ := resumeCursor("s", sc, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
				_, _ = c.saved(nil)
			}
		}
	})
}

// TestLogPositionsResumeLastVersionsFile: a state file written while the
// window's keys were 64 bits resumes without counting its boundary's
// entries again; the keys are 32 bits since.
func TestLogPositionsResumeLastVersionsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "positions.json")
	h := newLogsHarness(t, 1, 5)
	boundary := h.clock.Now().Add(-10 * time.Second)
	h.fl.add("svc00", boundary, "FATAL", "boundary", 3) // 2 counted before the stop, 1 late
	key := fnv.New64a()
	_, _ = key.Write([]byte("FATAL\x00boundary"))
	if key.Sum64()>>32 == 0 {
		t.Fatal("the key does not use its upper half")
	}
	b, err := json.Marshal(map[string]any{"format": positionsFormat, "version": 1, "projects": map[string]any{
		"p1": map[string]any{"api_url": testAPI, "services": map[string]any{
			"svc00": map[string]any{"boundary": boundary, "read_until": boundary,
				"at_boundary": map[string]int{strconv.FormatUint(key.Sum64(), 16): 2}, "counts": map[string]float64{"FATAL": 2}}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	h.restart(t, path, 0, testAPI)
	for i := range 3 {
		if l := h.tick(); count(l, "svc00", "FATAL") != 3 || l.Late != 0 {
			t.Fatalf("read %d after the restart: %v, late %v; want FATAL 2+1", i, l.Counts, l.Late)
		}
	}
	if strings.Contains(h.logs.String(), "refused") {
		t.Errorf("the last version's file was refused:\n%s", h.logs)
	}
}
