package admin

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAuditFileFollowsRotation: after the audit log is renamed (logrotate's
// default), removed or truncated in place (copytruncate), the next record
// is in a file at the path, created 0600; the old file gets nothing more.
func TestAuditFileFollowsRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	w, closeLog, err := openAuditLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer closeLog()
	write := func(line string) {
		t.Helper()
		if _, err := w.Write([]byte(line + "\n")); err != nil {
			t.Fatalf("write %s: %v", line, err)
		}
	}
	write("one")
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	write("two")
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	write("three")
	if got := readFile(t, path+".1"); got != "one\n" {
		t.Errorf("the renamed file holds %q, want only the record before the rename", got)
	}
	if got := readFile(t, path); got != "three\n" {
		t.Errorf("the file at the path holds %q, want the record after the removal", got)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the new file's mode: %v (%v), want 0600", fi.Mode(), err)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	write("four")
	if got := readFile(t, path); got != "four\n" {
		t.Errorf("after copytruncate the file holds %q, want the new record alone at its start", got)
	}
}

// TestAuditFileReopenFailsClosed: when the audit log cannot be recreated
// at its path, a write is refused (503, nothing sent) rather than recorded
// nowhere; once the path can be created again, writes go on.
func TestAuditFileReopenFailsClosed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "audit.log")
	w, closeLog, err := openAuditLog(path)
	if err != nil {
		t.Fatal(err)
	}
	// Closed once the surface's background writers are done (newEnv's
	// cleanup): the write's tracking audits its settling after the answer.
	t.Cleanup(closeLog)
	e := newEnv(t)
	e.srv.audit.w = w
	d := e.demo()
	resize := "/api/v1/projects/" + testProject + "/services/" + d.service["embeddings"] + "/resize"
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	a := e.do("POST", resize, `{"cpu_millis":1000,"memory_gbs":4}`)
	if a.status != http.StatusServiceUnavailable || a.json(t)["code"] != codeAuditUnavailable || len(e.sent()) != 0 {
		t.Errorf("a write with the audit log's directory gone: %d %s, want 503 %s and nothing sent", a.status, a.body, codeAuditUnavailable)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if a := e.do("POST", resize, `{"cpu_millis":1000,"memory_gbs":4}`); a.status != http.StatusAccepted {
		t.Errorf("a write once the directory is back: %d %s, want 202", a.status, a.body)
	}
	if got := readFile(t, path); !strings.Contains(got, `"event":"accepted"`) {
		t.Errorf("the recreated audit log holds %q, want the write's records", got)
	}
}

// TestAuditFileClosedStaysClosed: a write or a reopen after Close fails
// and creates nothing at the path. A late writer (the tracking of a write,
// settling after the surface's answer) used to create the file again,
// leaking it, in a directory that was being removed.
func TestAuditFileClosedStaysClosed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "audit.log")
	af, err := openAuditFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := af.Write([]byte("one\n")); err != nil {
		t.Fatal(err)
	}
	if err := af.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := af.Write([]byte("late\n")); !errors.Is(err, errAuditFileClosed) {
		t.Errorf("a write after Close: %v, want %v", err, errAuditFileClosed)
	}
	if err := af.Reopen(); !errors.Is(err, errAuditFileClosed) {
		t.Errorf("a reopen after Close: %v, want %v", err, errAuditFileClosed)
	}
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the audit path after Close and a late write: %v, want nothing there", err)
	}
}

// TestCloseWaitsForAuditWriters: once the surface's Close returns, its
// background writers are done (the tracking of writes, stopped, and the
// unauthenticated summaries, whose last sweep writes what it held), so
// that the audit log can be closed after it. Nothing waited for them: the
// log's owner closed it while they ran, and a late one created the file
// again.
func TestCloseWaitsForAuditWriters(t *testing.T) {
	e := newEnv(t)
	d := e.demo()
	for range 2 { // the first refusal has its record, the second goes in the summary
		if a := e.do("GET", "/api/v1/operations", "", "Authorization", ""); a.status != http.StatusUnauthorized {
			t.Fatalf("no token: %d %s", a.status, a.body)
		}
	}
	resize := "/api/v1/projects/" + testProject + "/services/" + d.service["embeddings"] + "/resize"
	if a := e.do("POST", resize, `{"cpu_millis":1000,"memory_gbs":4}`); a.status != http.StatusAccepted {
		t.Fatalf("resize: %d %s", a.status, a.body)
	}
	e.srv.Close()
	if text := e.audit.String(); !strings.Contains(text, `"event":"`+eventUnauthenticated+`"`) {
		t.Errorf("the last unauthenticated summary is not in the audit log when Close returns:\n%s", text)
	}
}

// BenchmarkAuditFileWrite measures the stat that follows rotations
// against a plain append of the same record.
func BenchmarkAuditFileWrite(b *testing.B) {
	line := []byte(`{"time":"2026-11-23T03:04:05.123Z","event":"outcome","request_id":"9f2c","caller":"token","remote_addr":"10.0.0.7:51234","method":"POST","operation":"resizeService","status":202}` + "\n")
	for _, follow := range []bool{false, true} {
		b.Run(fmt.Sprintf("follow=%v", follow), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "audit.log")
			af, err := openAuditFile(path)
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = af.Close() }() // written for the benchmark only
			var w io.Writer = af
			if !follow {
				w = af.f
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				if _, err := w.Write(line); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
