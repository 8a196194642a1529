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
	"slices"
	"strings"
	"testing"

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
