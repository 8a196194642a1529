//go:build unix

package changes

import (
	"os"
	"path/filepath"
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
