package poller

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// TestSecurityDocRetryAfterCap: the Retry-After cap docs/security.md
// promises is the poller's.
func TestSecurityDocRetryAfterCap(t *testing.T) {
	doc, err := os.ReadFile("../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("| `Retry-After` deferral | %d min or %d `--collect.interval`, whichever is longer |", MinMaxDeferral/time.Minute, MaxDeferralIntervals)
	if !strings.Contains(string(doc), want) {
		t.Errorf("docs/security.md lacks the row %q", want)
	}
	if got := maxDeferral(time.Hour); got != MaxDeferralIntervals*time.Hour {
		t.Errorf("maxDeferral(1h) = %s", got)
	}
}
