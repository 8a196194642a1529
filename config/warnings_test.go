package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clouddb/clouddb_exporter/internal/flagval"
)

// TestWarnings: settings that work but expose the credentials are named
// (flag or file key), without their values; safe ones are not.
func TestWarnings(t *testing.T) {
	dir := t.TempDir()
	key := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("k"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	private, public := key("private", 0o600), key("public", 0o644)
	settings := func(ws []flagval.Warning) []string {
		var out []string
		for _, w := range ws {
			if strings.Contains(w.Reason, dir) || strings.Contains(w.Setting, dir) {
				t.Errorf("warning %+v shows a path", w)
			}
			out = append(out, w.Setting)
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--api.url=https://api.example.net/v1", "--api.access-key-file=" + private, "--api.secret-key-file=" + private}, nil},
		{[]string{"--api.url=http://127.0.0.1:8090/v1", "--api.access-key-file=" + private, "--api.secret-key-file=" + private}, nil},
		{[]string{"--api.url=http://localhost:8090/v1", "--api.project-id=p", "--api.access-key-file=" + private, "--api.secret-key-file=" + private}, nil},
		{[]string{"--api.url=http://api.example.net/v1", "--api.tls.insecure-skip-verify", "--api.access-key-file=" + private, "--api.secret-key-file=" + public, "--api.key-file=" + public},
			[]string{"--api.key-file", "--api.secret-key-file", "--api.tls.insecure-skip-verify", "--api.url (CLOUDDB_API_URL)"}},
	} {
		if got := settings(parseFlags(t, tc.args...).Warnings(env(nil), nil)); !slices.Equal(got, tc.want) {
			t.Errorf("%v: warnings for %q, want %q", tc.args, got, tc.want)
		}
	}

	file := writeFile(t, "projects:\n  - id: a\n    access_key_file: "+private+"\n    secret_key_file: "+private+"\n"+
		"  - id: b\n    api_url: http://api.example.net/v1\n    access_key_file: "+public+"\n    secret_key_file: "+private+"\n    http_client: {tls_config: {insecure_skip_verify: true}}\n")
	f := parseFlags(t, "--api.url=https://api.example.net/v1", "--config.file="+file)
	api, collect := f.Defaults()
	loaded, err := LoadFile(file, api, collect, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	got := settings(f.Warnings(env(nil), loaded))
	want := []string{
		"--config.file: projects[1].access_key_file",
		"--config.file: projects[1].api_url (or --api.url)",
		"--config.file: projects[1].http_client.tls_config.insecure_skip_verify (or --api.tls.insecure-skip-verify)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("config file warnings %q, want %q", got, want)
	}
}

// TestProxyCredentialsRefused: userinfo in --api.proxy-url would show in
// process listings; the error names the flag and not the password.
func TestProxyCredentialsRefused(t *testing.T) {
	f := parseFlags(t, "--api.proxy-url=http://user:hunter2@proxy.example:3128")
	err := f.CheckHTTPClient()
	if err == nil || !strings.Contains(err.Error(), "--api.proxy-url") || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("CheckHTTPClient: %v, want an error naming --api.proxy-url without the password", err)
	}
}
