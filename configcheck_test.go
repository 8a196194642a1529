package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// --config.check writes nothing: with an admin surface whose audit log does
// not exist yet, it exits 0 and leaves no file behind. (Flags.Check's own
// test covers the refusals.)
func TestConfigCheckWritesNothing(t *testing.T) {
	dir := t.TempDir()
	auditLog := filepath.Join(dir, "audit.log")
	code := run([]string{
		"--config.check", "--log.level=error",
		"--simulate", "--admin.listen-address=127.0.0.1:0", "--admin.audit-log=" + auditLog,
	}, func(string) string { return "" })
	if code != 0 {
		t.Fatalf("--config.check exited %d, want 0", code)
	}
	if _, err := os.Stat(auditLog); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("--config.check left %s behind (stat: %v)", auditLog, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("--config.check wrote %s", e.Name())
	}
}

// --config.check refuses an --api.url that the start refuses: one with a
// query (which may hold a token) or a fragment, in single-project mode and
// in discovery mode alike.
func TestConfigCheckRefusesWhatTheStartRefuses(t *testing.T) {
	env := func(name string) string {
		return map[string]string{"CLOUDDB_ACCESS_KEY": "ak", "CLOUDDB_SECRET_KEY": "sk"}[name]
	}
	for _, args := range [][]string{
		{"--api.url=http://127.0.0.1:1/v1?token=x", "--api.project-id=p"},
		{"--api.url=http://127.0.0.1:1/v1?", "--api.project-id=p"},
		{"--api.url=http://127.0.0.1:1/v1#frag", "--api.project-id=p"},
		{"--api.url=http://127.0.0.1:1/v1?token=x"},
	} {
		if code := run(append([]string{"--config.check", "--log.level=error"}, args...), env); code != 2 {
			t.Errorf("--config.check %v exited %d, want 2", args, code)
		}
	}
	if code := run([]string{"--config.check", "--log.level=error", "--api.url=http://127.0.0.1:1/v1", "--api.project-id=p"}, env); code != 0 {
		t.Errorf("--config.check with a valid --api.url exited %d, want 0", code)
	}
}
