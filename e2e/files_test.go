package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestAuditFIFOAfterRotation: a FIFO put at the audit path after a rotation
// froze the whole admin surface on the reopen (an unauthenticated 401
// included) and kept the process alive 100 s after SIGTERM. Now the FIFO is
// refused: a write is refused with 503 and nothing sent, every other answer
// comes, SIGTERM stops the process (testbin's Stop fails the test after
// 10 s), and a symbolic link put there gets no record either.
func TestAuditFIFOAfterRotation(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.log")
	r := startAdmin(t, nil, "--admin.audit-log="+path)
	svc := demoIDs(t, r).service["embeddings"]
	write := "/api/v1/projects/" + testbin.SimProject + "/services/" + svc + "/enablePooler"
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, body := r.Admin(t, "GET", "/api/v1/operations", "", "Authorization", ""); code != http.StatusUnauthorized {
		t.Errorf("unauthenticated request with a FIFO at the audit path: %d %s, want 401", code, body)
	}
	if code, _, body := r.Admin(t, "POST", write, ""); code != http.StatusServiceUnavailable {
		t.Errorf("write with a FIFO at the audit path: %d %s, want 503", code, body)
	}
	if n := r.Sim.WriteRequests(t)["enablePooler"]; n != 0 {
		t.Errorf("the write refused for its audit reached the API %d times", n)
	}

	target := filepath.Join(dir, "unrelated")
	if err := os.WriteFile(target, []byte("unrelated\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	if code, _, body := r.Admin(t, "POST", write, ""); code != http.StatusServiceUnavailable {
		t.Errorf("write with a symbolic link at the audit path: %d %s, want 503", code, body)
	}
	if b, err := os.ReadFile(target); err != nil || string(b) != "unrelated\n" {
		t.Errorf("the symbolic link's target got audit records: %q (%v)", b, err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if code := r.Stop(t); code != 0 {
		t.Errorf("exit code %d after SIGTERM with a FIFO at the audit path, want 0", code)
	}
	if out := r.Output(); !strings.Contains(out, "FIFO") {
		t.Errorf("the log does not say what the audit path names:\n%s", out)
	}
}
