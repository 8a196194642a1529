package dataplane

import (
	"bytes"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLogPositionsSayWhatResumed: a state file of another project was
// reported as "counting resumes where it stopped" when nothing resumed.
// The start says the file was read; each project then says whether it
// resumes from it, or finds no positions of its own there.
func TestLogPositionsSayWhatResumed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "positions.json")
	pos, err := OpenLogPositions(path, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	id := "svc00"
	at := time.Date(2026, 3, 1, 11, 0, 0, 0, time.UTC).UnixNano()
	pos.save("p1", testAPI, savedServices{{boundary: at, readUntil: at, counts: NewServiceLogs(&id)}})
	pos.Close()

	var logs bytes.Buffer
	pos, err = OpenLogPositions(path, slog.New(slog.NewTextHandler(&logs, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := pos.resume("other-project", testAPI); got != nil {
		t.Errorf("another project resumed %d services", len(got))
	}
	if out := logs.String(); strings.Contains(out, "resumes where it stopped") || !strings.Contains(out, `msg="The log state file holds no positions for this project: its counting starts now" project_id=other-project`) {
		t.Errorf("a project the file does not hold:\n%s", out)
	}
	logs.Reset()
	if got := pos.resume("p1", testAPI); len(got) != 1 {
		t.Errorf("p1 resumed %d services, want 1", len(got))
	}
	if out := logs.String(); !strings.Contains(out, `msg="Log counting resumes from the state file for the services it holds" project_id=p1 saved_services=1`) {
		t.Errorf("the project the file holds:\n%s", out)
	}
}
