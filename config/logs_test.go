package config

import (
	"strings"
	"testing"
	"time"
)

// TestLogsDelayFlag: --collect.logs.delay is read as given, and one
// outside 0s to an hour is an error naming the flag.
func TestLogsDelayFlag(t *testing.T) {
	for _, bad := range []string{"-1s", "2h"} {
		f := parseFlags(t, "--collect.logs", "--collect.logs.delay="+bad, "--api.url=https://x/v1", "--api.project-id=p")
		if _, err := f.SingleProject(func(string) string { return "k" }); err == nil || !strings.Contains(err.Error(), "--collect.logs.delay") {
			t.Errorf("--collect.logs.delay=%s: err = %v, want one naming the flag", bad, err)
		}
	}
	f := parseFlags(t, "--collect.logs", "--collect.logs.delay=30s", "--api.url=https://x/v1", "--api.project-id=p")
	p, err := f.SingleProject(func(string) string { return "k" })
	if err != nil || p.Collect.Logs.Delay != 30*time.Second {
		t.Errorf("delay = %v, %v; want 30s", p.Collect.Logs.Delay, err)
	}
}
