package testbin

import (
	"encoding/json"
	"strings"
	"testing"
)

// JSONLines decodes one JSON object per line (the audit log's format),
// skipping blank lines; any other line fails the test.
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
