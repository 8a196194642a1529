package dataplane

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestSecurityDocStateFileBound: the bound of the log state file that
// docs/security.md, docs/configuration.md and the runbook promise is the
// code's.
func TestSecurityDocStateFileBound(t *testing.T) {
	for doc, want := range map[string]string{
		"../docs/security.md":      fmt.Sprintf("Its size is checked before it is read (%d MiB at most)", maxPositionsFile>>20),
		"../docs/configuration.md": fmt.Sprintf("a file over %d MiB is refused unread", maxPositionsFile>>20),
		"../alerts/runbook.md":     fmt.Sprintf("a FIFO or a device at the path, a file over %d MiB", maxPositionsFile>>20),
	} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		// Whatever the line breaks.
		if !strings.Contains(strings.Join(strings.Fields(string(b)), " "), want) {
			t.Errorf("%s does not say %q", doc, want)
		}
	}
}
