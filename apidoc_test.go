package main

import (
	"os"
	"strings"
	"testing"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// TestAPIDocCoversCatalog: docs/api.md, the API as the project reads it,
// names every operation of the client's catalog, with its method.
func TestAPIDocCoversCatalog(t *testing.T) {
	doc, err := os.ReadFile("docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(doc), "\n")
	for _, op := range apiclient.Catalog() {
		name := "`" + op.Name + "`"
		found := false
		for _, line := range lines {
			if strings.Contains(line, name) && strings.Contains(line, op.Method) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("docs/api.md has no line naming %s with its method %s", name, op.Method)
		}
	}
}
