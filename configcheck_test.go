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
