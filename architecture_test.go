package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/clouddb/clouddb_exporter/"

// mayImport is the rule of docs/architecture.md: which of the module's
// packages each package's non-test code may import. Data flows one way,
// apiclient -> poller -> fleet snapshot -> collector (the metrics) ->
// exposition (the /metrics handler), and only main and projects wire the
// parts together.
var mayImport = map[string][]string{
	".":                      {"admin", "apiclient", "apimetrics", "changes", "cloudsim", "config", "dataplane", "exposition", "fleet", "internal/flagval", "internal/httplimit", "internal/safefile", "logging", "pricing", "projects", "rightsizing", "sd", "shard"},
	"admin":                  {"apiclient", "fleet", "internal/flagval", "internal/httplimit", "internal/safefile"},
	"apiclient":              {},
	"apimetrics":             {"apiclient"},
	"changes":                {"apiclient", "fleet", "internal/flagval", "internal/safefile"},
	"cloudsim":               {"apiclient"}, // its wire types only: see TestSimulatorKeepsItsOwnRoutes
	"cmd/cloudsim":           {"cloudsim"},
	"collector":              {"apiclient", "fleet"},
	"config":                 {"apiclient", "internal/flagval", "internal/safefile"},
	"dataplane":              {"apiclient", "collector", "config", "fleet", "internal/safefile"},
	"exposition":             {"apimetrics", "collector", "fleet"},
	"fleet":                  {"apiclient"},
	"logging":                {"internal/flagval"},
	"poller":                 {"apiclient", "config", "fleet", "internal/gate", "shard"},
	"pricing":                {"apiclient", "collector", "config", "fleet"},
	"rightsizing":            {"apiclient", "collector", "fleet", "pricing"},
	"projects":               {"apiclient", "apimetrics", "config", "dataplane", "fleet", "poller", "shard"},
	"sd":                     {"apiclient", "fleet"},
	"shard":                  {"internal/flagval"},
	"internal/fakeclock":     {},
	"internal/fleettest":     {"apiclient", "fleet"},
	"internal/dataplanetest": {"apiclient", "dataplane", "fleet", "internal/fleettest"},
	"internal/collectortest": {"collector", "fleet"},
	"internal/gate":          {},
	"internal/flagval":       {},
	"internal/httplimit":     {},
	"internal/safefile":      {},
	"internal/syncbuf":       {},
	"internal/testbin":       {"internal/syncbuf"},
	"alerts":                 {},
	"dashboards":             {},
	"deploy":                 {},
	"e2e":                    {},
	"contract":               {},
}

// sources maps each package directory to the parsed imports and the text
// of its non-test Go files.
func sources(t *testing.T) (imports map[string][]string, text map[string]string) {
	t.Helper()
	imports, text = map[string][]string{}, map[string]string{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "." || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() && path != "." {
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module (mixin/, deploy/helm/)
			}
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(path))
		if _, seen := imports[dir]; !seen {
			imports[dir] = nil // a package without module imports is listed too
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if rest, ok := strings.CutPrefix(p, module); ok && !slices.Contains(imports[dir], rest) {
				imports[dir] = append(imports[dir], rest)
			}
		}
		raw, err := os.ReadFile(path)
		text[dir] += string(raw)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return imports, text
}

func TestPackageImports(t *testing.T) {
	imports, _ := sources(t)
	for _, dir := range slices.Sorted(maps.Keys(imports)) {
		allowed, ok := mayImport[dir]
		if !ok {
			t.Errorf("package %s is not in docs/architecture.md's import rule (mayImport): add it to both", dir)
			continue
		}
		for _, imp := range imports[dir] {
			if !slices.Contains(allowed, imp) {
				t.Errorf("%s imports %s; it may import only %v (docs/architecture.md)", dir, imp, allowed)
			}
		}
	}
}

// TestSimulatorKeepsItsOwnRoutes keeps the simulator an independent oracle
// of the API: it shares the client's wire types, not its operation catalog,
// so that a wrong catalog entry fails the client's tests against it.
func TestSimulatorKeepsItsOwnRoutes(t *testing.T) {
	_, text := sources(t)
	for _, name := range []string{"apiclient.Catalog", "apiclient.Lookup", "apiclient.Operation{"} {
		if strings.Contains(text["cloudsim"], name) {
			t.Errorf("cloudsim uses %s: its routes must not be derived from the client's catalog", name)
		}
	}
}

// Size limits outside the simulator (cloudsim/, cmd/cloudsim/) and tests:
// a function longer than a screen or a file longer than a few hundred lines
// is a sign of more than one concern; poller/ keeps the state's calls only
// (the data plane has its own package).
const (
	maxFuncLines   = 80
	maxFileLines   = 500
	maxPollerLines = 2000
)

func TestSizes(t *testing.T) {
	fset := token.NewFileSet()
	poller := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return skipDir(path, d)
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		lines := fset.File(f.Pos()).LineCount()
		if filepath.ToSlash(filepath.Dir(path)) == "poller" {
			poller += lines
		}
		if lines > maxFileLines {
			t.Errorf("%s has %d lines; split it (at most %d)", path, lines, maxFileLines)
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok {
				n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
				if n > maxFuncLines {
					t.Errorf("%s: %s has %d lines; split it (at most %d)", path, fn.Name.Name, n, maxFuncLines)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if poller >= maxPollerLines {
		t.Errorf("poller/ has %d lines of code; keep it under %d", poller, maxPollerLines)
	}
}

// skipDir leaves out what TestSizes does not measure: hidden directories,
// testdata, the simulator and other modules (mixin/, deploy/helm/).
func skipDir(path string, d fs.DirEntry) error {
	if path == "." {
		return nil
	}
	if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "cloudsim" {
		return filepath.SkipDir
	}
	if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
		return filepath.SkipDir
	}
	return nil
}
