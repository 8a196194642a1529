package dataplane

import (
	"strings"
	"testing"
)

// TestLogsStartNamesTheStateFlag: without a state file, the line saying
// that counting starts now names the flag that makes it resume, and not
// the deprecated name (which starts the exporter with a WARN).
func TestLogsStartNamesTheStateFlag(t *testing.T) {
	h := newLogsHarness(t, 1, 5)
	h.tick()
	out := h.logs.String()
	if !strings.Contains(out, "Log counting starts now") {
		t.Fatalf("no line saying that counting starts now:\n%s", out)
	}
	if !strings.Contains(out, "resume_with=--state.file") || strings.Contains(out, "collect.logs.state-file") {
		t.Errorf("the line does not name --state.file alone:\n%s", out)
	}
}
