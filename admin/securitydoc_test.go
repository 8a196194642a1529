package admin

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/httplimit"
)

// securityLimit returns the Value column of a row of docs/security.md's
// table of limits, by the start of its Limit column.
func securityLimit(t *testing.T, limit string) string {
	t.Helper()
	doc, err := os.ReadFile("../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(doc), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) > 3 && strings.HasPrefix(strings.TrimSpace(cells[1]), limit) {
			return strings.TrimSpace(cells[2])
		}
	}
	t.Fatalf("docs/security.md has no limit %q", limit)
	return ""
}

// TestSecurityDocLimits: the admin limits docs/security.md promises are
// the code's.
func TestSecurityDocLimits(t *testing.T) {
	for limit, want := range map[string][]string{
		"Failed admin authentications": {
			fmt.Sprintf("%d per client address (IPv6: /64), then 1 per %d s", authFailureBurst, authFailureEvery/time.Second),
			"bearer tokens and passwords alike",
		},
		"Admin connections per client address": {fmt.Sprintf("%d (an IPv6 /64", httplimit.AdminConnectionsPerClient)},
		"Audit field":                          {fmt.Sprintf("%d bytes", maxAuditField)},
	} {
		got := securityLimit(t, limit)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("docs/security.md's %q is %q, want it to say %q", limit, got, w)
			}
		}
	}
}
