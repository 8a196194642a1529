package helm

import (
	"regexp"
	"strings"
	"testing"
)

// withMonitors adds the monitors and the rules to values, those that
// values do not set already (with enabled: true) as YAML keys.
func withMonitors(values string) string {
	for _, key := range []string{"serviceMonitor", "podMonitor", "prometheusRule"} {
		if !strings.Contains(values, key+": {enabled: true") {
			values += key + ": {enabled: true}\n"
		}
	}
	return minimalValues + values
}

// byKind returns the one rendered object of kind, whatever its name.
func byKind(t *testing.T, objs map[string]object, kind string) object {
	t.Helper()
	var found object
	for key, o := range objs {
		if strings.HasPrefix(key, kind+"/") {
			if found != nil {
				t.Fatalf("two %s", kind)
			}
			found = o
		}
	}
	if found == nil {
		t.Fatalf("no %s in %v", kind, kinds(objs))
	}
	return found
}

// scrapeJob is the job label Prometheus gives the monitor's targets, as
// the Prometheus Operator configures it: the value of the jobLabel label
// when set, else the Service's name (a ServiceMonitor) or
// namespace/name (a PodMonitor), then the endpoint's relabelings in order.
// The chart selects the Service and the pods by its selector labels, which
// stand for their labels here.
func scrapeJob(t *testing.T, monitor object) string {
	t.Helper()
	kind := monitor.kind()
	field := map[string]string{"ServiceMonitor": "endpoints", "PodMonitor": "podMetricsEndpoints"}[kind]
	job := monitor.name() // the chart's Service has the monitor's name
	if kind == "PodMonitor" {
		job = namespace + "/" + monitor.name()
	}
	if l, ok := get(monitor, "spec", "jobLabel").(string); ok && l != "" {
		v, _ := get(monitor, "spec", "selector", "matchLabels", l).(string)
		job = v
	}
	relabelings, _ := get(monitor, "spec", field, 0, "relabelings").([]any)
	for _, r := range relabelings {
		if get(r, "targetLabel") != "job" {
			continue
		}
		if a := get(r, "action"); (a != nil && a != "replace") || get(r, "sourceLabels") != nil {
			t.Fatalf("%s: a relabeling of the job this test cannot follow: %v", kind, r)
		}
		job, _ = get(r, "replacement").(string)
	}
	return job
}

// selectedJob is the job that the rendered CloudDBExporterDown and
// CloudDBExporterAbsent select, which must be one exact job.
func selectedJob(t *testing.T, objs map[string]object) string {
	t.Helper()
	rules := rulesByName(get(byKind(t, objs, "PrometheusRule"), "spec", "groups").([]any))
	var job string
	for _, alert := range []string{"CloudDBExporterDown", "CloudDBExporterAbsent"} {
		expr, _ := get(rules[alert], "expr").(string)
		m := regexp.MustCompile(`up\{(?:[^}]*[ ,])?job="([^"]*)"[^}]*\}`).FindStringSubmatch(expr)
		if m == nil {
			t.Fatalf("%s: %q selects no exact job", alert, expr)
		}
		if job != "" && m[1] != job {
			t.Fatalf("the alerts on up select %q and %q", job, m[1])
		}
		job = m[1]
	}
	return job
}

// TestAlertsFollowTheJob renders the monitors and the rules together, over
// the overrides of names and of the job: whatever they say, the job that
// Prometheus gives the exporter's targets is the one the alerts on up
// select (else CloudDBExporterAbsent fires falsely and
// CloudDBExporterDown never can).
func TestAlertsFollowTheJob(t *testing.T) {
	for name, tc := range map[string]struct{ values, job string }{
		"defaults":         {"", "clouddb-exporter"},
		"nameOverride":     {"nameOverride: dbexp\n", "clouddb-exporter"},
		"fullnameOverride": {"fullnameOverride: metrics-db\n", "clouddb-exporter"},
		"jobName":          {"jobName: dbexp\n", "dbexp"},
		"all overrides":    {"nameOverride: dbexp\nfullnameOverride: metrics-db\njobName: cloud-db\n", "cloud-db"},
		"selector with the job": {
			"jobName: dbexp\nprometheusRule: {enabled: true, exporterSelector: 'job=\"dbexp\", namespace=\"monitoring\"'}\n", "dbexp",
		},
		"relabelings of other labels": {
			"serviceMonitor: {enabled: true, relabelings: [{targetLabel: cluster, replacement: c1}]}\npodMonitor: {enabled: true, relabelings: [{targetLabel: cluster, replacement: c1}]}\n", "clouddb-exporter",
		},
	} {
		t.Run(name, func(t *testing.T) {
			objs := mustRender(t, withMonitors(tc.values))
			selected := selectedJob(t, objs)
			for _, kind := range []string{"ServiceMonitor", "PodMonitor"} {
				if job := scrapeJob(t, byKind(t, objs, kind)); job != selected || job != tc.job {
					t.Errorf("%s gives the job %q, the alerts select %q; want both %q", kind, job, selected, tc.job)
				}
			}
		})
	}
}

// TestJobOverridesThatDisagreeFail: a relabeling of the job, or an
// exporterSelector without the monitors' job, would part the alerts from
// the targets; the render fails, naming the value to use.
func TestJobOverridesThatDisagreeFail(t *testing.T) {
	for values, want := range map[string]string{
		"serviceMonitor: {enabled: true, relabelings: [{targetLabel: job, replacement: mine}]}\n": "serviceMonitor.relabelings: a relabeling sets the job",
		"podMonitor: {enabled: true, relabelings: [{targetLabel: job, replacement: mine}]}\n":     "podMonitor.relabelings: a relabeling sets the job",
		"prometheusRule: {enabled: true, exporterSelector: 'job=\"clouddb\"'}\n":                  `prometheusRule.exporterSelector job="clouddb" does not select the job "clouddb-exporter"`,
		"jobName: dbexp\nprometheusRule: {enabled: true, exporterSelector: 'job=\"dbexp2\"'}\n":   `does not select the job "dbexp"`,
	} {
		if _, err := render(t, withMonitors(values)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", values, err, want)
		}
	}
	// Without the chart's monitors, the selector is the user's scrape
	// config's business.
	objs := mustRender(t, minimalValues+"prometheusRule: {enabled: true, exporterSelector: 'job=\"clouddb\"'}\n")
	if job := selectedJob(t, objs); job != "clouddb" {
		t.Errorf("the alerts select %q, want the exporterSelector's clouddb", job)
	}
}

// TestMonitorsFollowTheTelemetryPath: a --web.telemetry-path in extraArgs
// is the monitors' path; a monitor path that disagrees fails the render.
func TestMonitorsFollowTheTelemetryPath(t *testing.T) {
	objs := mustRender(t, minimalValues+"serviceMonitor: {enabled: true}\npodMonitor: {enabled: true}\nextraArgs: [--web.telemetry-path=/clouddb/metrics]\n")
	for _, kind := range []string{"ServiceMonitor", "PodMonitor"} {
		if p := get(endpoint(objs, kind), "path"); p != "/clouddb/metrics" {
			t.Errorf("%s path %v, want extraArgs' /clouddb/metrics", kind, p)
		}
	}
	objs = mustRender(t, minimalValues+"serviceMonitor: {enabled: true, path: /clouddb/metrics}\nextraArgs: [--web.telemetry-path=/clouddb/metrics]\n")
	if p := get(endpoint(objs, "ServiceMonitor"), "path"); p != "/clouddb/metrics" {
		t.Errorf("ServiceMonitor path %v, want /clouddb/metrics", p)
	}
	_, err := render(t, minimalValues+"serviceMonitor: {enabled: true, path: /metrics}\nextraArgs: [--web.telemetry-path=/m]\n")
	if err == nil || !strings.Contains(err.Error(), "serviceMonitor.path /metrics is not the exporter's --web.telemetry-path=/m of extraArgs") {
		t.Errorf("a path other than extraArgs': %v", err)
	}
}
