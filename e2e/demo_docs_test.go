package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestDemoCommandsOfTheDocs runs the demo's "break something" commands of
// docs/operations.md, as written but for the ports, against
// `--simulate`: the service id must come from somewhere the embedded
// simulator's generated credentials do not hide.
func TestDemoCommandsOfTheDocs(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"bash", "curl", "sed"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	doc, err := os.ReadFile(filepath.Join(testbin.RepoRoot(), "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	var script []string
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "id=$(") || strings.Contains(line, "/_sim/projects/demo-project/services/$id/status") {
			script = append(script, line)
		}
	}
	if len(script) != 2 {
		t.Fatalf("docs/operations.md: want the id line and the status line of the demo, found %q", script)
	}
	simAddr := testbin.FreeAddr(t)
	_, url := testbin.StartExporter(t, nil, "--simulate", "--simulate.listen-address="+simAddr, "--collect.interval=1s", "--collect.transition-interval=1s")
	testbin.WaitFor(t, time.Minute, "the demo fleet", func() bool {
		_, fams := testbin.Scrape(t, url)
		return len(testbin.LabelValues(fams, "clouddb_service_info", "service_id")) > 0
	})
	run := strings.Join(script, "\n")
	run = strings.ReplaceAll(run, "localhost:9866", strings.TrimPrefix(url, "http://"))
	run = strings.ReplaceAll(run, "localhost:8090", simAddr)
	run = strings.Replace(run, "curl -X POST", "curl -sf -X POST", 1)
	out, err := exec.Command("bash", "-euo", "pipefail", "-c", run+"\necho \"$id\"").CombinedOutput()
	id := strings.TrimSpace(string(out))
	if err != nil || id == "" {
		t.Fatalf("the docs' demo commands failed (%v):\n%s\n%s", err, run, out)
	}
	testbin.WaitFor(t, time.Minute, "the service to turn UNSTABLE", testbin.MetricEquals(url+"/metrics",
		"clouddb_service_status", 1, "service_id", id, "status", "UNSTABLE"))
}
