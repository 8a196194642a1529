package helm

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

const ruleValues = minimalValues + "prometheusRule:\n  enabled: true\n"

// ruleGroups renders the PrometheusRule and returns its groups.
func ruleGroups(t *testing.T, values string) []any {
	t.Helper()
	objs := mustRender(t, values)
	groups, ok := get(objs["PrometheusRule/demo-clouddb-exporter"], "spec", "groups").([]any)
	if !ok || len(groups) == 0 {
		t.Fatalf("no PrometheusRule groups in %v", kinds(objs))
	}
	return groups
}

// rulesByName indexes the rules by alert or record name.
func rulesByName(groups []any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, g := range groups {
		for _, r := range get(g, "rules").([]any) {
			rule := r.(map[string]any)
			name, _ := rule["alert"].(string)
			if name == "" {
				name, _ = rule["record"].(string)
			}
			out[name] = rule
		}
	}
	return out
}

func repoRules(t *testing.T) map[string]map[string]any {
	t.Helper()
	var rules struct {
		Groups []any `json:"groups"`
	}
	if err := yaml.Unmarshal(readRepo(t, "alerts/clouddb.rules.yml"), &rules); err != nil {
		t.Fatal(err)
	}
	return rulesByName(rules.Groups)
}

// TestPrometheusRuleDefaults: with the default values, the PrometheusRule
// holds the rule file's groups unchanged: no Grafana, so no dashboard_url.
func TestPrometheusRuleDefaults(t *testing.T) {
	var rules map[string]any
	if err := yaml.Unmarshal(readRepo(t, "alerts/clouddb.rules.yml"), &rules); err != nil {
		t.Fatal(err)
	}
	if !equalJSON(ruleGroups(t, ruleValues), rules["groups"]) {
		t.Error("the PrometheusRule's groups differ from alerts/clouddb.rules.yml")
	}
}

// TestPrometheusRuleSettings: the Grafana URL of the dashboard links, the
// exporter's job selector, disabled alerts and extra rules are values, not
// a jsonnet rebuild.
func TestPrometheusRuleSettings(t *testing.T) {
	groups := ruleGroups(t, ruleValues+`  grafanaUrl: https://grafana.example.org/
  exporterSelector: job='clouddb', namespace="monitoring"
  disabled: {CloudDBServiceStorageGrowingFast: true, CloudDBVPCPeeringPending: false}
  additionalRules:
    - alert: CloudDBTooManyServices
      expr: count(clouddb_service_info) > 1000
      for: 1h
      labels: {severity: info}
`)
	got, want := rulesByName(groups), repoRules(t)
	if _, ok := got["CloudDBServiceStorageGrowingFast"]; ok {
		t.Error("CloudDBServiceStorageGrowingFast is disabled but rendered")
	}
	if _, ok := got["CloudDBVPCPeeringPending"]; !ok {
		t.Error("CloudDBVPCPeeringPending (disabled: false) is missing")
	}
	if len(got) != len(want) {
		t.Errorf("%d rules, want the file's %d less the disabled one plus the extra one", len(got), len(want))
	}
	links := 0
	for name, r := range got {
		annotations, _ := get(r, "annotations").(map[string]any)
		for key, v := range annotations {
			s := v.(string)
			if strings.Contains(s, "localhost:3000") {
				t.Errorf("%s %s still points at the demo's Grafana: %s", name, key, s)
			}
			if key == "dashboard_url" {
				links++
				if !strings.HasPrefix(s, "https://grafana.example.org/d/") {
					t.Errorf("%s dashboard_url %s, want the grafanaUrl", name, s)
				}
			}
		}
	}
	if links == 0 {
		t.Error("no dashboard_url annotation left")
	}
	for name, wantExpr := range map[string]string{
		"CloudDBExporterDown":   `up{job='clouddb', namespace="monitoring"} == 0`,
		"CloudDBExporterAbsent": `absent(up{job='clouddb', namespace="monitoring"})`,
	} {
		if e := strings.TrimSpace(got[name]["expr"].(string)); e != wantExpr {
			t.Errorf("%s expr %q, want %q", name, e, wantExpr)
		}
	}
	if d := get(got["CloudDBExporterAbsent"], "annotations", "description").(string); !strings.Contains(d, `job='clouddb', namespace="monitoring"`) {
		t.Errorf("CloudDBExporterAbsent description names another selector: %s", d)
	}
	last := groups[len(groups)-1]
	if get(last, "name") != "clouddb-additional" || get(last, "rules", 0, "alert") != "CloudDBTooManyServices" || get(last, "rules", 0, "for") != "1h" {
		t.Errorf("last group %v, want clouddb-additional with the extra rule", last)
	}
	// Unchanged otherwise: a rule untouched by the values is the file's.
	if !equalJSON(got["CloudDBServiceUnstable"]["expr"], want["CloudDBServiceUnstable"]["expr"]) {
		t.Error("CloudDBServiceUnstable's expr changed")
	}
}

// TestPrometheusRuleNoGrafana: an empty grafanaUrl leaves the dashboard_url
// annotations out, as the mixin does.
func TestPrometheusRuleNoGrafana(t *testing.T) {
	for name, r := range rulesByName(ruleGroups(t, ruleValues+"  grafanaUrl: \"\"\n")) {
		if u := get(r, "annotations", "dashboard_url"); u != nil {
			t.Errorf("%s dashboard_url %v with no grafanaUrl", name, u)
		}
	}
}

// TestPrometheusRuleRefusesUnknownAlerts: a misspelt alert in disabled
// would silently keep it; the chart refuses it, naming the value.
func TestPrometheusRuleRefusesUnknownAlerts(t *testing.T) {
	for _, values := range []string{
		"  disabled: {CloudDBServiceStorageGrowing: true}\n",
		"  disabled: {'project:clouddb_service_storage_usage_bytes:sum': true}\n",
	} {
		_, err := renderSkipSchema(t, ruleValues+values)
		if err == nil || !strings.Contains(err.Error(), "prometheusRule.disabled") {
			t.Errorf("%s: %v, want an error naming prometheusRule.disabled", values, err)
		}
	}
	for values, want := range map[string]string{
		"  grafanaUrl: grafana.example.org\n": "at '/prometheusRule/grafanaUrl'",
		"  disabled: [CloudDBDataStale]\n":    "at '/prometheusRule/disabled': got array, want object",
		"  additionalRules: [{for: 5m}]\n":    "at '/prometheusRule/additionalRules/0'",
	} {
		if _, err := render(t, ruleValues+values); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want the schema's error %q", values, err, want)
		}
	}
}
