// Package alerts holds the Prometheus alerting rules shipped with the
// exporter (clouddb.rules.yml), their runbook and their promtool unit tests.
// The tests here check the house style of every rule and run promtool.
package alerts

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

const (
	rulesFile   = "clouddb.rules.yml"
	runbookFile = "runbook.md"
	// alertsDoc holds the table of the alerts users read.
	alertsDoc     = "../docs/alerts.md"
	runbookPrefix = "https://github.com/clouddb/clouddb_exporter/blob/main/alerts/runbook.md#"
)

type rule struct {
	Alert       string            `yaml:"alert"`
	Record      string            `yaml:"record"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	KeepFiring  string            `yaml:"keep_firing_for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []rule `yaml:"rules"`
	} `yaml:"groups"`
}

// chartRulesFile is the Helm chart's copy of the rules: the mixin builds it
// with dashboard_url annotations on a placeholder Grafana URL, which the
// chart replaces with its grafanaUrl value.
const chartRulesFile = "../deploy/helm/clouddb-exporter/files/clouddb.rules.yml"

func loadRules(t *testing.T) []rule {
	t.Helper()
	return loadRulesFile(t, rulesFile)
}

func loadRulesFile(t *testing.T, rulesFile string) []rule {
	t.Helper()
	b, err := os.ReadFile(rulesFile)
	if err != nil {
		t.Fatal(err)
	}
	var f ruleFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	var rules []rule
	for _, g := range f.Groups {
		rules = append(rules, g.Rules...)
	}
	if len(rules) == 0 {
		t.Fatal("no rules found")
	}
	return rules
}

// The alerts docs/alerts.md promises, by name: renaming one must be
// deliberate (runbook anchors, routes and silences use the names).
var required = []string{
	"CloudDBServiceUnstable", "CloudDBServiceStuckInTransition", "CloudDBProdServiceNotReady",
	"CloudDBReplicaSetError", "CloudDBReplicaSetStuck", "CloudDBVPCPeeringError", "CloudDBVPCPeeringPending",
	"CloudDBExporterDown", "CloudDBExporterAbsent", "CloudDBCollectorFailing", "CloudDBDataStale", "CloudDBAPIErrors",
	"CloudDBAPIRateLimited", "CloudDBAPICredentialsOld",
	"CloudDBServiceStorageGrowingFast", "CloudDBProdServiceWithoutHA", "CloudDBConfigReloadFailed",
	"CloudDBServiceCPUSaturated", "CloudDBServiceMemorySaturated", "CloudDBServiceConnectionsHigh",
	"CloudDBServiceJobFailing", "CloudDBServiceFatalLogs", "CloudDBServiceErrorLogsHigh",
	"CloudDBServiceUsageMissing", "CloudDBProjectDiscoveryFailing", "CloudDBLogReadsTruncated",
	"CloudDBDataPlaneStarved", "CloudDBProjectDown", "CloudDBServiceStorageDoublingSoon", "CloudDBStateFileUnhealthy",
}

func TestRulesStyle(t *testing.T) {
	rules := loadRules(t)
	runbook, err := os.ReadFile(runbookFile)
	if err != nil {
		t.Fatal(err)
	}
	headings := map[string]bool{}
	for _, line := range strings.Split(string(runbook), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			headings[githubAnchor(h)] = true
		}
	}
	name := regexp.MustCompile(`^CloudDB([A-Z][a-z0-9]*|[A-Z]+(?:[A-Z][a-z]|$))+$`)
	seen := map[string]bool{}
	recordName := regexp.MustCompile(`^[a-z_]+:clouddb_[a-z_]+:[a-z0-9_]+$`)
	for _, r := range rules {
		if r.Alert == "" {
			// The mixin's recording rules, for the dashboards.
			if !recordName.MatchString(r.Record) {
				t.Errorf("recording rule %q: want level:clouddb_metric:operations", r.Record)
			}
			continue
		}
		if seen[r.Alert] {
			t.Errorf("%s: defined twice", r.Alert)
		}
		seen[r.Alert] = true
		if !name.MatchString(r.Alert) {
			t.Errorf("%s: not a CamelCase name with the CloudDB prefix", r.Alert)
		}
		if d, err := time.ParseDuration(r.For); err != nil || d <= 0 {
			t.Errorf("%s: for %q, want a positive duration", r.Alert, r.For)
		}
		if s := r.Labels["severity"]; !slices.Contains([]string{"critical", "warning", "info"}, s) {
			t.Errorf("%s: severity %q, want critical, warning or info", r.Alert, s)
		}
		if s := r.Annotations["summary"]; s == "" || strings.Contains(s, "{{") || !strings.HasSuffix(s, ".") {
			t.Errorf("%s: summary %q, want static text ending in a period", r.Alert, s)
		}
		// An alert on an absence has no labels to template nor an
		// instance to open a dashboard on.
		absence := strings.HasPrefix(r.Expr, "absent(")
		if d := r.Annotations["description"]; !absence && !strings.Contains(d, "{{") {
			t.Errorf("%s: description %q is not templated", r.Alert, d)
		}
		// The plain file has no Grafana to link to.
		if d, ok := r.Annotations["dashboard_url"]; ok {
			t.Errorf("%s: dashboard_url %q in %s, which has no Grafana URL", r.Alert, d, rulesFile)
		}
		url := r.Annotations["runbook_url"]
		anchor, ok := strings.CutPrefix(url, runbookPrefix)
		if !ok || anchor != strings.ToLower(r.Alert) {
			t.Errorf("%s: runbook_url %q, want %s%s", r.Alert, url, runbookPrefix, strings.ToLower(r.Alert))
		} else if !headings[anchor] {
			t.Errorf("%s: %s has no section ## %s", r.Alert, runbookFile, r.Alert)
		}
	}
	for _, want := range required {
		if !seen[want] {
			t.Errorf("alert %s is missing", want)
		}
	}
	for h := range headings {
		if !slices.ContainsFunc(rules, func(r rule) bool { return r.Alert != "" && strings.ToLower(r.Alert) == h }) {
			t.Errorf("%s: section #%s is not the runbook of any alert", runbookFile, h)
		}
	}
}

// githubAnchor is the anchor GitHub gives a heading (enough for ours:
// letters and digits, lower-cased, spaces to dashes).
func githubAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

type unitTests struct {
	RuleFiles []string `yaml:"rule_files"`
	Tests     []struct {
		Name          string `yaml:"name"`
		AlertRuleTest []struct {
			EvalTime  string `yaml:"eval_time"`
			Alertname string `yaml:"alertname"`
			ExpAlerts []any  `yaml:"exp_alerts"`
		} `yaml:"alert_rule_test"`
	} `yaml:"tests"`
}

// TestDashboardLinks checks the dashboard_url annotations of the chart's
// copy: every alert but those on an absence opens a clouddb dashboard on
// the alert's instance.
func TestDashboardLinks(t *testing.T) {
	for _, r := range loadRulesFile(t, chartRulesFile) {
		if r.Alert == "" {
			continue
		}
		d, ok := r.Annotations["dashboard_url"]
		if absence := strings.HasPrefix(r.Expr, "absent("); absence && ok {
			t.Errorf("%s: dashboard_url %q on an alert with no instance", r.Alert, d)
		} else if !absence && (!strings.HasPrefix(d, "GRAFANA_URL/d/clouddb-") || !strings.Contains(d, "var-instance={{ $labels.instance | urlquery }}")) {
			t.Errorf("%s: dashboard_url %q, want a link to a clouddb dashboard on the alert's instance", r.Alert, d)
		}
	}
}

// TestEveryAlertUnitTested checks that the promtool tests cover each alert
// both ways: an evaluation where it must not fire and one where it fires.
// Before/after the for: itself is checked by reading the tests (each
// alert's silent evaluation is the one just before its for).
func TestEveryAlertUnitTested(t *testing.T) {
	files, err := filepath.Glob("tests/*.yml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no promtool tests in tests/: %v", err)
	}
	fires, silent := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var u unitTests
		if err := yaml.Unmarshal(b, &u); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !slices.Equal(u.RuleFiles, []string{"../" + rulesFile}) {
			t.Errorf("%s: rule_files %v, want the shipped file only", f, u.RuleFiles)
		}
		for _, tc := range u.Tests {
			for _, a := range tc.AlertRuleTest {
				if len(a.ExpAlerts) > 0 {
					fires[a.Alertname] = true
				} else {
					silent[a.Alertname] = true
				}
			}
		}
	}
	for _, r := range loadRules(t) {
		if r.Alert == "" {
			continue
		}
		if !fires[r.Alert] || !silent[r.Alert] {
			t.Errorf("%s: promtool tests lack a case where it fires (%v) or one where it does not (%v)", r.Alert, fires[r.Alert], silent[r.Alert])
		}
	}
}

// TestPromtool runs promtool check rules and promtool test rules. The test
// command (scripts/test.sh) installs promtool; CI must not skip this.
func TestPromtool(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool is missing: scripts/test.sh installs Debian's prometheus package")
		}
		t.Skip("promtool not found: run scripts/test.sh, which installs it")
	}
	files, _ := filepath.Glob("tests/*.yml")
	for _, args := range [][]string{
		{"check", "rules", rulesFile},
		append([]string{"test", "rules"}, files...),
	} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestKeepFiring checks that every alert on the exporter's own series keeps
// firing through a restart and a short absence: for longer than
// CloudDBExporterDown takes to page plus a restart, so that nothing resolves
// before that page (see docs on outages and restarts). The alerts on up
// itself (CloudDBExporterDown, CloudDBExporterAbsent) have none: up does not
// go stale with the exporter.
func TestKeepFiring(t *testing.T) {
	const restart = time.Minute
	rules := loadRules(t)
	var down time.Duration
	for _, r := range rules {
		if r.Alert == "CloudDBExporterDown" {
			d, err := time.ParseDuration(r.For)
			if err != nil {
				t.Fatal(err)
			}
			down = d
		}
	}
	if down == 0 {
		t.Fatal("no CloudDBExporterDown")
	}
	for _, r := range rules {
		if r.Alert == "" {
			continue
		}
		if strings.Contains(r.Expr, "up{") {
			if r.KeepFiring != "" {
				t.Errorf("%s: keep_firing_for %s, want none: it is about the scrape, which never goes stale", r.Alert, r.KeepFiring)
			}
			continue
		}
		if d, err := time.ParseDuration(r.KeepFiring); err != nil || d <= down+restart {
			t.Errorf("%s: keep_firing_for %q, want more than CloudDBExporterDown's for (%v) plus a restart (%v)", r.Alert, r.KeepFiring, down, restart)
		}
	}
}

// TestUsageMissingFiresBeforeSaturationResolves checks the promise of
// CloudDBServiceUsageMissing: a node whose usage series end fires it before
// its saturation alerts, kept firing for keep_firing_for after their series
// went, resolve.
func TestUsageMissingFiresBeforeSaturationResolves(t *testing.T) {
	rules := map[string]rule{}
	for _, r := range loadRules(t) {
		rules[r.Alert] = r
	}
	missing, ok := rules["CloudDBServiceUsageMissing"]
	if !ok {
		t.Fatal("no CloudDBServiceUsageMissing")
	}
	pending, err := time.ParseDuration(missing.For)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"CloudDBServiceCPUSaturated", "CloudDBServiceMemorySaturated", "CloudDBServiceConnectionsHigh"} {
		keep, err := time.ParseDuration(rules[name].KeepFiring)
		if err != nil || keep <= pending {
			t.Errorf("%s: keep_firing_for %q, want more than CloudDBServiceUsageMissing's for (%v)", name, rules[name].KeepFiring, pending)
		}
	}
}

// TestAlertsDocumented checks the alert table users read against the rules:
// every alert is in it once, with its severity and for, and it lists no
// alert the rules lack.
func TestAlertsDocumented(t *testing.T) {
	doc, err := os.ReadFile(alertsDoc)
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `(CloudDB[A-Za-z]+)` \\| ([a-z]+) \\| ([0-9smhd]+) \\| (.+) \\|$")
	type entry struct{ severity, pending string }
	table := map[string]entry{}
	for _, line := range strings.Split(string(doc), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if _, dup := table[m[1]]; dup {
			t.Errorf("%s: %s is in the table twice", alertsDoc, m[1])
		}
		table[m[1]] = entry{m[2], m[3]}
	}
	if len(table) == 0 {
		t.Fatalf("%s has no alert table (| `CloudDB...` | severity | for | when |)", alertsDoc)
	}
	rules := map[string]bool{}
	for _, r := range loadRules(t) {
		if r.Alert == "" {
			continue
		}
		rules[r.Alert] = true
		e, ok := table[r.Alert]
		switch {
		case !ok:
			t.Errorf("%s is not in the alert table of %s", r.Alert, alertsDoc)
		case e.severity != r.Labels["severity"] || e.pending != r.For:
			t.Errorf("%s: %s says %s for %s, the rule %s for %s", r.Alert, alertsDoc, e.severity, e.pending, r.Labels["severity"], r.For)
		}
	}
	for name := range table {
		if !rules[name] {
			t.Errorf("%s lists %s, which is not a rule", alertsDoc, name)
		}
	}
}
