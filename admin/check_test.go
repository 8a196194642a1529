package admin

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/client_golang/prometheus"
)

// TestCheckBuildsNoSurface: --config.check validates the admin settings
// with the start's own checks but builds no surface: nothing registers a
// metric (the surface would), and an audit log in a missing directory is
// reported, the directory not created.
func TestCheckBuildsNoSurface(t *testing.T) {
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte(strings.Repeat("t", GoodTokenLength)), 0o600); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	opts := Options{Registerer: reg, Logger: slog.New(slog.DiscardHandler), Projects: func(string) (Project, bool) { return Project{}, false }}
	f := parseAdminFlags(t, "--admin.listen-address=127.0.0.1:0", "--admin.token-file="+token, "--admin.audit-log="+filepath.Join(dir, "audit.log"))
	if err := f.Check(context.Background(), opts, false); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if families, err := reg.Gather(); err != nil || len(families) > 0 {
		t.Errorf("Check registered %d metric families (err %v): it built the surface", len(families), err)
	}

	missing := filepath.Join(dir, "missing", "audit.log")
	f = parseAdminFlags(t, "--admin.listen-address=127.0.0.1:0", "--admin.token-file="+token, "--admin.audit-log="+missing)
	if err := f.Check(context.Background(), opts, false); err == nil || !strings.Contains(err.Error(), "--admin.audit-log") {
		t.Errorf("Check with %s: %v, want an error naming --admin.audit-log", missing, err)
	}
	if _, err := os.Stat(filepath.Dir(missing)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Check created %s (stat: %v)", filepath.Dir(missing), err)
	}
}

// TestCheckRefusesWhatTheStartRefuses: each setting the start refuses,
// Check refuses with the same message.
func TestCheckRefusesWhatTheStartRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	token := write("token", strings.Repeat("t", GoodTokenLength))
	listen := "--admin.listen-address=127.0.0.1:0"
	for name, args := range map[string][]string{
		"no authentication":   {listen},
		"short token":         {listen, "--admin.token-file=" + write("short", "abc")},
		"unknown operation":   {listen, "--admin.token-file=" + token, "--admin.allow=noSuchOperation"},
		"not a bcrypt hash":   {listen, "--admin.web-config.file=" + write("users.yml", "basic_auth_users:\n  ops: plain\n")},
		"missing TLS files":   {listen, "--admin.token-file=" + token, "--admin.web-config.file=" + write("tls.yml", "tls_server_config:\n  cert_file: nope.crt\n  key_file: nope.key\n")},
		"clear text on a LAN": {"--admin.listen-address=192.0.2.1:9867", "--admin.token-file=" + token},
		"zero timeout":        {listen, "--admin.token-file=" + token, "--admin.operation-timeout=0s"},
		"audit log a dir":     {listen, "--admin.token-file=" + token, "--admin.audit-log=" + dir},
	} {
		t.Run(name, func(t *testing.T) {
			opts := func() Options {
				return Options{Registerer: prometheus.NewRegistry(), Logger: slog.New(slog.DiscardHandler), Projects: func(string) (Project, bool) { return Project{}, false }}
			}
			_, cleanup, startErr := parseAdminFlags(t, args...).Listener(context.Background(), opts(), false, io.Discard)
			cleanup()
			checkErr := parseAdminFlags(t, args...).Check(context.Background(), opts(), false)
			if startErr == nil || checkErr == nil {
				t.Fatalf("start: %v; check: %v; want both refused", startErr, checkErr)
			}
			if name != "audit log a dir" && checkErr.Error() != startErr.Error() {
				t.Errorf("check: %v\nstart: %v", checkErr, startErr)
			}
		})
	}
}

func parseAdminFlags(t *testing.T, args ...string) *Flags {
	t.Helper()
	app := kingpin.New("test", "")
	f := AddFlags(app)
	if _, err := app.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f
}
