package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestFailedStartPrintsOneLine: every configuration check runs before any
// simulator, poller or listener starts, so a configuration error is the
// one line the exporter prints, whatever the error and however late its
// part would start.
func TestFailedStartPrintsOneLine(t *testing.T) {
	t.Parallel()
	bin := testbin.Build(t, ".")
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("admin-token-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A project whose poller would start (and fail to reach its API).
	env := []string{"CLOUDDB_API_URL=http://127.0.0.1:1/v1", "CLOUDDB_API_PROJECT_ID=p", "CLOUDDB_ACCESS_KEY=ak", "CLOUDDB_SECRET_KEY=topsecret-sk"}
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"admin without authentication", env, []string{"--admin.listen-address=127.0.0.1:0"}, "--admin.listen-address needs authentication"},
		{"admin allow typo", env, []string{"--admin.listen-address=127.0.0.1:0", "--admin.token-file=" + tokenFile, "--admin.allow=resizeService,resizeServce"}, "resizeServce"},
		{"simulate with admin allow typo", nil, []string{"--simulate", "--admin.listen-address=127.0.0.1:0", "--admin.allow=stopServce"}, "stopServce"},
		{"missing web config", env, []string{"--web.config.file=" + filepath.Join(dir, "absent.yml")}, "--web.config.file"},
		{"admin with shards", env, []string{"--admin.listen-address=127.0.0.1:0", "--admin.token-file=" + tokenFile, "--total-shards=2", "--shard=0"}, "--total-shards"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, out := testbin.Run(t, bin, tc.env, append([]string{"--web.listen-address=127.0.0.1:0"}, tc.args...)...)
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if code == 0 || len(lines) != 1 || !strings.Contains(lines[0], tc.want) {
				t.Errorf("exit code %d and %d lines; want a non-zero exit and exactly one line naming %q:\n%s", code, len(lines), tc.want, out)
			}
			if strings.Contains(out, "Collector failed") || strings.Contains(out, "Starting") {
				t.Errorf("something started before the configuration was checked:\n%s", out)
			}
		})
	}
}
