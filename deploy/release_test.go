package deploy

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

var releasePlatforms = []struct{ os, arch string }{
	{"linux", "amd64"}, {"linux", "arm64"}, {"darwin", "amd64"}, {"darwin", "arm64"}, {"windows", "amd64"}, {"windows", "arm64"},
}

// TestReleasePlatforms checks that `make crossbuild` builds the six
// platforms by default, from make's dry run.
func TestReleasePlatforms(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not found")
	}
	cmd := exec.Command("make", "-n", "-s", "crossbuild")
	cmd.Dir = testbin.RepoRoot()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n crossbuild: %v\n%s", err, out)
	}
	_, loop, _ := strings.Cut(string(out), "for platform in ")
	loop, _, _ = strings.Cut(loop, ";")
	var want []string
	for _, p := range releasePlatforms {
		want = append(want, p.os+"/"+p.arch)
	}
	if got := strings.Fields(loop); !slices.Equal(got, want) {
		t.Errorf("make crossbuild builds %v, want %v", got, want)
	}
}

// TestRelease runs `make release` into a temporary directory and checks
// what a user downloads: one tarball per platform holding the static binary
// (of the right format and architecture), LICENSE and NOTICE, and a
// sha256sums.txt that verifies. A cross-compilation takes about a minute
// on a cold build cache (two shared cores), so by default only linux/arm64
// is built, the case that proves cross-compiling works;
// CLOUDDB_TEST_RELEASE=all builds all six (about five minutes).
func TestRelease(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles the exporter")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not found")
	}
	platforms := releasePlatforms
	if os.Getenv("CLOUDDB_TEST_RELEASE") != "all" {
		platforms = platforms[1:2]
	}
	var names []string
	for _, p := range platforms {
		names = append(names, p.os+"/"+p.arch)
	}
	dist := t.TempDir()
	const version = "9.8.7-releasetest"
	cmd := exec.Command("make", "release", "DIST="+dist, "VERSION="+version, "PLATFORMS="+strings.Join(names, " "))
	cmd.Dir = testbin.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make release: %v\n%s", err, out)
	}

	sums := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(readAbs(t, filepath.Join(dist, "sha256sums.txt")))), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			t.Fatalf("sha256sums.txt line %q", line)
		}
		sums[name] = sum
	}
	if len(sums) != len(platforms) {
		t.Errorf("sha256sums.txt lists %d files, want %d: %v", len(sums), len(platforms), sums)
	}
	for _, p := range platforms {
		name := "clouddb_exporter-" + version + "." + p.os + "-" + p.arch
		tarball := name + ".tar.gz"
		b := readAbs(t, filepath.Join(dist, tarball))
		h := sha256.Sum256(b)
		if sums[tarball] != hex.EncodeToString(h[:]) {
			t.Errorf("%s: sha256 %x, sha256sums.txt says %q", tarball, h, sums[tarball])
		}
		binary := "clouddb_exporter"
		if p.os == "windows" {
			binary += ".exe"
		}
		files := untar(t, filepath.Join(dist, tarball))
		var names []string
		for n := range files {
			names = append(names, n)
		}
		slices.Sort(names)
		want := []string{name + "/LICENSE", name + "/NOTICE", name + "/" + binary}
		if !slices.Equal(names, want) {
			t.Errorf("%s holds %v, want %v", tarball, names, want)
			continue
		}
		if !strings.Contains(string(files[name+"/LICENSE"]), "Apache License") {
			t.Errorf("%s: LICENSE is not the Apache License", tarball)
		}
		checkBinary(t, tarball, p.os, p.arch, filepath.Join(dist, name, binary))
	}
}

// checkBinary opens the binary with the reader of its platform's format and
// checks its architecture; Linux binaries must also be static.
func checkBinary(t *testing.T, what, goos, goarch, path string) {
	t.Helper()
	switch goos {
	case "linux":
		f, err := elf.Open(path)
		if err != nil {
			t.Errorf("%s: not an ELF binary: %v", what, err)
			return
		}
		defer func() { _ = f.Close() }() // read only
		want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[goarch]
		if f.Machine != want {
			t.Errorf("%s: ELF machine %v, want %v", what, f.Machine, want)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
				t.Errorf("%s is dynamically linked (program header %v)", what, p.Type)
			}
		}
	case "darwin":
		f, err := macho.Open(path)
		if err != nil {
			t.Errorf("%s: not a Mach-O binary: %v", what, err)
			return
		}
		defer func() { _ = f.Close() }() // read only
		want := map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[goarch]
		if f.Cpu != want {
			t.Errorf("%s: Mach-O CPU %v, want %v", what, f.Cpu, want)
		}
	case "windows":
		f, err := pe.Open(path)
		if err != nil {
			t.Errorf("%s: not a PE binary: %v", what, err)
			return
		}
		defer func() { _ = f.Close() }() // read only
		want := map[string]uint16{"amd64": pe.IMAGE_FILE_MACHINE_AMD64, "arm64": pe.IMAGE_FILE_MACHINE_ARM64}[goarch]
		if f.Machine != want {
			t.Errorf("%s: PE machine %#x, want %#x", what, f.Machine, want)
		}
	}
}

func readAbs(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// untar returns the regular files of a .tar.gz by name.
func untar(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }() // read only
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	tr := tar.NewReader(zr)
	files := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return files
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if h.Typeflag == tar.TypeReg {
			b, err := io.ReadAll(tr)
			if err != nil {
				t.Fatal(err)
			}
			files[h.Name] = b
		}
	}
}

// TestReleaseVersionsAgree checks that what a release tags agrees: the
// VERSION file, the chart's version and appVersion (the image tag it
// pins), and the newest released section of CHANGELOG.md. A release
// changes the four in one commit (docs/development.md#releasing).
func TestReleaseVersionsAgree(t *testing.T) {
	version := strings.TrimSpace(string(readFile(t, "VERSION")))
	var chart struct {
		Version    string `yaml:"version"`
		AppVersion string `yaml:"appVersion"`
	}
	if err := yaml.Unmarshal(readFile(t, "deploy/helm/clouddb-exporter/Chart.yaml"), &chart); err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^## (\S+) / \d{4}-\d{2}-\d{2}$`).FindStringSubmatch(string(readFile(t, "CHANGELOG.md")))
	if m == nil {
		t.Fatal("CHANGELOG.md has no released section")
	}
	if chart.Version != version || chart.AppVersion != version || m[1] != version {
		t.Errorf("VERSION %s, Chart.yaml version %s and appVersion %s, CHANGELOG.md's newest release %s: want one version", version, chart.Version, chart.AppVersion, m[1])
	}
}

// TestReleaseNotes runs scripts/release-notes.sh as the release workflow
// does: for the tag of VERSION it prints that version's CHANGELOG section,
// and for any other tag it fails, naming what disagrees.
func TestReleaseNotes(t *testing.T) {
	version := strings.TrimSpace(string(readFile(t, "VERSION")))
	notes := func(tag string) (string, string, error) {
		cmd := exec.Command("scripts/release-notes.sh", tag)
		cmd.Dir = testbin.RepoRoot()
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		return string(out), stderr.String(), err
	}
	out, stderr, err := notes("v" + version)
	if err != nil {
		t.Fatalf("release-notes.sh v%s: %v\n%s", version, err, stderr)
	}
	changelog := string(readFile(t, "CHANGELOG.md"))
	_, section, _ := strings.Cut(changelog, "\n## "+version+" / ")
	_, section, _ = strings.Cut(section, "\n")
	section, _, _ = strings.Cut(section, "\n## ")
	if want := strings.TrimSpace(section) + "\n"; out != want || !strings.HasPrefix(out, "* [") {
		t.Errorf("release notes of v%s:\n%s\nwant its CHANGELOG section:\n%s", version, out, want)
	}
	if _, stderr, err := notes("v99.0.0"); err == nil || !strings.Contains(stderr, "VERSION holds "+version+", not 99.0.0") {
		t.Errorf("release-notes.sh v99.0.0: %v %q, want a failure naming VERSION", err, stderr)
	}
}
