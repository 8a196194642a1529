package changes

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestDocsStateFileBound: the .state file's bound that docs/security.md
// and docs/changes.md promise is the code's.
func TestDocsStateFileBound(t *testing.T) {
	for doc, want := range map[string]string{
		"../docs/security.md": fmt.Sprintf("The `.state` file's size is checked before it is read (%d MiB at most, some 300,000 objects); it is then decoded one object at a time, each value bounded at %d MiB", maxStateFile>>20, maxStateValue>>20),
		"../docs/changes.md":  fmt.Sprintf("over %d MiB or with one value over %d MiB: it is decoded one object at a time) is moved aside", maxStateFile>>20, maxStateValue>>20),
	} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(strings.Join(strings.Fields(string(b)), " "), want) {
			t.Errorf("%s does not say %q", doc, want)
		}
	}
}
