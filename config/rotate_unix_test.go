//go:build unix

package config

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestCredentialsRereadRefusesAFIFO: a FIFO put at a key file's path made
// the re-read after a 401 wait for a writer for ever, the poller with it,
// and the exporter survived SIGTERM. Without O_NONBLOCK this test hangs,
// not fails; the deadline of go test ends it. A Kubernetes Secret's files
// are symbolic links: those are still followed.
func TestCredentialsRereadRefusesAFIFO(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "..data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "access"), []byte("ak1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	access, secret := filepath.Join(dir, "access"), filepath.Join(dir, "secret")
	if err := os.Symlink(filepath.Join("..data", "access"), access); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(secret, 0o600); err != nil {
		t.Fatal(err)
	}
	c := Credentials{AccessKey: "ak0", SecretKey: "sk0", Files: CredentialFiles{AccessKey: access, SecretKey: secret}}
	_, err := c.Reread()
	if err == nil || !strings.Contains(err.Error(), "FIFO") {
		t.Errorf("Reread with a FIFO as the secret key file = %v, want a refusal naming the FIFO", err)
	}
	c.Files.SecretKey = ""
	if got, err := c.Reread(); err != nil || got.AccessKey != "ak1" {
		t.Errorf("Reread through a symbolic link (a Kubernetes Secret) = %q, %v; want ak1", got.AccessKey, err)
	}
}
