package e2e

import (
	"encoding/json"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

const composeAlertmanagerConfig = "deploy/docker-compose/alertmanager/alertmanager.yml"

// TestAlertmanagerInhibitRules runs Debian's Alertmanager with the compose
// deployment's configuration, raises the alerts of a total outage and of an
// UNSTABLE PROD service and of a project whose key pair is refused with
// amtool, and checks what is inhibited: a warning never silences a page,
// and a project down pages once.
func TestAlertmanagerInhibitRules(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Alertmanager")
	}
	t.Parallel()
	amBin, err := exec.LookPath("prometheus-alertmanager")
	if err != nil {
		amBin, err = exec.LookPath("alertmanager")
	}
	amtool, toolErr := exec.LookPath("amtool")
	if err != nil || toolErr != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("alertmanager or amtool is missing: scripts/test.sh installs Debian's prometheus-alertmanager package")
		}
		t.Skip("alertmanager or amtool not found: run scripts/test.sh, which installs them")
	}
	config := filepath.Join(testbin.RepoRoot(), composeAlertmanagerConfig)
	if out, err := exec.Command(amtool, "check-config", config).CombinedOutput(); err != nil {
		t.Fatalf("amtool check-config: %v\n%s", err, out)
	}

	addr := testbin.FreeAddr(t)
	testbin.Start(t, amBin, nil, "--config.file="+config, "--storage.path="+t.TempDir(),
		"--web.listen-address="+addr, "--cluster.listen-address=")
	url := "http://" + addr
	testbin.WaitFor(t, 30*time.Second, "Alertmanager", func() bool {
		code, _ := testbin.Get(url + "/-/ready")
		return code == http.StatusOK
	})

	am := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(amtool, append([]string{"--alertmanager.url=" + url}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("amtool %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	exporter := []string{"job=clouddb", "instance=exp:9866", "project_id=p1"}
	// A total outage: both exporter alerts for the services collector, and
	// the warning alone for a collector whose data is not stale yet.
	am(append([]string{"alert", "add", "alertname=CloudDBDataStale", "severity=critical", "collector=services"}, exporter...)...)
	am(append([]string{"alert", "add", "alertname=CloudDBCollectorFailing", "severity=warning", "collector=services"}, exporter...)...)
	am(append([]string{"alert", "add", "alertname=CloudDBCollectorFailing", "severity=warning", "collector=vpcs"}, exporter...)...)
	// Project p2's key pair refused: one page for the project, none for
	// its parts; p1's stale data is not p2's.
	down := []string{"job=clouddb", "instance=exp:9866", "project_id=p2"}
	am(append([]string{"alert", "add", "alertname=CloudDBProjectDown", "severity=critical"}, down...)...)
	am(append([]string{"alert", "add", "alertname=CloudDBDataStale", "severity=critical", "collector=auth"}, down...)...)
	am(append([]string{"alert", "add", "alertname=CloudDBCollectorFailing", "severity=warning", "collector=usage"}, down...)...)
	am(append([]string{"alert", "add", "alertname=CloudDBAPIErrors", "severity=warning"}, down...)...)
	// An UNSTABLE PROD service is also not READY.
	service := []string{"job=clouddb", "instance=exp:9866", "project_id=p1", "service_id=s1", "severity=critical"}
	am(append([]string{"alert", "add", "alertname=CloudDBServiceUnstable"}, service...)...)
	am(append([]string{"alert", "add", "alertname=CloudDBProdServiceNotReady"}, service...)...)

	type alert struct {
		Labels map[string]string `json:"labels"`
		Status struct {
			State       string   `json:"state"`
			InhibitedBy []string `json:"inhibitedBy"`
		} `json:"status"`
	}
	suppressed := func() map[string]bool {
		var alerts []alert
		if err := json.Unmarshal([]byte(am("alert", "query", "--active", "--inhibited", "--output=json")), &alerts); err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		for _, a := range alerts {
			out[a.Labels["project_id"]+"/"+a.Labels["alertname"]+"/"+a.Labels["collector"]] = len(a.Status.InhibitedBy) > 0
		}
		return out
	}
	want := map[string]bool{
		"p1/CloudDBDataStale/services":        false, // the page goes out
		"p1/CloudDBCollectorFailing/services": true,  // held back by the page
		"p1/CloudDBCollectorFailing/vpcs":     false, // no page for it: the warning goes out
		"p1/CloudDBServiceUnstable/":          false,
		"p1/CloudDBProdServiceNotReady/":      true,
		"p2/CloudDBProjectDown/":              false, // one cause, one page
		"p2/CloudDBDataStale/auth":            true,
		"p2/CloudDBCollectorFailing/usage":    true,
		"p2/CloudDBAPIErrors/":                true,
	}
	var got map[string]bool
	testbin.WaitFor(t, 30*time.Second, "the inhibitions to settle", func() bool {
		got = suppressed()
		return len(got) == len(want) && got["p1/CloudDBCollectorFailing/services"] && got["p1/CloudDBProdServiceNotReady/"] &&
			got["p2/CloudDBDataStale/auth"] && got["p2/CloudDBCollectorFailing/usage"] && got["p2/CloudDBAPIErrors/"]
	})
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if got[k] != want[k] {
			t.Errorf("%s inhibited: %v, want %v (all: %v)", strings.TrimSuffix(k, "/"), got[k], want[k], got)
		}
	}
}
