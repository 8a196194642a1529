//go:build unix

package changes

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestFilesRefusedOrMovedAside(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "changes.ndjson")
	if err := os.WriteFile(path+".state", []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	tl := New(Options{})
	if err := tl.openFile(path, 1<<20, ""); err != nil {
		t.Fatal(err)
	}
	if tl.restored != nil {
		t.Error("a corrupt state was restored")
	}
	if aside, _ := filepath.Glob(path + ".state.refused-*"); len(aside) != 1 {
		t.Errorf("the corrupt state was not moved aside: %v", aside)
	}
	tl.Close(t.Context())

	// A symbolic link or a FIFO in the file's place is refused.
	link := filepath.Join(dir, "link.ndjson")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if err := New(Options{}).openFile(link, 1<<20, ""); err == nil {
		t.Error("a symbolic link was followed")
	}
	fifo := filepath.Join(dir, "fifo.ndjson")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	if err := New(Options{}).openFile(fifo, 1<<20, ""); err == nil {
		t.Error("a FIFO was opened")
	}
}

// The file deleted, moved aside or replaced by hand: the next events go to
// a new file at the path, and a FIFO put there is refused, its events
// counted, until a regular file is back.
func TestFileDeletedOrMovedByHand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "changes.ndjson")
	w, err := openEventFile(path, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.close() }()
	next := uint64(0)
	write := func() error {
		next++
		return w.append(&Event{Cursor: next, ProjectID: "p", Kind: KindAdded})
	}
	cursorsIn := func(p string) (got []uint64) {
		f, err := os.Open(p)
		if err != nil {
			return nil
		}
		defer func() { _ = f.Close() }()
		if _, err := readLines(f, func(e Event) { got = append(got, e.Cursor) }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	if err := write(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := write(); err != nil {
		t.Fatal(err)
	}
	if got := cursorsIn(path); len(got) != 1 || got[0] != 2 {
		t.Errorf("after a delete the file holds %v, want [2]", got)
	}
	if err := os.Rename(path, path+".old"); err != nil {
		t.Fatal(err)
	}
	if err := write(); err != nil {
		t.Fatal(err)
	}
	if got := cursorsIn(path); len(got) != 1 || got[0] != 3 {
		t.Errorf("after a move the file holds %v, want [3]", got)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip(err)
	}
	if err := write(); err == nil {
		t.Error("an event was written to a FIFO")
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := write(); err != nil {
		t.Fatal(err)
	}
	if got := cursorsIn(path); len(got) != 1 || got[0] != 5 {
		t.Errorf("after the FIFO went the file holds %v, want [5]", got)
	}
}

// Rotating a file deleted by hand (between the check and the rotation)
// starts a new one rather than failing every later write.
func TestRotateAfterTheFileWasDeleted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "changes.ndjson")
	w, err := openEventFile(path, 2000)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.close() }()
	if err := w.append(&Event{Cursor: 1, ProjectID: "p", Kind: KindAdded}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := w.rotate(); err != nil {
		t.Errorf("rotate after a delete: %v", err)
	}
}

// The state is saved only once the file was handed every event queued
// before it: a crash right after a save cannot leave a change both out of
// the file and out of the next start's comparison.
func TestStateSavedAfterTheFileHasItsEvents(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	fillPipe(t, w) // the writer blocks on its first event
	path := filepath.Join(t.TempDir(), "changes.ndjson")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	tl := New(Options{})
	file := startFileWriter(&eventFile{path: path, max: 1 << 40, f: w, info: info}, 0, tl.metrics.dropped, tl.logger)
	waiting := make(chan struct{}, 1)
	file.waiting = func() {
		select {
		case waiting <- struct{}{}:
		default:
		}
	}
	tl.file, tl.statePath = file, path+".state"
	tl.SetProjects([]string{"a"})
	for _, ids := range [][]string{{"a", "b"}, {"a"}, {"a", "c"}} {
		tl.SetProjects(ids) // cursors 1 to 3
	}
	stateWritten := make(chan uint64, 1)
	tl.writeState = func(p string, b []byte) error {
		file.mu.Lock()
		stateWritten <- file.written
		file.mu.Unlock()
		return writeStateFile(p, b)
	}
	saved := make(chan struct{})
	go func() { defer close(saved); tl.saveIfDirty() }()
	select {
	case <-waiting:
	case c := <-stateWritten:
		t.Fatalf("the state was saved with the file at cursor %d of 3", c)
	}
	go func() { _, _ = io.Copy(io.Discard, r) }()
	<-saved
	if c := <-stateWritten; c != 3 {
		t.Errorf("the state was saved with the file at cursor %d of 3", c)
	}
	tl.Close(t.Context())
}

// fillPipe writes to w until the pipe would block.
func fillPipe(t *testing.T, w *os.File) {
	t.Helper()
	rc, err := w.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	err = rc.Write(func(fd uintptr) bool {
		for {
			if _, err := syscall.Write(int(fd), buf); err != nil {
				return true // EAGAIN: full
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestStateFileOverTheBoundRefusedUnread: the .state file was read whole,
// up to 1 GiB, before it was decoded: a large file at its path cost some
// four times its size at every start. Its size is checked first; a file
// over the bound is moved aside unread and the first reads are a baseline.
func TestStateFileOverTheBoundRefusedUnread(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "changes.ndjson")
	// A valid beginning, then a hole: sparse, it costs no disk.
	if err := os.WriteFile(path+".state", []byte(`{"version":1,"projects":{`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path+".state", maxStateFile+1); err != nil {
		t.Fatal(err)
	}
	_, opened, err := loadState(path + ".state")
	if err == nil || !opened || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("loadState: opened %v, %v; want a refusal for its size, to be moved aside", opened, err)
	}
}
