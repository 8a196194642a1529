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
