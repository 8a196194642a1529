//go:build unix

package flagval

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSecretFileWarning(t *testing.T) {
	dir := t.TempDir()
	file := func(mode os.FileMode, gid int) string {
		t.Helper()
		path := filepath.Join(dir, "key"+mode.String())
		if err := os.WriteFile(path, []byte("k"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if gid != os.Getegid() {
			if err := os.Chown(path, -1, gid); err != nil {
				t.Skipf("cannot give a file another group: %v", err)
			}
		}
		return path
	}
	own := os.Getegid()
	for _, tc := range []struct {
		mode os.FileMode
		gid  int
		warn bool
	}{
		{0o600, own, false},
		{0o400, own, false},
		{0o440, own, false}, // a Kubernetes Secret with fsGroup
		{0o644, own, true},
		{0o604, own, true},
		{0o640, own + 1, true},
	} {
		w, warned := SecretFileWarning("--api.secret-key-file", file(tc.mode, tc.gid))
		if warned != tc.warn || (warned && w.Setting != "--api.secret-key-file") {
			t.Errorf("mode %v group %d: warning %v %+v, want %v", tc.mode, tc.gid, warned, w, tc.warn)
		}
	}
	if _, warned := SecretFileWarning("--api.key-file", filepath.Join(dir, "missing")); warned {
		t.Error("a missing file warned: reading it reports that")
	}
}
