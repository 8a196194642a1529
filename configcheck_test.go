package main

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// TestConfigCheckCarelessSettings: --config.check (and so every start)
// refuses what is never right, naming the flag, and returns the rest as
// warnings naming their settings.
func TestConfigCheckCarelessSettings(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	access, secret := file("access", "ak\n", 0o600), file("secret", "sk\n", 0o644)
	token := file("token", "0123456789\n", 0o600)
	check := func(args ...string) ([]string, error) {
		t.Helper()
		f, err := parseFlags(append([]string{"--api.access-key-file=" + access, "--api.secret-key-file=" + secret}, args...), func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		f.euid = 1000 // the tests may run as root
		c, err := checkConfig(f, func(string) string { return "" })
		var settings []string
		for _, w := range c.warnings {
			settings = append(settings, w.Setting)
		}
		slices.Sort(settings)
		return settings, err
	}
	got, err := check("--api.url=http://api.example.net/v1", "--api.tls.insecure-skip-verify",
		"--admin.listen-address=127.0.0.1:0", "--admin.token-file="+token)
	want := []string{"--admin.token-file", "--api.secret-key-file", "--api.tls.insecure-skip-verify", "--api.url (CLOUDDB_API_URL)"}
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("warnings %q (err %v), want %q", got, err, want)
	}
	for _, tc := range []struct{ args []string }{
		{[]string{"--api.url=https://api.example.net/v1", "--api.proxy-url=http://u:pw@proxy.example:3128"}},
		{[]string{"--api.url=https://api.example.net/v1", "--admin.listen-address=0.0.0.0:9867", "--admin.token-file=" + token}},
	} {
		if _, err := check(tc.args...); err == nil {
			t.Errorf("%v: accepted", tc.args)
		} else if !strings.Contains(err.Error(), "--api.proxy-url") && !strings.Contains(err.Error(), "--admin.allow-insecure-listener") || strings.Contains(err.Error(), "pw@") {
			t.Errorf("%v: %v, want an error naming the flag, without the password", tc.args, err)
		}
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

// --config.check reads the price file: a bad one fails it with the path to
// the bad key, a good one (the shipped example) passes.
func TestConfigCheckPriceFile(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "prices.yml")
	if err := os.WriteFile(bad, []byte("currency: USD\neffective_date: 2026-11-01\ncompute:\n  us-east-1: {\"1000x4\": 0.09}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	check := func(file string) error {
		t.Helper()
		f, err := parseFlags([]string{"--simulate", "--pricing.file=" + file}, func(string) string { return "" })
		if err != nil {
			t.Fatal(err)
		}
		_, err = checkConfig(f, func(string) string { return "" })
		return err
	}
	if err := check(bad); err == nil || !strings.Contains(err.Error(), `--pricing.file: compute.us-east-1."1000x4": "1000x4" is not a size`) {
		t.Errorf("bad price file: %v; want the path to the bad size", err)
	}
	if err := check("deploy/pricing.example.yml"); err != nil {
		t.Errorf("the example price file: %v", err)
	}
	if code := run([]string{"--config.check", "--log.level=error", "--simulate", "--pricing.file=" + bad}, func(string) string { return "" }); code != 2 {
		t.Errorf("--config.check with a bad price file exited %d, want 2", code)
	}
}
