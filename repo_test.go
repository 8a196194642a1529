package main

import (
	"bufio"
	"bytes"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// repoFiles returns the repository's files whose names end in one of exts,
// as slash-separated paths from the root, leaving out git's own directory
// and what tools download or build (vendor/, node_modules/, dist/, bin/).
func repoFiles(t *testing.T, exts ...string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "vendor", "node_modules", "dist", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		if slices.ContainsFunc(exts, func(ext string) bool { return strings.HasSuffix(p, ext) }) {
			files = append(files, filepath.ToSlash(p))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no %v file found: the test does not run from the repository's root", exts)
	}
	return files
}

// TestNoPathOutsideRepository: someone who clones the repository must be
// able to follow every reference, so no file points at the files that sat
// beside it where it was written (the API is described in docs/api.md).
func TestNoPathOutsideRepository(t *testing.T) {
	// Built from pieces so that this file does not match itself.
	outside := regexp.MustCompile(`shared` + `/spec|\.\./` + `shared\b|/` + `work/(shared|notes)\b`)
	for _, f := range repoFiles(t, ".go", ".md", ".sh", ".yml", ".yaml", ".jsonnet", ".libsonnet") {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range bytes.Split(data, []byte("\n")) {
			if m := outside.Find(line); m != nil {
				t.Errorf("%s:%d refers to %q, a path outside the repository: cite docs/ instead", f, i+1, m)
			}
		}
	}
}

// issueRef is a reference to an issue tracker's number: the word issue or
// issues, then a number. A bare "#" and a number is left alone: it has
// other senses.
var issueRef = regexp.MustCompile(`(?i)\bissues? #?[0-9]+`)

// TestCommentsCiteNoIssueNumbers: comments say why in their own words, or
// cite a docs page; an issue number means nothing to someone who has only
// the repository.
func TestCommentsCiteNoIssueNumbers(t *testing.T) {
	fset := token.NewFileSet()
	for _, f := range repoFiles(t, ".go") {
		if strings.Contains(f, "/testdata/") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		for _, group := range file.Comments {
			for _, c := range group.List {
				if m := issueRef.FindString(c.Text); m != "" {
					t.Errorf("%s: comment cites %q: say why, or cite docs/", fset.Position(c.Pos()), m)
				}
			}
		}
	}
	for _, f := range repoFiles(t, ".sh", ".yml", ".yaml", ".jsonnet", ".libsonnet") {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(data), "\n") {
			if comment := lineComment(line); comment != "" {
				if m := issueRef.FindString(comment); m != "" {
					t.Errorf("%s:%d: comment cites %q: say why, or cite docs/", f, i+1, m)
				}
			}
		}
	}
}

// lineComment is the comment part of a shell, YAML or jsonnet line: from a
// "#" or "//" that starts the line or follows a space.
func lineComment(line string) string {
	for i := range len(line) {
		if (line[i] == '#' || strings.HasPrefix(line[i:], "//")) && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t') {
			return line[i:]
		}
	}
	return ""
}

// mdLink is an inline Markdown link or image target.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocsLinks: every relative link of the Markdown files leads to a file of
// the repository (and to a heading of it, for an anchor), and the README
// links every page of docs/, so that nothing moved out of the README is lost.
func TestDocsLinks(t *testing.T) {
	anchors := map[string][]string{}
	headings := func(f string) []string {
		if a, ok := anchors[f]; ok {
			return a
		}
		a := markdownAnchors(t, f)
		anchors[f] = a
		return a
	}
	linked := map[string]bool{}
	for _, f := range repoFiles(t, ".md") {
		for _, l := range markdownLinks(t, f) {
			n, target := l.line, l.target
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			dest := f
			if file != "" {
				dest = path.Join(path.Dir(f), file)
			}
			if dest == ".." || strings.HasPrefix(dest, "../") {
				t.Errorf("%s:%d: link %q leaves the repository", f, n, target)
				continue
			}
			if _, err := os.Stat(dest); err != nil {
				t.Errorf("%s:%d: link %q: %v", f, n, target, err)
				continue
			}
			if f == "README.md" {
				linked[dest] = true
			}
			if anchor != "" && strings.HasSuffix(dest, ".md") && !slices.Contains(headings(dest), anchor) {
				t.Errorf("%s:%d: link %q: %s has no heading with anchor #%s", f, n, target, dest, anchor)
			}
		}
	}
	for _, page := range repoFiles(t, ".md") {
		if path.Dir(page) == "docs" && !linked[page] {
			t.Errorf("README.md does not link %s", page)
		}
	}
}

// mdLinkAt is a relative or absolute link target and the line it is on.
type mdLinkAt struct {
	line   int
	target string
}

// markdownLinks lists the link targets of f, outside code blocks and code
// spans.
func markdownLinks(t *testing.T, f string) []mdLinkAt {
	t.Helper()
	var links []mdLinkAt
	eachProseLine(t, f, func(n int, line string) {
		for _, m := range mdLink.FindAllStringSubmatch(stripCodeSpans(line), -1) {
			links = append(links, mdLinkAt{n, m[1]})
		}
	})
	return links
}

// markdownAnchors lists the anchors GitHub gives the headings of f.
func markdownAnchors(t *testing.T, f string) []string {
	t.Helper()
	var anchors []string
	seen := map[string]int{}
	eachProseLine(t, f, func(_ int, line string) {
		text, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if !ok || !strings.HasPrefix(line, "#") {
			return
		}
		a := headingAnchor(text)
		if k := seen[a]; k > 0 {
			anchors = append(anchors, a+"-"+string(rune('0'+k)))
		} else {
			anchors = append(anchors, a)
		}
		seen[a]++
	})
	return anchors
}

// headingAnchor is GitHub's anchor of a heading: lower case, spaces made
// hyphens, punctuation other than hyphens and underscores dropped.
func headingAnchor(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// eachProseLine calls fn with the lines of f outside fenced code blocks.
func eachProseLine(t *testing.T, f string, fn func(n int, line string)) {
	t.Helper()
	file, err := os.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = file.Close() }() // read only
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, 1<<20)
	fenced := false
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			fn(n, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// stripCodeSpans blanks `code spans`, whose brackets are not links.
func stripCodeSpans(line string) string {
	parts := strings.Split(line, "`")
	for i := 1; i < len(parts); i += 2 {
		parts[i] = ""
	}
	return strings.Join(parts, "``")
}

// TestReadmeTestCommand: the README's test command is what CI runs, the
// commands of .ci/run joined with &&, so that a new contributor runs the
// suite as CI does.
func TestReadmeTestCommand(t *testing.T) {
	script, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	var commands []string
	for _, line := range strings.Split(string(script), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "set ") || strings.HasPrefix(line, "cd ") {
			continue
		}
		commands = append(commands, strings.TrimPrefix(line, "exec "))
	}
	if len(commands) == 0 {
		t.Fatal(".ci/run runs no command")
	}
	want := strings.Join(commands, " && ")
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	fenced := false
	for _, line := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced && strings.HasPrefix(line, want) {
			rest := strings.TrimSpace(strings.TrimPrefix(line, want))
			if rest == "" || strings.HasPrefix(rest, "#") {
				return
			}
		}
	}
	t.Errorf("README.md's code blocks have no line running %q, what .ci/run runs", want)
}

// TestNoBuildOutputTracked: a binary in the tree goes into every clone and
// every Docker build context, and is out of date the day after it is
// committed. Executables are scripts, and no tracked file is a compiled
// program.
func TestNoBuildOutputTracked(t *testing.T) {
	out, err := exec.Command("git", "ls-files", "-s", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	for _, entry := range bytes.Split(out, []byte{0}) {
		meta, name, ok := strings.Cut(string(entry), "\t")
		if !ok {
			continue
		}
		head := make([]byte, 4)
		f, err := os.Open(name)
		if err != nil {
			continue // deleted in the work tree
		}
		n, _ := f.Read(head)
		_ = f.Close()
		head = head[:n]
		switch {
		case bytes.HasPrefix(head, []byte("\x7fELF")), bytes.HasPrefix(head, []byte("MZ")),
			bytes.HasPrefix(head, []byte{0xcf, 0xfa, 0xed, 0xfe}):
			t.Errorf("%s is a compiled program: build into bin/ or dist/ (make build), never into the tree", name)
		case strings.HasPrefix(meta, "100755") && !bytes.HasPrefix(head, []byte("#!")):
			t.Errorf("%s is executable but not a script", name)
		}
	}
}

// TestBuildIsReproducible: the version information linked into a build
// comes from the commit, not from the clock or the machine, so that two
// release builds of one commit give the same checksums.
func TestBuildIsReproducible(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	ldflags := func(env ...string) string {
		cmd := exec.Command("make", "-s", "-n", "build")
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("make -n build: %v", err)
		}
		return string(out)
	}
	if got := ldflags("SOURCE_DATE_EPOCH=86400"); !strings.Contains(got, "version.BuildDate=19700102-00:00:00") {
		t.Errorf("with SOURCE_DATE_EPOCH=86400 the build date is not 1970-01-02:\n%s", got)
	}
	host, _ := os.Hostname()
	for _, env := range [][]string{nil, {"USER=someone-else", "HOSTNAME=elsewhere"}} {
		got := ldflags(env...)
		if host != "" && strings.Contains(got, host) {
			t.Errorf("the build links the machine's name %q:\n%s", host, got)
		}
		if got != ldflags() {
			t.Errorf("two builds of one commit differ:\n%s\n%s", got, ldflags())
		}
	}
}

// TestChangelogIsVersioned: the CHANGELOG opens with the changes not yet
// released, then one section per release, newest first, the newest being
// the VERSION file's or older (VERSION is bumped as a release is cut).
func TestChangelogIsVersioned(t *testing.T) {
	data, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	version, err := os.ReadFile("VERSION")
	if err != nil {
		t.Fatal(err)
	}
	release := regexp.MustCompile(`^## ([0-9]+\.[0-9]+\.[0-9]+) / [0-9]{4}-[0-9]{2}-[0-9]{2}$`)
	var sections, releases []string
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "## ") {
			sections = append(sections, line)
			if m := release.FindStringSubmatch(line); m != nil {
				releases = append(releases, m[1])
			} else if line != "## Unreleased" {
				t.Errorf("CHANGELOG.md: %q is neither \"## Unreleased\" nor \"## X.Y.Z / YYYY-MM-DD\"", line)
			}
		}
	}
	if len(sections) == 0 || sections[0] != "## Unreleased" || len(releases) == 0 {
		t.Fatalf("CHANGELOG.md: want \"## Unreleased\" first, then released versions; sections %q", sections)
	}
	if v := strings.TrimSpace(string(version)); releases[0] != v && !versionAfter(v, releases[0]) {
		t.Errorf("VERSION %s is older than the CHANGELOG's newest release %s", v, releases[0])
	}
	for i := 1; i < len(releases); i++ {
		if !versionAfter(releases[i-1], releases[i]) {
			t.Errorf("CHANGELOG.md: %s is listed above %s, not newer", releases[i-1], releases[i])
		}
	}
}

// versionAfter reports whether version a is newer than b (X.Y.Z).
func versionAfter(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range min(len(pa), len(pb)) {
		x, _ := strconv.Atoi(pa[i])
		y, _ := strconv.Atoi(pb[i])
		if x != y {
			return x > y
		}
	}
	return len(pa) > len(pb)
}
