package deploy

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/clouddb/clouddb_exporter/dashboards"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

var update = flag.Bool("update", false, "regenerate deploy/kubernetes/prometheusrule.yaml, dashboards.yaml and the Helm schema's admin.allow enum")

const (
	k8sDir     = "deploy/kubernetes"
	namespace  = "monitoring"
	appLabel   = "clouddb-exporter"
	generated  = "# Generated from %s by `go test ./deploy/ -update`. Do not edit.\n"
	ruleSource = "alerts/clouddb.rules.yml"
	// A default kube-prometheus-stack selects ServiceMonitors and
	// PrometheusRules labelled with its release name; this is the name its
	// documentation installs it under.
	kubePrometheusStack = "kube-prometheus-stack"
)

func encodeYAML(t *testing.T, docs ...any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type objectMeta struct {
	Name      string            `yaml:"name"`
	Namespace string            `yaml:"namespace"`
	Labels    map[string]string `yaml:"labels"`
}

// prometheusRule wraps the groups of the shipped rule file, as they are, in
// a Prometheus Operator PrometheusRule.
func prometheusRule(t *testing.T) []byte {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal(readFile(t, ruleSource), &doc); err != nil {
		t.Fatal(err)
	}
	root := doc.Content[0]
	var groups *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "groups" {
			groups = root.Content[i+1]
		}
	}
	if groups == nil {
		t.Fatalf("%s has no groups", ruleSource)
	}
	rule := struct {
		APIVersion string     `yaml:"apiVersion"`
		Kind       string     `yaml:"kind"`
		Metadata   objectMeta `yaml:"metadata"`
		Spec       struct {
			Groups *yaml.Node `yaml:"groups"`
		} `yaml:"spec"`
	}{APIVersion: "monitoring.coreos.com/v1", Kind: "PrometheusRule",
		Metadata: objectMeta{Name: appLabel, Namespace: namespace, Labels: map[string]string{"app.kubernetes.io/name": appLabel, "release": kubePrometheusStack}}}
	rule.Spec.Groups = groups
	return append([]byte(fmt.Sprintf(generated, ruleSource)), encodeYAML(t, rule)...)
}

// dashboardConfigMaps puts each dashboard in a ConfigMap labelled for the
// Grafana sidecar (grafana_dashboard: "1").
func dashboardConfigMaps(t *testing.T) []byte {
	t.Helper()
	var docs []any
	for _, name := range dashboards.Files() {
		raw, err := dashboards.Raw(name)
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, struct {
			APIVersion string            `yaml:"apiVersion"`
			Kind       string            `yaml:"kind"`
			Metadata   objectMeta        `yaml:"metadata"`
			Data       map[string]string `yaml:"data"`
		}{"v1", "ConfigMap",
			objectMeta{Name: "clouddb-dashboard-" + strings.TrimSuffix(name, ".json"), Namespace: namespace,
				Labels: map[string]string{"grafana_dashboard": "1", "app.kubernetes.io/name": appLabel}},
			map[string]string{name: string(raw)}})
	}
	return append([]byte(fmt.Sprintf(generated, "dashboards/*.json")), encodeYAML(t, docs...)...)
}

// TestGeneratedManifests fails when the PrometheusRule or the dashboard
// ConfigMaps differ from what alerts/ and dashboards/ generate.
func TestGeneratedManifests(t *testing.T) {
	for file, content := range map[string][]byte{
		"prometheusrule.yaml": prometheusRule(t),
		"dashboards.yaml":     dashboardConfigMaps(t),
	} {
		path := filepath.Join(testbin.RepoRoot(), k8sDir, file)
		if *update {
			if err := os.WriteFile(path, content, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		have, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(have, content) {
			t.Errorf("%s/%s is out of sync with its sources: run go test ./deploy/ -update", k8sDir, file)
		}
	}
}

// TestGeneratedRulesMatch checks the generated PrometheusRule the other way
// round: its groups decode to the rule file's.
func TestGeneratedRulesMatch(t *testing.T) {
	var src struct {
		Groups []map[string]any `yaml:"groups"`
	}
	var rule struct {
		Spec struct {
			Groups []map[string]any `yaml:"groups"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(readFile(t, ruleSource), &src); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(readFile(t, k8sDir+"/prometheusrule.yaml"), &rule); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(src.Groups) != fmt.Sprint(rule.Spec.Groups) || len(src.Groups) == 0 {
		t.Error("the PrometheusRule's groups differ from alerts/clouddb.rules.yml")
	}
}

type container struct {
	Name  string   `yaml:"name"`
	Image string   `yaml:"image"`
	Args  []string `yaml:"args"`
	Ports []struct {
		Name          string `yaml:"name"`
		ContainerPort int    `yaml:"containerPort"`
	} `yaml:"ports"`
	LivenessProbe  *probe `yaml:"livenessProbe"`
	ReadinessProbe *probe `yaml:"readinessProbe"`
	Resources      struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
	SecurityContext struct {
		AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
		ReadOnlyRootFilesystem   *bool `yaml:"readOnlyRootFilesystem"`
		RunAsNonRoot             *bool `yaml:"runAsNonRoot"`
		Capabilities             struct {
			Drop []string `yaml:"drop"`
		} `yaml:"capabilities"`
	} `yaml:"securityContext"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

type probe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
}

type deployment struct {
	Spec struct {
		Template struct {
			Spec struct {
				SecurityContext struct {
					RunAsNonRoot *bool `yaml:"runAsNonRoot"`
					RunAsUser    int   `yaml:"runAsUser"`
				} `yaml:"securityContext"`
				Containers []container `yaml:"containers"`
				Volumes    []struct {
					Name   string `yaml:"name"`
					Secret *struct {
						SecretName string `yaml:"secretName"`
					} `yaml:"secret"`
				} `yaml:"volumes"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

func loadDeployment(t *testing.T) (deployment, container) {
	t.Helper()
	return loadWorkload(t, k8sDir+"/deployment.yaml")
}

// loadWorkload reads a Deployment or StatefulSet with one container.
func loadWorkload(t *testing.T, file string) (deployment, container) {
	t.Helper()
	var d deployment
	if err := yaml.Unmarshal(readFile(t, file), &d); err != nil {
		t.Fatal(err)
	}
	if len(d.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(d.Spec.Template.Spec.Containers))
	}
	return d, d.Spec.Template.Spec.Containers[0]
}

func TestDeploymentSecurity(t *testing.T) {
	d, c := loadDeployment(t)
	pod := d.Spec.Template.Spec.SecurityContext
	if pod.RunAsNonRoot == nil || !*pod.RunAsNonRoot || pod.RunAsUser == 0 {
		t.Errorf("pod securityContext %+v: want runAsNonRoot and a non-zero runAsUser", pod)
	}
	sc := c.SecurityContext
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Error("allowPrivilegeEscalation must be false")
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Error("readOnlyRootFilesystem must be true")
	}
	if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
		t.Error("runAsNonRoot must be true")
	}
	if len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
		t.Errorf("capabilities drop %v, want [ALL]", sc.Capabilities.Drop)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/-/healthy" {
		t.Errorf("livenessProbe %+v, want /-/healthy", c.LivenessProbe)
	}
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/-/ready" {
		t.Errorf("readinessProbe %+v, want /-/ready", c.ReadinessProbe)
	}
	if c.Resources.Requests["cpu"] == "" || c.Resources.Requests["memory"] == "" || c.Resources.Limits["memory"] == "" {
		t.Errorf("resources %+v: want cpu and memory requests and a memory limit", c.Resources)
	}
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 9866 || c.Ports[0].Name != c.ReadinessProbe.HTTPGet.Port {
		t.Errorf("ports %+v", c.Ports)
	}
	for _, a := range c.Args {
		for _, secret := range []string{"access-key=", "secret-key=", "api-key="} {
			if strings.Contains(a, secret) {
				t.Errorf("a credential is an argument: %s", a)
			}
		}
	}
}

// TestDeploymentArgs runs the Deployment's args with the Secret's keys as
// files at their mount path (moved to a temporary directory) against a
// simulator of the Deployment's project, until the exporter is ready.
func TestDeploymentArgs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binaries")
	}
	d, c := loadDeployment(t)
	runExporterReady(t, nil, simArgs(t, d, c)...)
}

// credentialsSecret is the Secret the manifests mount and the docs create
// (kubectl create secret generic), with the keys of simCredentials.
const credentialsSecret = "clouddb-exporter-credentials"

// simArgs returns the args of a Deployment's (or StatefulSet's) container
// with the credentials Secret's documented keys as files at its mount path
// (moved to a temporary directory) and --api.url pointing at a simulator of
// its project.
func simArgs(t *testing.T, d deployment, c container) []string {
	t.Helper()
	mountPath := ""
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == credentialsSecret {
			for _, m := range c.VolumeMounts {
				if m.Name == v.Name {
					mountPath = m.MountPath
				}
			}
		}
	}
	if mountPath == "" {
		t.Fatalf("the Secret %s is not mounted", credentialsSecret)
	}
	creds := writeCredentials(t)
	var args []string
	for _, a := range c.Args {
		if _, v, ok := strings.Cut(a, "-file="); ok {
			if !strings.HasPrefix(v, mountPath+"/") {
				t.Errorf("%s: not a file of the mounted Secret", a)
			} else if _, ok := simCredentials[strings.TrimPrefix(v, mountPath+"/")]; !ok {
				t.Errorf("%s: not a key of the documented Secret", a)
			}
			a = strings.Replace(a, mountPath, creds, 1)
		}
		args = append(args, a)
	}
	project, ok := flagValue(args, "--api.project-id")
	if !ok {
		t.Fatal("the Deployment sets no --api.project-id")
	}
	sim := startSim(t, nil, "--project-id="+project)
	return append(withoutFlag(args, "--api.url"), "--api.url=http://"+sim+"/v1")
}

func TestKustomization(t *testing.T) {
	var k struct {
		Resources []string `yaml:"resources"`
	}
	if err := yaml.Unmarshal(readFile(t, k8sDir+"/kustomization.yaml"), &k); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(testbin.RepoRoot(), k8sDir, "*.yaml"))
	for _, f := range files {
		base := filepath.Base(f)
		if base == "kustomization.yaml" {
			continue
		}
		found := false
		for _, r := range k.Resources {
			found = found || r == base
		}
		if !found {
			t.Errorf("%s is not listed in kustomization.yaml", base)
		}
	}
	for _, r := range k.Resources {
		if _, err := os.Stat(filepath.Join(testbin.RepoRoot(), k8sDir, r)); err != nil {
			t.Errorf("kustomization.yaml lists %s, which does not exist", r)
		}
	}
}

// TestKubernetesBaseHoldsNoCredentials: `kubectl apply -k` must never
// overwrite the credentials Secret created the recommended way (kubectl
// create secret, a secret store), so the base neither applies a Secret nor
// generates one from literals.
func TestKubernetesBaseHoldsNoCredentials(t *testing.T) {
	var k struct {
		Resources       []string         `yaml:"resources"`
		SecretGenerator []map[string]any `yaml:"secretGenerator"`
	}
	if err := yaml.Unmarshal(readFile(t, k8sDir+"/kustomization.yaml"), &k); err != nil {
		t.Fatal(err)
	}
	for _, g := range k.SecretGenerator {
		if g["literals"] != nil {
			t.Errorf("kustomization.yaml generates a Secret from literals: %v", g["name"])
		}
	}
	for _, r := range k.Resources {
		dec := yaml.NewDecoder(bytes.NewReader(readFile(t, filepath.Join(k8sDir, r))))
		for {
			var obj struct {
				Kind     string     `yaml:"kind"`
				Metadata objectMeta `yaml:"metadata"`
			}
			if err := dec.Decode(&obj); err != nil {
				break
			}
			if obj.Kind == "Secret" {
				t.Errorf("%s applies the Secret %s: kubectl apply -k would overwrite the user's", r, obj.Metadata.Name)
			}
		}
	}
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Log("kubectl not installed: the base is not built")
		return
	}
	out, err := exec.Command(kubectl, "kustomize", filepath.Join(testbin.RepoRoot(), k8sDir)).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl kustomize: %v\n%s", err, out)
	}
	if strings.Contains(string(out), "\nkind: Secret\n") {
		t.Error("kubectl kustomize deploy/kubernetes builds a Secret")
	}
}

// TestKubernetesSelectedAndPinned checks what a default kube-prometheus-stack
// and a reproducible rollout need: the release label on the ServiceMonitor
// and the PrometheusRule, and the image of this VERSION, never :latest.
func TestKubernetesSelectedAndPinned(t *testing.T) {
	for _, file := range []string{"servicemonitor.yaml", "prometheusrule.yaml"} {
		var obj struct {
			Metadata objectMeta `yaml:"metadata"`
		}
		if err := yaml.Unmarshal(readFile(t, filepath.Join(k8sDir, file)), &obj); err != nil {
			t.Fatal(err)
		}
		if obj.Metadata.Labels["release"] != kubePrometheusStack {
			t.Errorf("%s: labels %v lack release: %s", file, obj.Metadata.Labels, kubePrometheusStack)
		}
	}
	version := strings.TrimSpace(string(readFile(t, "VERSION")))
	dep := string(readFile(t, filepath.Join(k8sDir, "deployment.yaml")))
	if want := "image: ghcr.io/clouddb/clouddb_exporter:v" + version + "\n"; !strings.Contains(dep, want) || strings.Contains(dep, ":latest") {
		t.Errorf("deployment.yaml does not use %q", strings.TrimSpace(want))
	}
}
