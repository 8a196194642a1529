package deploy

import (
	"fmt"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

const shardedDir = "deploy/kubernetes-sharded"

// loadStatefulSet returns the sharded StatefulSet, its replicas and
// serviceName, and its one container.
func loadStatefulSet(t *testing.T) (deployment, container, int, string) {
	t.Helper()
	d, c := loadWorkload(t, shardedDir+"/statefulset.yaml")
	var spec struct {
		Kind string `yaml:"kind"`
		Spec struct {
			Replicas    int    `yaml:"replicas"`
			ServiceName string `yaml:"serviceName"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal(readFile(t, shardedDir+"/statefulset.yaml"), &spec); err != nil {
		t.Fatal(err)
	}
	if spec.Kind != "StatefulSet" {
		t.Fatalf("statefulset.yaml is a %s", spec.Kind)
	}
	return d, c, spec.Spec.Replicas, spec.Spec.ServiceName
}

// TestShardedStatefulSet keeps the sharded variant equal to the Deployment
// but for the shard flags: one --total-shards per replica, each pod's shard
// from its ordinal, and a headless governing Service.
func TestShardedStatefulSet(t *testing.T) {
	d, c := loadDeployment(t)
	sd, sc, replicas, serviceName := loadStatefulSet(t)
	if replicas < 2 {
		t.Errorf("%d replicas: not sharded", replicas)
	}
	wantArgs := append(slices.Clone(c.Args), "--shard.from-hostname", fmt.Sprintf("--total-shards=%d", replicas))
	if !slices.Equal(sc.Args, wantArgs) {
		t.Errorf("StatefulSet args\n%q\nwant the Deployment's and the shard flags\n%q", sc.Args, wantArgs)
	}
	sc.Args, c.Args = nil, nil
	if !reflect.DeepEqual(sc, c) || !reflect.DeepEqual(sd.Spec.Template.Spec.SecurityContext, d.Spec.Template.Spec.SecurityContext) ||
		!reflect.DeepEqual(sd.Spec.Template.Spec.Volumes, d.Spec.Template.Spec.Volumes) {
		t.Errorf("the StatefulSet's pod differs from the Deployment's:\n%+v\n%+v", sc, c)
	}

	kust := string(readFile(t, shardedDir+"/kustomization.yaml"))
	for _, want := range []string{"  - ../kubernetes\n", "  - statefulset.yaml\n", "$patch: delete", "kind: Deployment", "clusterIP: None", "name: " + serviceName + "\n"} {
		if !strings.Contains(kust, want) {
			t.Errorf("%s/kustomization.yaml lacks %q", shardedDir, want)
		}
	}
	// kubectl builds the overlay where it is installed (CI has none).
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Log("kubectl not installed: the overlay is not built")
		return
	}
	out, err := exec.Command(kubectl, "kustomize", testbin.RepoRoot()+"/"+shardedDir).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl kustomize: %v\n%s", err, out)
	}
	dec := yaml.NewDecoder(strings.NewReader(string(out)))
	kinds := map[string]int{}
	for {
		var obj struct {
			Kind     string     `yaml:"kind"`
			Metadata objectMeta `yaml:"metadata"`
			Spec     struct {
				ClusterIP string `yaml:"clusterIP"`
			} `yaml:"spec"`
		}
		if dec.Decode(&obj) != nil {
			break
		}
		kinds[obj.Kind]++
		if obj.Kind == "Service" && (obj.Metadata.Name != serviceName || obj.Spec.ClusterIP != "None") {
			t.Errorf("Service %s clusterIP %q: want only the headless %s", obj.Metadata.Name, obj.Spec.ClusterIP, serviceName)
		}
	}
	if kinds["Deployment"] != 0 || kinds["StatefulSet"] != 1 || kinds["Service"] != 1 || kinds["ServiceMonitor"] != 1 {
		t.Errorf("the overlay builds %v: want the StatefulSet instead of the Deployment, one Service and the ServiceMonitor", kinds)
	}
}

// TestShardedStatefulSetArgs runs the StatefulSet's args against a
// simulator: --shard.from-hostname is given as the last pod's --shard
// (this host is not a pod), and checked on its own with --config.check.
func TestShardedStatefulSetArgs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binaries")
	}
	d, c, replicas, _ := loadStatefulSet(t)
	args := simArgs(t, d, c)
	if !slices.Contains(args, "--shard.from-hostname") {
		t.Fatal("the StatefulSet does not take the shard from the host name")
	}
	code, out := testbin.Run(t, testbin.Build(t, "."), nil, append(slices.Clone(args), "--config.check")...)
	if code != 0 && !strings.Contains(out, "--shard.from-hostname: host name") {
		t.Errorf("--config.check with the StatefulSet's args: exit %d, want 0 or an error about this host's name:\n%s", code, out)
	}
	args = append(withoutFlag(args, "--shard.from-hostname"), fmt.Sprintf("--shard=%d", replicas-1))
	runExporterReady(t, nil, args...)
}
