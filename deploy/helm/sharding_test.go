package helm

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// TestSharding renders sharding.enabled: a StatefulSet of totalShards pods,
// each taking its shard from its ordinal, governed by the headless metrics
// Service, with the Deployment's container otherwise.
func TestSharding(t *testing.T) {
	base := "api: {projectId: p1, url: https://api.example.net/v1}\ncredentials: {existingSecret: c}\n"
	plain := mustRender(t, base)
	objs := mustRender(t, base+"sharding: {enabled: true, totalShards: 4}")
	if _, ok := objs["Deployment/demo-clouddb-exporter"]; ok {
		t.Error("a Deployment is rendered beside the shards")
	}
	sts, ok := objs["StatefulSet/demo-clouddb-exporter"]
	if !ok {
		t.Fatalf("no StatefulSet in %v", kinds(objs))
	}
	if fmt.Sprint(get(sts, "spec", "replicas")) != "4" || get(sts, "spec", "serviceName") != "demo-clouddb-exporter" || get(sts, "spec", "strategy") != nil {
		t.Errorf("StatefulSet spec %v: want 4 replicas, serviceName demo-clouddb-exporter, no strategy", get(sts, "spec"))
	}
	svc := objs["Service/demo-clouddb-exporter"]
	if get(svc, "spec", "clusterIP") != "None" {
		t.Errorf("Service spec %v: want headless", get(svc, "spec"))
	}
	got := get(sts, "spec", "template", "spec", "containers", 0).(map[string]any)
	want := container(t, plain)
	wantArgs := append(args(want), "--shard.from-hostname", "--total-shards=4")
	if !slices.Equal(args(got), wantArgs) {
		t.Errorf("shard args %v, want %v", args(got), wantArgs)
	}
	delete(got, "args")
	delete(want, "args")
	if !equalJSON(got, want) {
		t.Errorf("the StatefulSet's container differs from the Deployment's:\n%v\n%v", got, want)
	}
	if get(plain["Service/demo-clouddb-exporter"], "spec", "clusterIP") != nil {
		t.Error("the Service is headless without sharding")
	}

	for values, wantErr := range map[string]string{
		"sharding: {enabled: true, totalShards: 1}":                                 "at '/sharding/totalShards': minimum: got 1, want 2",
		"sharding: {enabled: true}\nadmin: {enabled: true, tokenSecret: {name: t}}": "sharding.enabled and admin.enabled do not go together",
	} {
		if _, err := render(t, base+values); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%s: %v, want %q", values, err, wantErr)
		}
	}
	// The template's own check stands without the schema
	// (--skip-schema-validation).
	if _, err := renderSkipSchema(t, base+"sharding: {enabled: true, totalShards: 1}"); err == nil || !strings.Contains(err.Error(), "sharding.totalShards must be at least 2") {
		t.Errorf("totalShards 1 without the schema: %v, want the template's error", err)
	}
}
