package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/alecthomas/kingpin/v2"
)

func TestCredentialsReread(t *testing.T) {
	dir := t.TempDir()
	access, secret := filepath.Join(dir, "access"), filepath.Join(dir, "secret")
	write := func(path, v string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(v+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(access, "ak1")
	write(secret, "sk1")
	app := kingpin.New("test", "")
	f := AddFlags(app)
	if _, err := app.Parse([]string{"--api.url=http://127.0.0.1:1/v1", "--api.project-id=p", "--api.access-key-file=" + access, "--api.secret-key-file=" + secret}); err != nil {
		t.Fatal(err)
	}
	p, err := f.SingleProject(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	write(secret, "sk2")
	got, err := p.Credentials.Reread()
	if err != nil || got.AccessKey != "ak1" || got.SecretKey != "sk2" {
		t.Fatalf("Reread = %v, %v; want ak1, sk2", got.SecretKey == "sk2", err)
	}
	write(secret, "")
	if _, err := p.Credentials.Reread(); err == nil {
		t.Error("Reread of an empty file succeeds: half a rotation would be installed")
	}
	env := Credentials{AccessKey: "from-env", SecretKey: "from-env"}
	if got, err := env.Reread(); err != nil || got != env {
		t.Errorf("Reread of keys from the environment = %v, %v; want them unchanged", got, err)
	}
}
