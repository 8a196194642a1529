package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

type stage struct {
	image, name, platform string
	lines                 []string // instructions, continuation lines joined
}

// parseDockerfile returns the stages of the Dockerfile with ARG defaults
// declared before the first FROM substituted into the images.
func parseDockerfile(t *testing.T) []stage {
	t.Helper()
	text := strings.ReplaceAll(string(readFile(t, "Dockerfile")), "\\\n", " ")
	args := map[string]string{}
	var stages []stage
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		instr, rest, _ := strings.Cut(line, " ")
		switch strings.ToUpper(instr) {
		case "ARG":
			if len(stages) == 0 {
				k, v, _ := strings.Cut(rest, "=")
				args[k] = v
			}
		case "FROM":
			f := strings.Fields(rest)
			var platform string
			for len(f) > 0 && strings.HasPrefix(f[0], "--") {
				if v, ok := strings.CutPrefix(f[0], "--platform="); ok {
					platform = v
				}
				f = f[1:]
			}
			image := os.Expand(f[0], func(k string) string { return args[k] })
			s := stage{image: image, platform: platform}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				s.name = f[2]
			}
			stages = append(stages, s)
			continue
		}
		if len(stages) > 0 {
			stages[len(stages)-1].lines = append(stages[len(stages)-1].lines, line)
		}
	}
	return stages
}

func (s stage) instructions(name string) []string {
	var out []string
	for _, l := range s.lines {
		instr, rest, _ := strings.Cut(l, " ")
		if strings.EqualFold(instr, name) {
			out = append(out, strings.TrimSpace(rest))
		}
	}
	return out
}

func TestDockerfile(t *testing.T) {
	stages := parseDockerfile(t)
	if len(stages) < 3 {
		t.Fatalf("%d stages, want builder, cloudsim and exporter", len(stages))
	}
	goVersion := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(string(readFile(t, "go.mod")))[1]
	byName := map[string]stage{}
	for _, s := range stages {
		byName[s.name] = s
		// Pinned: a digest, or a tag naming an exact version. Distroless
		// publishes no version tags, only digests of :nonroot, which
		// release engineering pins (RUNTIME_IMAGE build argument).
		if strings.Contains(s.image, "gcr.io/distroless/") {
			continue
		}
		if !strings.Contains(s.image, "@sha256:") && !regexp.MustCompile(`:[^:/]*\d`).MatchString(s.image) {
			t.Errorf("FROM %s is not pinned", s.image)
		}
	}
	builder := byName["builder"]
	if !strings.HasPrefix(builder.image, "golang:"+goVersion+"-") && !strings.HasPrefix(builder.image, "golang:"+goVersion+"@") {
		t.Errorf("builder image %s does not pin go.mod's Go %s", builder.image, goVersion)
	}
	// Multi-platform images (buildx --platform linux/amd64,linux/arm64):
	// the builder runs natively and cross-compiles for the target.
	if builder.platform != "${BUILDPLATFORM}" {
		t.Errorf("builder FROM --platform=%q, want ${BUILDPLATFORM}", builder.platform)
	}
	for _, arg := range []string{"TARGETOS", "TARGETARCH"} {
		if !slices.Contains(builder.instructions("ARG"), arg) {
			t.Errorf("builder does not declare ARG %s", arg)
		}
	}
	run := strings.Join(builder.instructions("RUN"), "\n")
	for _, want := range []string{"CGO_ENABLED=0", `GOOS="${TARGETOS}"`, `GOARCH="${TARGETARCH}"`, "-trimpath", "-X github.com/prometheus/common/version.Version=", "-X github.com/prometheus/common/version.Revision=", "./cmd/cloudsim"} {
		if !strings.Contains(run, want) {
			t.Errorf("builder RUN lacks %q", want)
		}
	}
	if last := stages[len(stages)-1]; last.name != "exporter" {
		t.Errorf("the default (last) stage is %q, want exporter", last.name)
	}
	for name, port := range map[string]string{"exporter": "9866", "cloudsim": "8090"} {
		s, ok := byName[name]
		if !ok {
			t.Errorf("no stage %s", name)
			continue
		}
		if !strings.Contains(s.image, "distroless/static") || !strings.Contains(s.image, "nonroot") {
			t.Errorf("%s runs on %s, want a distroless static nonroot image", name, s.image)
		}
		users := s.instructions("USER")
		if len(users) == 0 || strings.HasPrefix(users[len(users)-1], "0") || strings.HasPrefix(users[len(users)-1], "root") {
			t.Errorf("%s: USER %v, want a non-root user", name, users)
		}
		if e := s.instructions("EXPOSE"); len(e) != 1 || e[0] != port {
			t.Errorf("%s: EXPOSE %v, want %s", name, e, port)
		}
		if e := s.instructions("ENTRYPOINT"); len(e) != 1 || !strings.HasPrefix(e[0], "[") {
			t.Errorf("%s: ENTRYPOINT %v, want one in exec form", name, e)
		}
		// A stray line continuation (a LABEL ending in a backslash) would
		// swallow the COPY into the instruction before it.
		binary := map[string]string{"exporter": "clouddb_exporter", "cloudsim": "cloudsim"}[name]
		if c := s.instructions("COPY"); len(c) != 1 || c[0] != "--from=builder /out/"+binary+" /bin/"+binary {
			t.Errorf("%s: COPY %v, want the binary copied from the builder stage", name, c)
		}
		labels := strings.Join(s.instructions("LABEL"), " ")
		for _, l := range []string{"org.opencontainers.image.title", "org.opencontainers.image.source", "org.opencontainers.image.description"} {
			if !strings.Contains(labels, l+"=") {
				t.Errorf("%s: no label %s", name, l)
			}
		}
	}
	labels := strings.Join(byName["exporter"].instructions("LABEL"), " ")
	for _, l := range []string{"org.opencontainers.image.version=", "org.opencontainers.image.revision="} {
		if !strings.Contains(labels, l) {
			t.Errorf("exporter: no label %s", l)
		}
	}
	ignore := string(readFile(t, ".dockerignore"))
	for _, must := range []string{".git", "bin"} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(must) + `$`).MatchString(ignore) {
			t.Errorf(".dockerignore does not leave out %s", must)
		}
	}
	for _, kept := range []string{"go.mod", "go.sum", "VERSION", "*.go", "cmd"} {
		if regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(kept) + `$`).MatchString(ignore) {
			t.Errorf(".dockerignore leaves out %s, which the build needs", kept)
		}
	}
}

// TestDockerfileBuild runs the builder stage's build command itself (with
// /out replaced by a temporary directory, as the image's build arguments
// would set it) and checks that both binaries are static and carry the
// version: once as the classic builder runs it (no TARGETOS/TARGETARCH, a
// binary for this machine) and once as buildx does for linux/arm64 (or
// linux/amd64 on an arm64 machine).
func TestDockerfileBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds both binaries twice")
	}
	var build string
	for _, r := range parseDockerfileStage(t, "builder").instructions("RUN") {
		if strings.Contains(r, "go build") {
			build = r
		}
	}
	other := map[string]string{"arm64": "amd64"}[runtime.GOARCH]
	if other == "" {
		other = "arm64"
	}
	for _, target := range []string{"", other} {
		t.Run("TARGETARCH="+target, func(t *testing.T) {
			out := t.TempDir()
			cmd := exec.Command("sh", "-c", strings.ReplaceAll(build, "/out/", out+"/"))
			cmd.Dir = testbin.RepoRoot()
			cmd.Env = append(os.Environ(), "VERSION=9.8.7-dockertest", "REVISION=0123abcd", "BRANCH=dockertest", "DATE=2026-11-25T10:00:00Z", "TARGETARCH="+target)
			if target != "" {
				cmd.Env = append(cmd.Env, "TARGETOS=linux")
			}
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("the Dockerfile's build: %v\n%s", err, b)
			}
			for _, bin := range []string{"clouddb_exporter", "cloudsim"} {
				arch := target
				if arch == "" {
					arch = runtime.GOARCH
				}
				checkBinary(t, bin, "linux", arch, filepath.Join(out, bin))
			}
			if target != "" {
				return // not runnable here
			}
			code, version := testbin.Run(t, filepath.Join(out, "clouddb_exporter"), nil, "--version")
			if code != 0 || !strings.Contains(version, "version 9.8.7-dockertest") || !strings.Contains(version, "revision: 0123abcd") || !regexp.MustCompile(`build date: +2026-11-25T10:00:00Z`).MatchString(version) {
				t.Errorf("--version of the image's binary: %d %q", code, version)
			}
		})
	}
}

func parseDockerfileStage(t *testing.T, name string) stage {
	t.Helper()
	for _, s := range parseDockerfile(t) {
		if s.name == name {
			return s
		}
	}
	t.Fatalf("no stage %s", name)
	return stage{}
}
