package apiclient

import (
	"encoding/json"
	"testing"
)

// TestUnquoteMatchesJSON holds the hand unescaping to encoding/json's.
func TestUnquoteMatchesJSON(t *testing.T) {
	for _, q := range []string{
		`""`, `"plain"`, `"table \"public.events\""`, `"a\\b\/c"`, `"\b\f\n\r\t"`, `"\u00e9t\u00e9 \"x\""`,
		`"\ud83d\ude00"`, `"\ud800"`, "\"caf\xc3\xa9 \\\"x\\\"\"", "\"bad \xff \\\"x\\\"\"", `"end\\"`, `"é \"q\""`,
	} {
		var want string
		if err := json.Unmarshal([]byte(q), &want); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if got := unquote([]byte(q)); got != want {
			t.Errorf("unquote(%s) = %q, want %q", q, got, want)
		}
	}
}
