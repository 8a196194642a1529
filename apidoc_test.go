package main

import (
	"os"
	"regexp"
	"slices"
	"strconv"
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

// TestAPIDocCountsTheCatalog: docs/api.md's count of the client's operations
// is the catalog's, and its revision 2026 additions are catalog operations.
func TestAPIDocCountsTheCatalog(t *testing.T) {
	doc, err := os.ReadFile("docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`typed client for all (\d+) operations of the catalog \(the first revision's (\d+) plus\s+revision 2026's ([^)]*)\)`).FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/api.md does not say how many operations the client has")
	}
	all, first := atoi(t, string(m[1])), atoi(t, string(m[2]))
	added := regexp.MustCompile("`(\\w+)`").FindAllStringSubmatch(string(m[3]), -1)
	catalog := apiclient.Catalog()
	if all != len(catalog) || first+len(added) != all {
		t.Errorf("docs/api.md: all %d operations, the first revision's %d plus %d; the catalog has %d", all, first, len(added), len(catalog))
	}
	for _, a := range added {
		if !slices.ContainsFunc(catalog, func(o apiclient.Operation) bool { return o.Name == a[1] }) {
			t.Errorf("docs/api.md names %s as a revision 2026 operation; the catalog has none", a[1])
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
