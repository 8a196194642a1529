package helm

import (
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"
)

// TestHelmLint runs `helm lint` through the Helm library, at the newest
// Kubernetes version the library knows and at the chart's minimum, with no
// values (the templates' `fail` is only INFO in lint mode), the minimal
// values and the full ones: no warning and no error. INFO messages (the
// chart has no icon) are logged.
func TestHelmLint(t *testing.T) {
	minKube, err := chartutil.ParseKubeVersion(strings.TrimPrefix(loadChart(t).Metadata.KubeVersion, ">="))
	if err != nil {
		t.Fatal(err)
	}
	for name, values := range map[string]string{"no values": "", "minimal values": minimalValues, "full values": fullValues, "web and rule values": webAndRuleValues} {
		for _, kube := range []*chartutil.KubeVersion{nil, minKube} {
			l := lint.AllWithKubeVersion(chartDir, readValues(t, values), namespace, kube)
			for _, m := range l.Messages {
				if m.Severity >= support.WarningSev {
					t.Errorf("%s, Kubernetes %v: %v", name, kube, m)
				} else {
					t.Logf("%s, Kubernetes %v: %v", name, kube, m)
				}
			}
		}
	}
}

// webAndRuleValues set the web config, probe, monitor endpoint and rule
// values.
const webAndRuleValues = minimalValues + `logFormat: logfmt
webConfig: {existingSecret: clouddb-web, tls: true}
livenessProbe: {tcpSocket: {port: http-metrics}}
extraEnvFrom: [{secretRef: {name: proxy-env}}]
serviceMonitor: {enabled: true, path: /metrics, tlsConfig: {serverName: clouddb}}
prometheusRule:
  enabled: true
  grafanaUrl: https://grafana.example.org
  disabled: {CloudDBServiceStorageGrowingFast: true}
  additionalRules: [{alert: CloudDBMine, expr: vector(1), for: 5m}]
`

// TestHelmLintFindsErrors: the linter run as above reports the chart's
// errors, here values the schema refuses.
func TestHelmLintFindsErrors(t *testing.T) {
	l := lint.All(chartDir, readValues(t, minimalValues+`service: {port: "9866"}`), namespace, false)
	if l.HighestSeverity != support.ErrorSev || !strings.Contains(messages(l), "at '/service/port': got string, want integer") {
		t.Errorf("lint with a string port: severity %d, messages %s; want the schema's error", l.HighestSeverity, messages(l))
	}
}

func messages(l support.Linter) string {
	var out []string
	for _, m := range l.Messages {
		out = append(out, m.Error())
	}
	return strings.Join(out, "; ")
}
