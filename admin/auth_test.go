package admin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadWebConfig(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Without users, exporter-toolkit gets the file itself.
	plain := write("plain.yml", "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n")
	wc, err := LoadWebConfig(plain)
	if err != nil || wc.ServeFile != plain || len(wc.Users) != 0 {
		t.Fatalf("plain: %+v %v", wc, err)
	}
	// With users: a private copy without them, TLS paths made absolute.
	withUsers := write("users.yml", "tls_server_config:\n  cert_file: server.crt\n  key_file: /abs/server.key\nbasic_auth_users:\n  alice: $2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi\n")
	wc, err = LoadWebConfig(withUsers)
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Close()
	if wc.ServeFile == withUsers || wc.Users["alice"] == "" {
		t.Fatalf("users: %+v", wc)
	}
	info, err := os.Stat(wc.ServeFile)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("derived file mode: %v %v", info, err)
	}
	derived, _ := os.ReadFile(wc.ServeFile)
	if strings.Contains(string(derived), "basic_auth_users") || !strings.Contains(string(derived), filepath.Join(dir, "server.crt")) ||
		!strings.Contains(string(derived), "/abs/server.key") {
		t.Errorf("derived config:\n%s", derived)
	}
	wc.Close()
	if _, err := os.Stat(wc.ServeFile); !os.IsNotExist(err) {
		t.Errorf("Close left the derived file: %v", err)
	}
	if _, err := LoadWebConfig(write("bad.yml", "basic_auth_users: [a]\n")); err == nil {
		t.Error("a list of users was accepted")
	}
}
