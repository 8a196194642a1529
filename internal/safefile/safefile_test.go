//go:build unix

package safefile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// special makes every kind of path the exporter must refuse.
func special(t *testing.T, dir string) map[string]string {
	t.Helper()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("someone else's\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{
		"symlink":      filepath.Join(dir, "link"),
		"fifo":         filepath.Join(dir, "fifo"),
		"device":       "/dev/null",
		"directory":    filepath.Join(dir, "dir"),
		"link to zero": filepath.Join(dir, "zerolink"),
	}
	if err := os.Symlink(target, paths["symlink"]); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(paths["fifo"], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", paths["link to zero"]); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(paths["directory"], 0o700); err != nil {
		t.Fatal(err)
	}
	return paths
}

// A FIFO without a peer would block the open for ever: the test would
// hang, not fail, without O_NONBLOCK; the deadline of go test ends it.
func TestOpenRefusesAllButRegularFiles(t *testing.T) {
	dir := t.TempDir()
	for name, path := range special(t, dir) {
		for op, open := range map[string]func(string) (*os.File, os.FileInfo, error){"read": Open, "append": OpenAppend} {
			f, _, err := open(path)
			if err == nil {
				_ = f.Close()
				t.Errorf("%s of a %s: opened", op, name)
				continue
			}
			if name != "directory" && !errors.Is(err, ErrNotRegular) {
				t.Errorf("%s of a %s: %v, want ErrNotRegular", op, name, err)
			}
		}
	}
	got, err := os.ReadFile(filepath.Join(dir, "target"))
	if err != nil || string(got) != "someone else's\n" {
		t.Errorf("the symbolic link's target was changed: %q, %v", got, err)
	}
}

func TestOpenRegularFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state")
	if err := os.WriteFile(path, []byte("data"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, info, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	b, err := io.ReadAll(f)
	if err != nil || string(b) != "data" || info.Size() != 4 {
		t.Errorf("read %q (%v), size %d", b, err, info.Size())
	}
}

func TestOpenAppendMakesTheMode0600(t *testing.T) {
	dir := t.TempDir()
	created := filepath.Join(dir, "new")
	open := filepath.Join(dir, "open")
	if err := os.WriteFile(open, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o666); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{created, open} {
		f, info, err := OpenAppend(path)
		if err != nil {
			t.Fatal(err)
		}
		_ = f.Close()
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != 0o600 || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %04o (reported %04o), want 0600", filepath.Base(path), st.Mode().Perm(), info.Mode().Perm())
		}
	}
}

func TestMoveAsideMovesTheLinkNotItsTarget(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "state")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	aside, err := MoveAside(link, time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	if want := link + ".refused-20260102T030405.000000006Z"; aside != want {
		t.Errorf("moved to %s, want %s", aside, want)
	}
	if info, err := os.Lstat(aside); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was not moved: %v", err)
	}
	if _, err := os.Lstat(link); !os.IsNotExist(err) {
		t.Errorf("the path still names something: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "kept" {
		t.Errorf("the target changed: %q", b)
	}
}

func TestWriteAtomicReplacesALinkNotItsTarget(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("kept"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "state")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteAtomic(link, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "kept" {
		t.Errorf("the target changed: %q", b)
	}
	info, err := os.Lstat(link)
	if err != nil || !info.Mode().IsRegular() || info.Mode().Perm() != 0o600 {
		t.Fatalf("the path is not a regular 0600 file: %v %v", info, err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// TestReadLinkedFollowsLinksNotFIFOs: an operator's file (a key, a token)
// is read through its links, as a Kubernetes Secret's are, but a FIFO, a
// device or a file over the bound is refused at once.
func TestReadLinkedFollowsLinksNotFIFOs(t *testing.T) {
	dir := t.TempDir()
	paths := special(t, dir)
	got, err := ReadLinked(paths["symlink"], 1<<10)
	if err != nil || string(got) != "someone else's\n" {
		t.Errorf("through a symbolic link: %q, %v", got, err)
	}
	for _, name := range []string{"fifo", "device", "link to zero", "directory"} {
		if _, err := ReadLinked(paths[name], 1<<10); err == nil {
			t.Errorf("a %s: read", name)
		} else if name != "directory" && !errors.Is(err, ErrNotRegular) {
			t.Errorf("a %s: %v, want ErrNotRegular", name, err)
		}
	}
	if _, err := ReadLinked(paths["symlink"], 4); err == nil || !strings.Contains(err.Error(), "larger than 4 bytes") {
		t.Errorf("over the bound: %v", err)
	}
}
