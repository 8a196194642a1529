// Package helm tests the Helm chart in clouddb-exporter/ by rendering it with
// the Helm library, as `helm template` would, and checking the objects. It
// is a module of its own: the Helm library is large, and the exporter's
// go.mod must not carry it.
package helm

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "copy alerts/clouddb.rules.yml and dashboards/*.json into the chart's files/")

const (
	chartDir  = "clouddb-exporter"
	namespace = "monitoring"
	release   = "demo"
)

// repo is the repository root.
var repo = filepath.Join("..", "..")

// object is a rendered Kubernetes object, decoded.
type object map[string]any

func (o object) kind() string { return o["kind"].(string) }
func (o object) name() string { return get(o, "metadata", "name").(string) }

// get walks maps and lists by key or index; nil when a step is missing.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				if o, ok2 := v.(object); ok2 {
					m = o
				} else {
					return nil
				}
			}
			v = m[k]
		case int:
			l, ok := v.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	c, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// render renders the chart with the values (YAML, over values.yaml),
// validated against values.schema.json as `helm install` does, and returns
// the objects by "Kind/name", or the rendering error.
func render(t *testing.T, valuesYAML string) (map[string]object, error) {
	t.Helper()
	return renderSchema(t, valuesYAML, false)
}

// renderSkipSchema renders as `helm install --skip-schema-validation` does:
// the templates' own checks alone.
func renderSkipSchema(t *testing.T, valuesYAML string) (map[string]object, error) {
	t.Helper()
	return renderSchema(t, valuesYAML, true)
}

func renderSchema(t *testing.T, valuesYAML string, skipSchema bool) (map[string]object, error) {
	t.Helper()
	c := loadChart(t)
	vals := readValues(t, valuesYAML)
	rv, err := chartutil.ToRenderValuesWithSchemaValidation(c, vals, chartutil.ReleaseOptions{Name: release, Namespace: namespace, IsInstall: true, Revision: 1}, chartutil.DefaultCapabilities, skipSchema)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(c, rv)
	if err != nil {
		return nil, err
	}
	objects := map[string]object{}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !strings.HasSuffix(name, ".yaml") {
			continue
		}
		for _, doc := range strings.Split(files[name], "\n---") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			var o object
			if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, doc)
			}
			if o == nil {
				continue // only comments
			}
			key := o.kind() + "/" + o.name()
			if _, dup := objects[key]; dup {
				t.Errorf("%s rendered twice", key)
			}
			if ns := get(o, "metadata", "namespace"); ns == nil || ns == "" {
				t.Errorf("%s has no namespace", key)
			}
			objects[key] = o
		}
	}
	return objects, nil
}

func readValues(t *testing.T, valuesYAML string) chartutil.Values {
	t.Helper()
	vals, err := chartutil.ReadValues([]byte(valuesYAML))
	if err != nil {
		t.Fatal(err)
	}
	return vals
}

func mustRender(t *testing.T, valuesYAML string) map[string]object {
	t.Helper()
	objs, err := render(t, valuesYAML)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return objs
}

func kinds(objs map[string]object) []string {
	var out []string
	for k := range objs {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func container(t *testing.T, objs map[string]object) map[string]any {
	t.Helper()
	d, ok := objs["Deployment/demo-clouddb-exporter"]
	if !ok {
		t.Fatalf("no Deployment/demo-clouddb-exporter in %v", kinds(objs))
	}
	c, _ := get(d, "spec", "template", "spec", "containers", 0).(map[string]any)
	if c == nil {
		t.Fatal("the Deployment has no container")
	}
	return c
}

func args(c map[string]any) []string {
	var out []string
	for _, a := range c["args"].([]any) {
		out = append(out, a.(string))
	}
	return out
}

func TestChartVersionIsTheExporters(t *testing.T) {
	c := loadChart(t)
	version, err := os.ReadFile(filepath.Join(repo, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	if v := strings.TrimSpace(string(version)); c.Metadata.AppVersion != v {
		t.Errorf("appVersion %q, want the VERSION file's %q", c.Metadata.AppVersion, v)
	}
	if err := c.Validate(); err != nil {
		t.Error(err)
	}
}

// TestDefaultValues renders the chart as `helm install` with the one
// required value, api.url, does: discovery mode (every project the
// credentials can access), the credentials from the Secret named by
// credentials.existingSecret, as the plain manifests expect it, without the
// optional API key. Then single-project mode with another Secret.
func TestDefaultValues(t *testing.T) {
	const apiURL = "api: {url: https://api.example.net/v1}\n"
	objs, err := render(t, apiURL)
	if err != nil {
		t.Fatalf("rendering with only api.url: %v", err)
	}
	if got, want := kinds(objs), []string{"Deployment/demo-clouddb-exporter", "Service/demo-clouddb-exporter", "ServiceAccount/demo-clouddb-exporter"}; !slices.Equal(got, want) {
		t.Errorf("objects %v, want %v (no Secret: it is the user's)", got, want)
	}
	a := args(container(t, objs))
	for _, want := range []string{
		"--api.url=https://api.example.net/v1", "--api.access-key-file=/etc/clouddb/credentials/access_key",
		"--api.secret-key-file=/etc/clouddb/credentials/secret_key",
	} {
		if !slices.Contains(a, want) {
			t.Errorf("default args %v lack %s", a, want)
		}
	}
	if slices.ContainsFunc(a, func(s string) bool {
		return strings.HasPrefix(s, "--api.project-id") || strings.HasPrefix(s, "--config.file") || strings.HasPrefix(s, "--api.key-file")
	}) {
		t.Errorf("default args %v: want discovery mode (no project id, no config file), no API key file", a)
	}
	pod := get(objs["Deployment/demo-clouddb-exporter"], "spec", "template", "spec")
	if s := get(pod, "volumes", 0, "secret"); get(s, "secretName") != "clouddb-exporter-credentials" || get(s, "optional") != nil {
		t.Errorf("default credentials volume %v, want the Secret clouddb-exporter-credentials, required", s)
	}
	if _, err := render(t, `credentials: {existingSecret: ""}`); err == nil || !strings.Contains(err.Error(), "set credentials.existingSecret") {
		t.Errorf("rendering without any credentials: %v, want the error asking for them", err)
	}
	if _, err := render(t, `credentials: {accessKey: AK}`); err == nil || !strings.Contains(err.Error(), "credentials.accessKey needs credentials.secretKey") {
		t.Errorf("rendering with half a key pair: %v, want the error asking for the secret key", err)
	}
	// Keys in the values: the chart's own Secret, whatever existingSecret says.
	objs = mustRender(t, apiURL+"credentials: {accessKey: AK, secretKey: SK}")
	if s := get(objs["Deployment/demo-clouddb-exporter"], "spec", "template", "spec", "volumes", 0, "secret", "secretName"); s != "demo-clouddb-exporter-credentials" || objs["Secret/demo-clouddb-exporter-credentials"] == nil {
		t.Errorf("credentials volume from %v, want the chart's Secret", s)
	}
	if a := args(container(t, objs)); slices.Contains(a, "--api.key-file=/etc/clouddb/credentials/api_key") {
		t.Errorf("args %v: an API key file without an apiKey value", a)
	}
	// A config file names its credentials: the default Secret is mounted
	// only if it exists.
	objs = mustRender(t, "config: {content: {projects: [{id: p1, api_url: https://api.example.net/v1}]}}")
	if s := get(objs["Deployment/demo-clouddb-exporter"], "spec", "template", "spec", "volumes", 0, "secret"); get(s, "optional") != true {
		t.Errorf("credentials volume with a config file %v, want optional", s)
	}

	objs = mustRender(t, "api: {projectId: p1, url: https://api.example.net/v1}\ncredentials: {existingSecret: my-creds}")
	want := []string{"Deployment/demo-clouddb-exporter", "Service/demo-clouddb-exporter", "ServiceAccount/demo-clouddb-exporter"}
	if got := kinds(objs); !slices.Equal(got, want) {
		t.Errorf("objects %v, want %v (everything optional off by default)", got, want)
	}
	c := container(t, objs)
	appVersion := loadChart(t).Metadata.AppVersion
	if img := c["image"]; img != "ghcr.io/clouddb/clouddb_exporter:v"+appVersion {
		t.Errorf("image %v, want the chart's appVersion", img)
	}
	a = args(c)
	for _, want := range []string{
		"--web.listen-address=:9866", "--api.project-id=p1", "--api.url=https://api.example.net/v1",
		"--api.access-key-file=/etc/clouddb/credentials/access_key", "--api.secret-key-file=/etc/clouddb/credentials/secret_key",
	} {
		if !slices.Contains(a, want) {
			t.Errorf("args %v lack %s", a, want)
		}
	}
	for _, arg := range a {
		if strings.HasPrefix(arg, "--admin.") || strings.HasPrefix(arg, "--config.file") {
			t.Errorf("default args hold %s: the admin surface and the config file are off by default", arg)
		}
	}
	if ports := c["ports"].([]any); len(ports) != 1 {
		t.Errorf("ports %v, want the metrics port only", ports)
	}
	pod = get(objs["Deployment/demo-clouddb-exporter"], "spec", "template", "spec")
	if get(pod, "automountServiceAccountToken") != false || get(pod, "securityContext", "runAsNonRoot") != true {
		t.Errorf("pod spec is not hardened: %v", pod)
	}
	if get(c, "securityContext", "readOnlyRootFilesystem") != true || get(c, "securityContext", "allowPrivilegeEscalation") != false {
		t.Errorf("container securityContext %v", c["securityContext"])
	}
	if s := get(pod, "volumes", 0, "secret", "secretName"); s != "my-creds" {
		t.Errorf("credentials volume from %v, want the existing Secret", s)
	}
}

const fullValues = `
image: {tag: v9.9.9}
api: {projectId: ""}
credentials: {accessKey: AK, secretKey: SK, apiKey: K}
config:
  content:
    projects:
      - id: prod
        api_url: https://api.example.net/v1
        access_key_file: /etc/clouddb/credentials/access_key
        secret_key_file: /etc/clouddb/credentials/secret_key
extraArgs: [--collect.interval=2m]
admin:
  enabled: true
  tokenSecret: {name: admin-token}
  allow: [resizeService, setHA]
serviceMonitor: {enabled: true, additionalLabels: {release: kube-prometheus-stack}}
podMonitor: {enabled: true, additionalLabels: {release: kube-prometheus-stack}}
prometheusRule: {enabled: true, additionalLabels: {release: kube-prometheus-stack}}
grafanaDashboards: {enabled: true}
networkPolicy:
  enabled: true
  metricsFrom: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: monitoring}}}]
  adminFrom: [{podSelector: {matchLabels: {app: ops-console}}}]
podDisruptionBudget: {enabled: true}
`

func TestFullValues(t *testing.T) {
	objs := mustRender(t, fullValues)
	want := []string{
		"ConfigMap/demo-clouddb-exporter-config",
		"ConfigMap/demo-clouddb-exporter-dashboard-exporter-health",
		"ConfigMap/demo-clouddb-exporter-dashboard-fleet-overview",
		"ConfigMap/demo-clouddb-exporter-dashboard-service-detail",
		"Deployment/demo-clouddb-exporter",
		"NetworkPolicy/demo-clouddb-exporter",
		"PodDisruptionBudget/demo-clouddb-exporter",
		"PodMonitor/demo-clouddb-exporter",
		"PrometheusRule/demo-clouddb-exporter",
		"Secret/demo-clouddb-exporter-credentials",
		"Service/demo-clouddb-exporter",
		"Service/demo-clouddb-exporter-admin",
		"ServiceAccount/demo-clouddb-exporter",
		"ServiceMonitor/demo-clouddb-exporter",
	}
	if got := kinds(objs); !slices.Equal(got, want) {
		t.Fatalf("objects %v\nwant %v", got, want)
	}
	c := container(t, objs)
	if c["image"] != "ghcr.io/clouddb/clouddb_exporter:v9.9.9" {
		t.Errorf("image %v", c["image"])
	}
	a := args(c)
	for _, want := range []string{
		"--config.file=/etc/clouddb/config/config.yml", "--admin.listen-address=:9867", "--admin.token-file=/etc/clouddb/admin/token", "--admin.allow-insecure-listener",
		"--admin.allow=resizeService", "--admin.allow=setHA", "--collect.interval=2m",
	} {
		if !slices.Contains(a, want) {
			t.Errorf("args %v lack %s", a, want)
		}
	}
	// The exporter refuses single-project flags beside --config.file: the
	// file names its credentials (here the chart's Secret, mounted).
	if slices.ContainsFunc(a, func(s string) bool { return strings.HasPrefix(s, "--api.") }) {
		t.Errorf("args %v: single-project flags with a config file", a)
	}

	// Credentials from values, base64 in the Secret, mounted as files.
	sec := objs["Secret/demo-clouddb-exporter-credentials"]
	for key, want := range map[string]string{"access_key": "AK", "secret_key": "SK", "api_key": "K"} {
		b, _ := base64.StdEncoding.DecodeString(get(sec, "data", key).(string))
		if string(b) != want {
			t.Errorf("Secret %s = %q, want %q", key, b, want)
		}
	}

	// The config file is the values' content.
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(get(objs["ConfigMap/demo-clouddb-exporter-config"], "data", "config.yml").(string)), &cfg); err != nil {
		t.Fatal(err)
	}
	if get(cfg, "projects", 0, "id") != "prod" {
		t.Errorf("config.yml %v", cfg)
	}
	if get(objs["Deployment/demo-clouddb-exporter"], "spec", "template", "metadata", "annotations", "checksum/config") == nil {
		t.Error("no checksum/config annotation: a changed config would not roll the pod")
	}

	// The admin surface: its own port and Service, reachable only from
	// adminFrom.
	if p := get(objs["Service/demo-clouddb-exporter-admin"], "spec", "ports", 0, "targetPort"); p != "http-admin" {
		t.Errorf("admin Service targets %v", p)
	}
	if ports := get(objs["Service/demo-clouddb-exporter"], "spec", "ports").([]any); len(ports) != 1 {
		t.Errorf("the metrics Service exposes %v, want the metrics port only", ports)
	}
	np := objs["NetworkPolicy/demo-clouddb-exporter"]
	if get(np, "spec", "ingress", 0, "ports", 0, "port") != "http-metrics" || get(np, "spec", "ingress", 1, "ports", 0, "port") != "http-admin" ||
		get(np, "spec", "ingress", 1, "from", 0, "podSelector", "matchLabels", "app") != "ops-console" {
		t.Errorf("NetworkPolicy ingress %v", get(np, "spec", "ingress"))
	}

	// kube-prometheus-stack selects by the release label.
	for _, k := range []string{"ServiceMonitor", "PodMonitor", "PrometheusRule"} {
		if l := get(objs[k+"/demo-clouddb-exporter"], "metadata", "labels", "release"); l != "kube-prometheus-stack" {
			t.Errorf("%s release label %v", k, l)
		}
	}
	if get(objs["ServiceMonitor/demo-clouddb-exporter"], "spec", "endpoints", 0, "port") != "http-metrics" {
		t.Error("the ServiceMonitor does not scrape http-metrics")
	}
	// The alerts select job="clouddb-exporter": the job must not follow the
	// release's name ("demo" here). jobname_test.go covers the overrides.
	for _, k := range []string{"ServiceMonitor", "PodMonitor"} {
		if j := scrapeJob(t, objs[k+"/demo-clouddb-exporter"]); j != "clouddb-exporter" {
			t.Errorf("%s: job %q, not the alerts' clouddb-exporter", k, j)
		}
	}

	// The PrometheusRule holds the mixin's rules, unchanged.
	var rules map[string]any
	if err := yaml.Unmarshal(readRepo(t, "alerts/clouddb.rules.yml"), &rules); err != nil {
		t.Fatal(err)
	}
	if !equalJSON(get(objs["PrometheusRule/demo-clouddb-exporter"], "spec", "groups"), rules["groups"]) {
		t.Error("the PrometheusRule's groups differ from alerts/clouddb.rules.yml")
	}
	// The dashboards, unchanged, with the sidecar's label.
	for _, name := range []string{"exporter-health", "fleet-overview", "service-detail"} {
		cm := objs["ConfigMap/demo-clouddb-exporter-dashboard-"+name]
		if get(cm, "metadata", "labels", "grafana_dashboard") != "1" {
			t.Errorf("%s: no grafana_dashboard label", name)
		}
		got := get(cm, "data", name+".json").(string)
		if strings.TrimSpace(got) != strings.TrimSpace(string(readRepo(t, "dashboards/"+name+".json"))) {
			t.Errorf("%s: the ConfigMap's dashboard differs from dashboards/%s.json", name, name)
		}
	}
	if get(objs["PodDisruptionBudget/demo-clouddb-exporter"], "spec", "maxUnavailable") != float64(1) {
		t.Error("PDB maxUnavailable")
	}
}

func TestAdminNeedsToken(t *testing.T) {
	_, err := render(t, "api: {projectId: p1, url: https://api.example.net/v1}\ncredentials: {existingSecret: c}\nadmin: {enabled: true}")
	if err == nil || !strings.Contains(err.Error(), "admin.tokenSecret.name") {
		t.Errorf("admin without a token: %v, want an error naming admin.tokenSecret.name", err)
	}
}

// TestConsistentWithKubernetesManifests renders the chart with the values
// that describe deploy/kubernetes/ and compares the exporter's container:
// same flags, probes, ports, resources, environment and securityContext. The deploy
// package's tests run those flags against the real binary.
func TestConsistentWithKubernetesManifests(t *testing.T) {
	var dep map[string]any
	if err := yaml.Unmarshal(readRepo(t, "deploy/kubernetes/deployment.yaml"), &dep); err != nil {
		t.Fatal(err)
	}
	want, _ := get(dep, "spec", "template", "spec", "containers", 0).(map[string]any)
	wantArgs := args(want)
	var projectID, url string
	for _, a := range wantArgs {
		if v, ok := strings.CutPrefix(a, "--api.project-id="); ok {
			projectID = v
		}
		if v, ok := strings.CutPrefix(a, "--api.url="); ok {
			url = v
		}
	}
	objs := mustRender(t, "api: {projectId: "+projectID+", url: "+url+"}\ncredentials: {existingSecret: clouddb-exporter-credentials, existingSecretHasApiKey: true}")
	got := container(t, objs)
	gotArgs := args(got)
	slices.Sort(gotArgs)
	slices.Sort(wantArgs)
	if !slices.Equal(gotArgs, wantArgs) {
		t.Errorf("chart args %v\nmanifest args %v", gotArgs, wantArgs)
	}
	for _, field := range []string{"ports", "livenessProbe", "readinessProbe", "startupProbe", "resources", "env", "securityContext", "volumeMounts"} {
		if !equalJSON(got[field], want[field]) {
			t.Errorf("%s: chart %v, manifest %v", field, got[field], want[field])
		}
	}
	// The manifest's image is the chart's default image.
	if got["image"] != want["image"] {
		t.Errorf("image: chart %v, manifest %v", got["image"], want["image"])
	}
	wantPod := get(dep, "spec", "template", "spec")
	gotPod := get(objs["Deployment/demo-clouddb-exporter"], "spec", "template", "spec")
	for _, field := range []string{"securityContext", "automountServiceAccountToken"} {
		if !equalJSON(get(gotPod, field), get(wantPod, field)) {
			t.Errorf("pod %s: chart %v, manifest %v", field, get(gotPod, field), get(wantPod, field))
		}
	}
	if !equalJSON(get(gotPod, "volumes", 0, "secret"), get(wantPod, "volumes", 0, "secret")) {
		t.Errorf("credentials volume: chart %v, manifest %v", get(gotPod, "volumes", 0), get(wantPod, "volumes", 0))
	}
}

// TestFilesUpToDate keeps the chart's copies of the mixin's dashboards
// identical to dashboards/ (Helm can only read files inside the chart).
// -update copies them.
func TestFilesUpToDate(t *testing.T) {
	// The rules' copy is the mixin's build (with dashboard links), checked
	// by mixin/'s tests.
	pairs := map[string]string{}
	dashboards, _ := filepath.Glob(filepath.Join(repo, "dashboards", "*.json"))
	if len(dashboards) == 0 {
		t.Fatal("no dashboards")
	}
	for _, d := range dashboards {
		pairs["dashboards/"+filepath.Base(d)] = "files/dashboards/" + filepath.Base(d)
	}
	copies, _ := filepath.Glob(filepath.Join(chartDir, "files", "dashboards", "*.json"))
	for _, c := range copies {
		if _, ok := pairs["dashboards/"+filepath.Base(c)]; !ok {
			t.Errorf("%s has no source in dashboards/", c)
		}
	}
	for src, dst := range pairs {
		want := readRepo(t, src)
		path := filepath.Join(chartDir, dst)
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s/%s differs from %s: run go test ./... -update in deploy/helm", chartDir, dst, src)
		}
	}
}

func readRepo(t *testing.T, rel string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func equalJSON(a, b any) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(ja, jb)
}

// TestAdminGracePeriod: with the admin listener on, the pod has time to
// finish and audit the admin writes in flight on SIGTERM; without it, the
// Kubernetes default stands.
func TestAdminGracePeriod(t *testing.T) {
	base := "api: {projectId: p1, url: https://api.example.net/v1}\ncredentials: {existingSecret: c}\n"
	off := mustRender(t, base)
	if got := get(off["Deployment/demo-clouddb-exporter"], "spec", "template", "spec", "terminationGracePeriodSeconds"); got != nil {
		t.Errorf("admin off: terminationGracePeriodSeconds %v, want the default (unset)", got)
	}
	on := mustRender(t, base+"admin: {enabled: true, tokenSecret: {name: admin-token}}")
	if got := get(on["Deployment/demo-clouddb-exporter"], "spec", "template", "spec", "terminationGracePeriodSeconds"); got != float64(75) && got != 75 && got != int64(75) {
		t.Errorf("admin on: terminationGracePeriodSeconds %v (%T), want 75", got, got)
	}
}
