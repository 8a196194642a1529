package deploy

import (
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// workflow is the part of a GitHub Actions workflow these tests read.
// actionlint (scripts/lint.sh) checks the rest: syntax, expressions,
// shell scripts, the actions' inputs.
type workflow struct {
	On   map[string]any `yaml:"on"`
	Jobs map[string]struct {
		Needs     any    `yaml:"needs"`
		Container string `yaml:"container"`
		Steps     []struct {
			Name string            `yaml:"name"`
			Uses string            `yaml:"uses"`
			Run  string            `yaml:"run"`
			With map[string]string `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

func readWorkflow(t *testing.T, name string) workflow {
	t.Helper()
	var w workflow
	if err := yaml.Unmarshal(readFile(t, ".github/workflows/"+name), &w); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return w
}

// runs is every run script of a job, joined.
func (w workflow) runs(job string) string {
	var b strings.Builder
	for _, s := range w.Jobs[job].Steps {
		b.WriteString(s.Run + "\n")
	}
	return b.String()
}

// with is the inputs of the step of job that uses the action.
func (w workflow) with(t *testing.T, job, action string) map[string]string {
	t.Helper()
	for _, s := range w.Jobs[job].Steps {
		if strings.HasPrefix(s.Uses, action+"@") {
			return s.With
		}
	}
	t.Fatalf("job %s uses no %s", job, action)
	return nil
}

var usesLine = regexp.MustCompile(`(?m)^\s*(?:-\s+)?uses:\s*(\S+?)@(\S+)(.*)$`)

// TestWorkflowActionsPinned checks that every action is pinned by commit
// with its version in a comment (what Dependabot updates together), and
// one action to one commit across the workflows: a tag can be moved, a
// commit cannot.
func TestWorkflowActionsPinned(t *testing.T) {
	pins := map[string]string{}
	for _, name := range []string{"ci.yml", "release.yml"} {
		matches := usesLine.FindAllStringSubmatch(string(readFile(t, ".github/workflows/"+name)), -1)
		if len(matches) == 0 {
			t.Errorf("%s uses no action", name)
		}
		for _, m := range matches {
			action, ref, comment := m[1], m[2], strings.TrimSpace(m[3])
			if !regexp.MustCompile(`^[0-9a-f]{40}$`).MatchString(ref) {
				t.Errorf("%s: %s@%s is not pinned by a full commit", name, action, ref)
			}
			if !regexp.MustCompile(`^# v\d+\.\d+\.\d+$`).MatchString(comment) {
				t.Errorf("%s: %s@%s has comment %q, want the version (# vX.Y.Z)", name, action, ref, comment)
			}
			if p, ok := pins[action]; ok && p != ref+" "+comment {
				t.Errorf("%s: %s pinned to %s %s, elsewhere to %s", name, action, ref, comment, p)
			}
			pins[action] = ref + " " + comment
		}
	}
}

// TestCIWorkflow checks that pushes and pull requests run .ci/run (the
// README's test command) on the Go toolchain go.mod and the Dockerfile pin.
func TestCIWorkflow(t *testing.T) {
	w := readWorkflow(t, "ci.yml")
	for _, event := range []string{"push", "pull_request"} {
		if _, ok := w.On[event]; !ok {
			t.Errorf("ci.yml does not run on %s", event)
		}
	}
	checkTestJob(t, w, "test")
}

func checkTestJob(t *testing.T, w workflow, job string) {
	t.Helper()
	goVersion := regexp.MustCompile(`(?m)^go (\S+)$`).FindStringSubmatch(string(readFile(t, "go.mod")))[1]
	builder := parseDockerfileStage(t, "builder").image
	if c := w.Jobs[job].Container; c != "golang:"+goVersion+"-bookworm" || c != builder {
		t.Errorf("job %s runs in %q, want go.mod's Go on Debian as the Dockerfile's builder (%s)", job, c, builder)
	}
	if !regexp.MustCompile(`(?m)^\.ci/run$`).MatchString(w.runs(job)) {
		t.Errorf("job %s does not run .ci/run", job)
	}
}

// TestReleaseWorkflow checks the release's parts: on a v* tag, the tests,
// then make release, the multi-platform image with its labels, build
// arguments, SBOM and provenance, the chart pushed with the Helm of the
// chart's tests, and the release with the CHANGELOG's notes.
func TestReleaseWorkflow(t *testing.T) {
	w := readWorkflow(t, "release.yml")
	push, _ := w.On["push"].(map[string]any)
	if tags, _ := push["tags"].([]any); !slices.Equal(tags, []any{"v*"}) || len(w.On) != 1 {
		t.Errorf("release.yml runs on %v, want pushed tags v* only", w.On)
	}
	checkTestJob(t, w, "test")
	if w.Jobs["release"].Needs != "test" {
		t.Errorf("the release job needs %v, want the tests", w.Jobs["release"].Needs)
	}
	runs := w.runs("release")
	for _, want := range []string{"make release", `scripts/release-notes.sh "$GITHUB_REF_NAME"`, `--notes-file "$RUNNER_TEMP/notes.md"`, "dist/sha256sums.txt", "helm\" push"} {
		if !strings.Contains(runs, want) {
			t.Errorf("the release job does not run %q", want)
		}
	}

	build := w.with(t, "release", "docker/build-push-action")
	if build["platforms"] != "linux/amd64,linux/arm64" || build["push"] != "true" {
		t.Errorf("image built for %q, push %q; want linux/amd64,linux/arm64 pushed", build["platforms"], build["push"])
	}
	if build["sbom"] != "true" || !strings.HasPrefix(build["provenance"], "mode=max") {
		t.Errorf("image sbom %q, provenance %q; want an SBOM and full provenance", build["sbom"], build["provenance"])
	}
	// Every build argument is one the Dockerfile's stages declare, and the
	// version, revision and date reach the exporter's labels.
	exporter := parseDockerfileStage(t, "exporter")
	declared := append(parseDockerfileStage(t, "builder").instructions("ARG"), exporter.instructions("ARG")...)
	for _, line := range strings.Split(strings.TrimSpace(build["build-args"]), "\n") {
		arg, _, _ := strings.Cut(line, "=")
		if !slices.ContainsFunc(declared, func(d string) bool { return d == arg || strings.HasPrefix(d, arg+"=") }) {
			t.Errorf("build argument %s is not declared in the Dockerfile", arg)
		}
	}
	labels := strings.Join(exporter.instructions("LABEL"), " ")
	meta := w.with(t, "release", "docker/metadata-action")
	for label, arg := range map[string]string{"version": "VERSION", "revision": "REVISION", "created": "DATE"} {
		if !strings.Contains(build["build-args"], arg+"=") {
			t.Errorf("no build argument %s", arg)
		}
		if !strings.Contains(labels, "org.opencontainers.image."+label+`="${`+arg+`}"`) {
			t.Errorf("the exporter's image does not label %s from ${%s}", label, arg)
		}
		if !strings.Contains(meta["labels"], "org.opencontainers.image."+label+"=") {
			t.Errorf("the pushed image's labels do not set %s", label)
		}
	}
	// The image the chart and the manifests pin is the one pushed, tagged
	// vX.Y.Z.
	values := string(readFile(t, "deploy/helm/clouddb-exporter/values.yaml"))
	if !strings.Contains(values, "registry: ghcr.io\n  repository: clouddb/clouddb_exporter\n") || !strings.Contains(string(readFile(t, ".github/workflows/release.yml")), "IMAGE: ghcr.io/clouddb/clouddb_exporter\n") {
		t.Error("release.yml does not push the image the chart's values name")
	}
	if !strings.Contains(meta["tags"], "type=semver,pattern=v{{version}}") {
		t.Errorf("image tags %q lack vX.Y.Z, the tag the chart pins", meta["tags"])
	}

	helmLib := regexp.MustCompile(`(?m)^\s+helm\.sh/helm/v3 (\S+)$`).FindStringSubmatch(string(readFile(t, "deploy/helm/go.mod")))
	if helmLib == nil || !strings.Contains(runs, "go install helm.sh/helm/v3/cmd/helm@"+helmLib[1]+"\n") {
		t.Errorf("the chart is not packaged with the Helm of deploy/helm/go.mod (%v)", helmLib)
	}
}

// TestDependabot checks that Dependabot updates every Go module of
// scripts/modules.sh, the Dockerfile and the workflows' actions.
func TestDependabot(t *testing.T) {
	var config struct {
		Updates []struct {
			Ecosystem   string   `yaml:"package-ecosystem"`
			Directory   string   `yaml:"directory"`
			Directories []string `yaml:"directories"`
		} `yaml:"updates"`
	}
	if err := yaml.Unmarshal(readFile(t, ".github/dependabot.yml"), &config); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, u := range config.Updates {
		dirs := u.Directories
		if u.Directory != "" {
			dirs = append(dirs, u.Directory)
		}
		got[u.Ecosystem] = append(got[u.Ecosystem], dirs...)
	}
	cmd := exec.Command("scripts/modules.sh")
	cmd.Dir = testbin.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("scripts/modules.sh: %v", err)
	}
	var modules []string
	for _, m := range strings.Fields(string(out)) {
		modules = append(modules, "/"+strings.TrimPrefix(m, "."))
	}
	slices.Sort(modules)
	slices.Sort(got["gomod"])
	if !slices.Equal(got["gomod"], modules) {
		t.Errorf("Dependabot updates the Go modules %v, want those of scripts/modules.sh %v", got["gomod"], modules)
	}
	for _, eco := range []string{"docker", "github-actions"} {
		if !slices.Equal(got[eco], []string{"/"}) {
			t.Errorf("Dependabot %s directories %v, want /", eco, got[eco])
		}
	}
}
