//go:build unix

package admin

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestAuditFileRefusesWhatIsNotARegularFile: a FIFO, a symbolic link or a
// device put at the path after a rotation gets no record and does not block
// the write (a FIFO without a reader blocked the open, and with it every
// admin request, for ever); the next regular file at the path is used again.
func TestAuditFileRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	target := filepath.Join(dir, "unrelated")
	if err := os.WriteFile(target, []byte("unrelated\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, closeLog, err := openAuditLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer closeLog()
	for name, put := range map[string]func() error{
		"FIFO":           func() error { return syscall.Mkfifo(path, 0o600) },
		"symbolic link":  func() error { return os.Symlink(target, path) },
		"link to device": func() error { return os.Symlink("/dev/null", path) },
	} {
		if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if err := put(); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte("refused\n")); err == nil {
			t.Errorf("a %s at the audit path: the record was written", name)
		}
	}
	if got := readFile(t, target); got != "unrelated\n" {
		t.Errorf("the symbolic link's target got records: %q", got)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("again\n")); err != nil {
		t.Errorf("a regular file at the path again: %v", err)
	}
}

// TestAuditFileMode0600: a pre-created audit log that others may read or
// write is made 0600 when opened, as at a reopen after a rotation.
func TestAuditFileMode0600(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	for _, reopen := range []bool{false, true} {
		if err := os.WriteFile(path, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, 0o666); err != nil {
			t.Fatal(err)
		}
		w, closeLog, err := openAuditLog(path)
		if err != nil {
			t.Fatal(err)
		}
		if reopen {
			if err := os.Rename(path, path+".1"); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, 0o666); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Write([]byte("r\n")); err != nil {
			t.Fatal(err)
		}
		closeLog()
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("reopen %v: mode %v (%v), want 0600", reopen, fi.Mode(), err)
		}
	}
}
