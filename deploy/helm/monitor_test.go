package helm

import (
	"slices"
	"testing"
)

// endpoint returns the first scrape endpoint of the ServiceMonitor or
// PodMonitor.
func endpoint(objs map[string]object, kind string) any {
	field := "endpoints"
	if kind == "PodMonitor" {
		field = "podMetricsEndpoints"
	}
	return get(objs[kind+"/demo-clouddb-exporter"], "spec", field, 0)
}

// TestMonitorEndpointSettings: the monitors scrape what the exporter
// serves: the telemetry path, the scheme, TLS and basic auth of its web
// config.
func TestMonitorEndpointSettings(t *testing.T) {
	const settings = `{enabled: true, scheme: https, path: /m, tlsConfig: {ca: {secret: {name: ca, key: ca.crt}}, serverName: clouddb}, basicAuth: {username: {name: scrape, key: user}, password: {name: scrape, key: pass}}}`
	objs := mustRender(t, minimalValues+"serviceMonitor: "+settings+"\npodMonitor: "+settings)
	for _, kind := range []string{"ServiceMonitor", "PodMonitor"} {
		e := endpoint(objs, kind)
		if get(e, "scheme") != "https" || get(e, "path") != "/m" || get(e, "tlsConfig", "serverName") != "clouddb" ||
			get(e, "tlsConfig", "ca", "secret", "name") != "ca" || get(e, "basicAuth", "password", "key") != "pass" {
			t.Errorf("%s endpoint %v, want the values' scheme, path, tlsConfig and basicAuth", kind, e)
		}
	}
	objs = mustRender(t, minimalValues+"serviceMonitor: {enabled: true}\npodMonitor: {enabled: true}")
	for _, kind := range []string{"ServiceMonitor", "PodMonitor"} {
		e := endpoint(objs, kind)
		if get(e, "scheme") != nil || get(e, "path") != "/metrics" || get(e, "tlsConfig") != nil || get(e, "basicAuth") != nil {
			t.Errorf("%s default endpoint %v, want plain HTTP on /metrics", kind, e)
		}
	}
	for values, want := range map[string]string{
		"serviceMonitor: {scheme: ftp}":  "at '/serviceMonitor/scheme': value must be one of",
		"podMonitor: {path: metrics}":    "at '/podMonitor/path': 'metrics' does not match pattern",
		"serviceMonitor: {tlsConfig: x}": "at '/serviceMonitor/tlsConfig': got string, want object",
	} {
		if _, err := render(t, minimalValues+values); err == nil || !contains(err, want) {
			t.Errorf("%s: %v, want %q", values, err, want)
		}
	}
}

// TestWebConfig: the web config comes from a Secret, mounted and passed;
// with TLS on, the probes and the monitors use HTTPS.
func TestWebConfig(t *testing.T) {
	objs := mustRender(t, minimalValues+"webConfig: {existingSecret: clouddb-web, tls: true}\nserviceMonitor: {enabled: true}\npodMonitor: {enabled: true}")
	c := container(t, objs)
	if !slices.Contains(args(c), "--web.config.file=/etc/clouddb/web/web-config.yml") {
		t.Errorf("args %v lack --web.config.file", args(c))
	}
	pod := get(objs["Deployment/demo-clouddb-exporter"], "spec", "template", "spec")
	mounted := false
	for i := range len(get(pod, "volumes").([]any)) {
		if get(pod, "volumes", i, "secret", "secretName") == "clouddb-web" {
			for j := range len(c["volumeMounts"].([]any)) {
				mounted = mounted || (get(c, "volumeMounts", j, "name") == get(pod, "volumes", i, "name") && get(c, "volumeMounts", j, "mountPath") == "/etc/clouddb/web")
			}
		}
	}
	if !mounted {
		t.Errorf("the Secret clouddb-web is not mounted at /etc/clouddb/web: %v", get(pod, "volumes"))
	}
	for _, p := range []string{"livenessProbe", "readinessProbe", "startupProbe"} {
		if s := get(c, p, "httpGet", "scheme"); s != "HTTPS" {
			t.Errorf("%s scheme %v with web TLS, want HTTPS", p, s)
		}
	}
	for _, kind := range []string{"ServiceMonitor", "PodMonitor"} {
		if s := get(endpoint(objs, kind), "scheme"); s != "https" {
			t.Errorf("%s scheme %v with web TLS, want https", kind, s)
		}
	}
	if _, err := renderSkipSchema(t, minimalValues+"webConfig: {tls: true}"); err == nil || !contains(err, "webConfig.tls needs webConfig.existingSecret") {
		t.Errorf("webConfig.tls without a Secret: %v", err)
	}
	c = container(t, mustRender(t, minimalValues))
	for _, p := range []string{"livenessProbe", "readinessProbe", "startupProbe"} {
		if s := get(c, p, "httpGet", "scheme"); s != nil {
			t.Errorf("%s scheme %v without a web config, want the default", p, s)
		}
	}
}

// TestProbeAndEnvFromValues: the probes can be replaced (a basic-auth web
// config answers the kubelet 401) or left out, and envFrom is open.
func TestProbeAndEnvFromValues(t *testing.T) {
	c := container(t, mustRender(t, minimalValues+`livenessProbe: {tcpSocket: {port: http-metrics}, periodSeconds: 20}
readinessProbe: {httpGet: {path: /-/ready, port: http-metrics}, periodSeconds: 15}
startupProbe: null
extraEnvFrom: [{secretRef: {name: proxy-env}}]
`))
	if get(c, "livenessProbe", "tcpSocket", "port") != "http-metrics" || get(c, "livenessProbe", "httpGet") != nil {
		t.Errorf("livenessProbe %v, want the values' tcpSocket probe", c["livenessProbe"])
	}
	if get(c, "readinessProbe", "periodSeconds") != float64(15) {
		t.Errorf("readinessProbe %v, want periodSeconds 15", c["readinessProbe"])
	}
	if _, ok := c["startupProbe"]; ok {
		t.Errorf("startupProbe %v, want none (null)", c["startupProbe"])
	}
	if get(c, "envFrom", 0, "secretRef", "name") != "proxy-env" {
		t.Errorf("envFrom %v", c["envFrom"])
	}
}
