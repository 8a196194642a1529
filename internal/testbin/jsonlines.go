package testbin

import (
	"encoding/json"
	"strings"
	"testing"
)

// JSONLines decodes one JSON object per non-blank line, as the audit log holds.
func JSONLines(t testing.TB, text string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("JSON line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}
