package admin

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/kingpin/v2"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestCarelessSettings: what is never right is refused with an error
// naming the flag (a clear-text admin listener off loopback without
// --admin.allow-insecure-listener, a token under MinTokenLength), the rest
// is warned about (a short token, a token file others can read), and
// --config.check (Check) refuses the same.
func TestCarelessSettings(t *testing.T) {
	dir := t.TempDir()
	token := func(name, value string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(value+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := token("good", "0123456789abcdef0123456789abcdef", 0o600)
	certFile, keyFile, _ := testbin.SelfSignedCert(t, dir)
	tlsConfig := filepath.Join(dir, "web.yml")
	if err := os.WriteFile(tlsConfig, []byte("tls_server_config:\n  cert_file: "+certFile+"\n  key_file: "+keyFile+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := func(args ...string) *Flags {
		t.Helper()
		app := kingpin.New("test", "")
		f := AddFlags(app)
		if _, err := app.Parse(args); err != nil {
			t.Fatal(err)
		}
		return f
	}
	opts := Options{Logger: slog.New(slog.DiscardHandler), Projects: func(string) (Project, bool) { return Project{}, false }}
	for _, tc := range []struct {
		args    []string
		wantErr string // "" for a start
		warn    int
	}{
		{[]string{"--admin.listen-address=127.0.0.1:0", "--admin.token-file=" + good}, "", 0},
		{[]string{"--admin.listen-address=localhost:0", "--admin.token-file=" + good}, "", 0},
		{[]string{"--admin.listen-address=:0", "--admin.token-file=" + good}, "--admin.allow-insecure-listener", 0},
		{[]string{"--admin.listen-address=0.0.0.0:0", "--admin.token-file=" + good}, "--admin.allow-insecure-listener", 0},
		// Clear text off loopback, allowed: one "Unsafe setting" each.
		{[]string{"--admin.listen-address=:0", "--admin.token-file=" + good, "--admin.allow-insecure-listener"}, "", 1},
		{[]string{"--admin.listen-address=127.0.0.1:0", "--admin.token-file=" + good, "--admin.allow-insecure-listener"}, "", 0},
		{[]string{"--admin.listen-address=:0", "--admin.token-file=" + good, "--admin.allow-insecure-listener", "--admin.web-config.file=" + tlsConfig}, "", 0},
		{[]string{"--admin.listen-address=127.0.0.1:0", "--admin.token-file=" + good, "--admin.audit-fail-open", "--admin.audit-log=" + filepath.Join(dir, "audit.log")}, "", 1},
		{[]string{"--admin.listen-address=:0", "--admin.token-file=" + good, "--admin.web-config.file=" + tlsConfig}, "", 0},
		{[]string{"--admin.listen-address=127.0.0.1:0", "--admin.token-file=" + token("tiny", "1234567", 0o600)}, "shorter than 8", 1},
		{[]string{"--admin.listen-address=127.0.0.1:0", "--admin.token-file=" + token("short", "0123456789abc", 0o600)}, "", 1},
		{[]string{"--admin.listen-address=127.0.0.1:0", "--admin.token-file=" + token("public", "0123456789abcdef0123", 0o644)}, "", 1},
	} {
		f := flags(tc.args...)
		for name, err := range map[string]error{
			"Listener": func() error {
				_, cleanup, err := f.Listener(context.Background(), opts, false, nil)
				cleanup()
				return err
			}(),
			"Check": f.Check(context.Background(), opts, false),
		} {
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
				t.Errorf("%v: %s: %v, want error %q", tc.args, name, err, tc.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "1234567") {
				t.Errorf("%v: %s: the error shows the token: %v", tc.args, name, err)
			}
		}
		if got := f.Warnings(); len(got) != tc.warn {
			t.Errorf("%v: warnings %+v, want %d", tc.args, got, tc.warn)
		}
	}
}
