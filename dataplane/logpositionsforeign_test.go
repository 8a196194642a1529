//go:build unix

package dataplane

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/clouddb/clouddb_exporter/internal/safefile"
)

// TestLogPositionsForeignFileKept: another program's file at the path (an
// audit log, a YAML file, a file of another format) stops the start with
// an error and is left as it is; it was replaced by a state file after one
// WARN.
func TestLogPositionsForeignFileKept(t *testing.T) {
	for name, content := range map[string]string{
		"audit log":      `{"time":"2026-03-01T11:00:00Z","event":"accepted","caller":"alice"}` + "\n",
		"YAML":           "positions:\n  /var/log/syslog: \"1234\"\n",
		"another format": `{"format":"promtail","version":1,"projects":{}}`,
		"cut header":     `{"format": "clouddb_exporter log pos`,
		"binary":         "\x00\x01\x02",
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "positions.json")
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			pos, err := OpenLogPositions(path, slog.New(slog.DiscardHandler), nil)
			if err == nil {
				pos.save("p1", testAPI, nil)
				pos.Close()
				t.Error("another program's file was opened as a state file")
			} else if !strings.Contains(err.Error(), "not a log state file") {
				t.Errorf("error %q does not say what the file is", err)
			}
			if b, _ := os.ReadFile(path); string(b) != content {
				t.Errorf("the file was changed: %q", b)
			}
		})
	}
}

// TestLogPositionsNotARegularFile: a FIFO (which blocked the start before
// any listener), a symbolic link (to /dev/zero, which filled the memory, or
// to another file) or a file over the bound (its size taken from stat,
// nothing read) is refused with a WARN, moved aside, and counting starts
// fresh; the next write makes a regular file at the path.
func TestLogPositionsNotARegularFile(t *testing.T) {
	for name, put := range map[string]func(path string) error{
		"FIFO":         func(path string) error { return syscall.Mkfifo(path, 0o600) },
		"link to zero": func(path string) error { return os.Symlink("/dev/zero", path) },
		"link to a file": func(path string) error {
			target := filepath.Join(filepath.Dir(path), "target")
			if err := os.WriteFile(target, []byte(`{"format":"clouddb_exporter log positions","version":1,"projects":{}}`), 0o600); err != nil {
				return err
			}
			return os.Symlink(target, path)
		},
		"over the bound": func(path string) error {
			if err := os.WriteFile(path, []byte(`{"format":"clouddb_exporter log positions"`), 0o600); err != nil {
				return err
			}
			return os.Truncate(path, maxPositionsFile+1)
		},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "positions.json")
			if err := put(path); err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			health := safefile.NewHealth(nil)
			pos, err := OpenLogPositions(path, slog.New(slog.NewTextHandler(&logs, nil)), health)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(logs.String(), "refused") || !strings.Contains(logs.String(), "moved aside") {
				t.Errorf("no WARN saying the file was refused and moved aside:\n%s", logs.String())
			}
			if aside, _ := filepath.Glob(path + ".refused-*"); len(aside) != 1 {
				t.Errorf("moved aside: %v, want one file", aside)
			}
			pos.save("p1", testAPI, nil)
			pos.Close()
			if info, err := os.Lstat(path); err != nil || !info.Mode().IsRegular() {
				t.Errorf("no regular state file written at the path: %v", err)
			}
			if target, err := os.ReadFile(filepath.Join(filepath.Dir(path), "target")); err == nil && !strings.Contains(string(target), `"projects":{}`) {
				t.Errorf("the link's target was written: %s", target)
			}
		})
	}
}

// TestLogPositionsForeignFileLater: a file put at the path while the
// exporter runs (a restore of another program's file, a symbolic link) is
// moved aside, not overwritten, at the next write.
func TestLogPositionsForeignFileLater(t *testing.T) {
	path := filepath.Join(t.TempDir(), "positions.json")
	pos, err := OpenLogPositions(path, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		t.Fatal(err)
	}
	pos.save("p1", testAPI, nil)
	pos.write()
	foreign := "not a state file\n"
	if err := os.WriteFile(path+".new", []byte(foreign), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
	pos.save("p2", testAPI, nil)
	pos.Close()
	aside, _ := filepath.Glob(path + ".refused-*")
	if len(aside) != 1 {
		t.Fatalf("moved aside: %v, want one file", aside)
	}
	if b, _ := os.ReadFile(aside[0]); string(b) != foreign {
		t.Errorf("the file moved aside holds %q", b)
	}
	if !isOurs(path) {
		t.Error("no state file written at the path")
	}
}

// TestLogPositionsServiceValueBound: one service's value is decoded whole,
// so it is bounded on its own (maxPositionsService): a file under the
// file's bound made of one huge service (2 MiB of entries at its boundary)
// is refused before that value is held, and moved aside.
func TestLogPositionsServiceValueBound(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"format":"clouddb_exporter log positions","version":1,"projects":{"p1":{"api_url":"` + testAPI + `","services":{"svc00":{"boundary":"2026-03-01T11:00:00Z","read_until":"2026-03-01T11:00:00Z","counts":{},"at_boundary":{`)
	for i := 0; b.Len() < 2<<20; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"%x":1`, i)
	}
	b.WriteString(`}}}}}}`)
	path := filepath.Join(t.TempDir(), "positions.json")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	if _, err := OpenLogPositions(path, slog.New(slog.NewTextHandler(&logs, nil)), nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "Log state file refused") || !strings.Contains(logs.String(), "larger than") {
		t.Errorf("a 2 MiB service value was not refused for its size:\n%s", logs.String())
	}
}
