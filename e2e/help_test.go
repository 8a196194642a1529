package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestHelpIsShort runs --help as a user does: the flags in groups, each on
// a line with one line of help under it, within 80 columns, every flag of
// docs/configuration.md's table there, and the environment variables told
// once by their rule rather than repeated under every flag. It was 331
// lines and 22 KB; node_exporter's is about a line or two a flag.
func TestHelpIsShort(t *testing.T) {
	t.Parallel()
	code, out := testbin.Run(t, testbin.Build(t, "."), nil, "--help")
	if code != 0 {
		t.Fatalf("--help: exit code %d:\n%s", code, out)
	}
	doc, err := os.ReadFile(filepath.Join(testbin.RepoRoot(), "docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, _ := strings.Cut(string(doc), "| Flag | Environment | Default | Meaning |")
	table, _, _ = strings.Cut(table, "\n\n")
	var documented []string
	for _, row := range strings.Split(table, "\n") {
		if strings.HasPrefix(row, "| `--") {
			first := strings.Split(row, "|")[1]
			for _, m := range regexp.MustCompile("`--([a-z0-9.-]+)`").FindAllStringSubmatch(first, -1) {
				documented = append(documented, m[1])
			}
		}
	}
	flagLine := regexp.MustCompile(`^  (?:-h, )?--(?:\[no-\])?([a-z0-9.-]+)`)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	shown := map[string]bool{}
	var groups []string
	for i, line := range lines {
		if len(line) > 80 {
			t.Errorf("line %d is %d columns: %q", i+1, len(line), line)
		}
		if strings.HasSuffix(line, ":") && !strings.HasPrefix(line, " ") && i > 0 && lines[i-1] == "" {
			groups = append(groups, line)
		}
		m := flagLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		shown[m[1]] = true
		if i+2 < len(lines) && strings.HasPrefix(lines[i+2], "        ") {
			t.Errorf("--%s has more than one line of help:\n%s\n%s\n%s", m[1], line, lines[i+1], lines[i+2])
		}
	}
	if len(documented) < 20 {
		t.Fatalf("found %d flags in docs/configuration.md's table", len(documented))
	}
	for _, flag := range documented {
		if !shown[flag] {
			t.Errorf("--help does not show --%s", flag)
		}
	}
	if len(groups) < 8 || groups[0] != "General:" {
		t.Errorf("groups %q, want General first and one per part (web, api, collect, admin...)", groups)
	}
	if n := strings.Count(out, "$CLOUDDB_"); n > 3 || !strings.Contains(out, "CLOUDDB_ and the\nflag's name upper-cased") {
		t.Errorf("%d variables repeated under the flags, or the rule that derives them missing:\n%s", n, out)
	}
	if most := 2*len(shown) + 3*len(groups) + 12; len(lines) > most {
		t.Errorf("--help is %d lines for %d flags, want at most %d", len(lines), len(shown), most)
	}
	t.Logf("--help: %d lines, %d bytes, %d flags in %d groups", len(lines), len(out), len(shown), len(groups))
}
