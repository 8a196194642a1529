package e2e

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestChangesSimulateRestartWithFile: the embedded simulator is a new API at
// each start, so a --changes.file kept across a restart of --simulate keeps
// the feed but reports nothing as changed while the exporter was down.
func TestChangesSimulateRestartWithFile(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "changes.ndjson")
	args := func() []string {
		return []string{"--simulate", "--simulate.listen-address=" + testbin.FreeAddr(t), "--collect.interval=2s",
			"--collect.transition-interval=1s", "--changes.file=" + file}
	}
	p, url := testbin.StartExporter(t, nil, args()...)
	// The demo's timeline resizes a service and creates one in its first
	// 25 seconds: a restarted simulator undoes both.
	testbin.WaitFor(t, 60*time.Second, "the demo's first changes", func() bool {
		kinds := kindCounts(feedOf(t, url))
		return kinds["service/resized"] > 0 && kinds["service/created"] > 0
	})
	before := feedOf(t, url)
	last := before[len(before)-1].Cursor
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := p.Wait(t, 30*time.Second); code != 0 {
		t.Fatalf("exit %d", code)
	}

	restarted := time.Now()
	_, url = testbin.StartExporter(t, nil, args()...)
	waitCycles(t, url, 4)
	after := feedOf(t, url)
	if len(after) < len(before) || after[len(before)-1].Cursor != last {
		t.Fatalf("the feed did not come back from the file: %d events before the stop, %d after", len(before), len(after))
	}
	// A change reported as made while the exporter was down has its
	// window_start before the restart.
	for _, c := range after[len(before):] {
		if !c.WindowStart.IsZero() && c.WindowStart.Before(restarted) {
			t.Errorf("after the restart: %+v, reported as made while down", c)
		}
	}
}
