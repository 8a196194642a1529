package deploy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/clouddb/clouddb_exporter/admin"
	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

const helmSchema = "deploy/helm/clouddb-exporter/values.schema.json"

// allowSchema matches the admin.allow property of the chart's schema up to
// the end of its enum: the part generated from the exporter's catalog.
var allowSchema = regexp.MustCompile(`(?s)( *)"allow": \{\n *"description": [^\n]*\n(.*?"enum": \[\n)(.*?)(\n *\])`)

// TestHelmSchemaAdminOperations keeps the Helm chart's values.schema.json,
// which refuses an admin.allow entry that is not a write operation before
// the pod starts, generated from the exporter's catalog (the chart's tests
// live in a module of their own, without the exporter's packages):
// `go test ./deploy/ -run TestHelmSchemaAdminOperations -update` rewrites
// the enum and its description.
func TestHelmSchemaAdminOperations(t *testing.T) {
	old := readFile(t, helmSchema)
	m := allowSchema.FindSubmatchIndex(old)
	if m == nil {
		t.Fatalf("%s: no admin.allow enum found", helmSchema)
	}
	indent := string(old[m[2]:m[3]])
	description, _ := json.Marshal("The write operations permitted (--admin.allow); empty: every write operation except " +
		strings.Join(admin.OptIn(), ", ") + ".")
	var items []string
	for _, op := range admin.WriteOperations() {
		items = append(items, indent+"      "+strconvQuote(op))
	}
	generated := indent + `"allow": {` + "\n" + indent + `  "description": ` + string(description) + ",\n" +
		string(old[m[4]:m[5]]) + strings.Join(items, ",\n") + string(old[m[8]:m[9]])
	got := string(old[m[0]:m[1]])
	if got == generated {
		return
	}
	if *update {
		out := string(old[:m[0]]) + generated + string(old[m[1]:])
		if err := os.WriteFile(filepath.Join(testbin.RepoRoot(), helmSchema), []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s: admin.allow is not the exporter's write operations; run go test ./deploy/ -run TestHelmSchemaAdminOperations -update\ngot:\n%s\nwant:\n%s", helmSchema, got, generated)
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
