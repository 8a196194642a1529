package projects

import (
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/internal/syncbuf"
)

// TestUnreadableKeyFilesWarnOncePerChange: the file check runs every
// --api.credentials-check-interval (10 s); a key file left unreadable
// repeated the same WARN at every check. It is said once when the files
// become unreadable, once when they are read again, and again if they
// break once more.
func TestUnreadableKeyFilesWarnOncePerChange(t *testing.T) {
	files := writeKeys(t, t.TempDir(), "access-key-1", "secret-key-1")
	var logs syncbuf.Buffer
	c := &credentials{
		cur:    config.Credentials{AccessKey: "access-key-1", SecretKey: "secret-key-1", Files: files},
		logger: slog.New(slog.NewTextHandler(&logs, nil)),
	}
	check := func(n int) {
		for range n {
			c.settled("file changed")
		}
	}
	breakFile := func() {
		if err := os.WriteFile(files.SecretKey, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	breakFile()
	check(3)
	if n := strings.Count(logs.String(), "Cannot re-read the API credential files"); n != 1 {
		t.Errorf("%d WARNs over three checks of an unreadable file, want 1:\n%s", n, logs.String())
	}
	if err := os.WriteFile(files.SecretKey, []byte("secret-key-1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	check(2)
	if n := strings.Count(logs.String(), "The API credential files are readable again"); n != 1 {
		t.Errorf("%d lines saying the files are read again, want 1:\n%s", n, logs.String())
	}
	breakFile()
	check(2)
	if n := strings.Count(logs.String(), "Cannot re-read the API credential files"); n != 2 {
		t.Errorf("%d WARNs after the files broke twice, want 2:\n%s", n, logs.String())
	}
	if c.reread("unauthorized"); strings.Count(logs.String(), "Cannot re-read the API credential files") != 2 {
		t.Errorf("a 401's re-read of files already known unreadable warned again:\n%s", logs.String())
	}
}
