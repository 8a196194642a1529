package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestAdminAuditLogRotation: after the audit log is renamed (logrotate's
// default) or removed, the next record is in a new file at the path,
// created 0600, and SIGHUP or POST /-/reload reopen it at once; the
// records used to go on into the renamed or deleted file.
func TestAdminAuditLogRotation(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.log")
	r := startAdmin(t, nil, "--admin.audit-log="+path, "--web.enable-lifecycle")
	request := func() string {
		t.Helper()
		code, header, body := r.Admin(t, "GET", "/api/v1/operations", "")
		if code != http.StatusOK {
			t.Fatalf("GET /api/v1/operations: %d %s", code, body)
		}
		return header.Get("X-Request-Id")
	}
	holds := func(file, id string) bool {
		data, err := os.ReadFile(file)
		return err == nil && strings.Contains(string(data), `"request_id":"`+id+`"`)
	}

	first := request()
	if !holds(path, first) {
		t.Fatalf("the audit log lacks the first request %s", first)
	}
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	second := request()
	if !holds(path, second) || holds(path+".1", second) {
		t.Errorf("after a rename the record of %s is not in a new file at the path", second)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	third := request()
	if !holds(path, third) {
		t.Errorf("after a removal the record of %s is not in a new file at the path", third)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the new audit log's mode: %v (%v), want 0600", fi.Mode(), err)
	}

	for _, reopen := range []struct {
		how string
		do  func() error
	}{
		{"SIGHUP", func() error { return r.Signal(syscall.SIGHUP) }},
		{"POST /-/reload", func() error { _, _ = testbin.Post(r.URL+"/-/reload", ""); return nil }},
	} {
		if err := os.Rename(path, path+".2"); err != nil {
			t.Fatal(err)
		}
		if err := reopen.do(); err != nil {
			t.Fatal(err)
		}
		testbin.WaitFor(t, 10*time.Second, "a new audit log after "+reopen.how, func() bool {
			_, err := os.Stat(path)
			return err == nil
		})
	}
}
