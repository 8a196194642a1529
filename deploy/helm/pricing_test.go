package helm

import (
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestPricing: pricing.content becomes a ConfigMap mounted read-only where
// --pricing.file points, and the checksum that rolls the pod on a change;
// pricing.existingConfigMap mounts that one instead; neither, no flag.
func TestPricing(t *testing.T) {
	const flag = "--pricing.file=/etc/clouddb/pricing/pricing.yml"
	c := container(t, mustRender(t, minimalValues))
	if v, m := volumeOf(mustRender(t, minimalValues), c, "pricing"); v != nil || m != nil || count(args(c), "--pricing.file") != 0 {
		t.Errorf("off by default, yet: volume %v, mount %v, args %v", v, m, args(c))
	}
	objs := mustRender(t, minimalValues+"pricing: {content: {currency: USD, effective_date: '2026-11-01', storage_gb_month: {us-east-1: 0.15}}}")
	c = container(t, objs)
	v, m := volumeOf(objs, c, "pricing")
	if get(v, "configMap", "name") != "demo-clouddb-exporter-pricing" || m == nil || m["mountPath"] != "/etc/clouddb/pricing" || m["readOnly"] != true {
		t.Errorf("content: volume %v, mount %v; want the release's pricing ConfigMap, read-only at /etc/clouddb/pricing", v, m)
	}
	if !slices.Contains(args(c), flag) {
		t.Errorf("args %v lack %s", args(c), flag)
	}
	cm, ok := objs["ConfigMap/demo-clouddb-exporter-pricing"]
	if !ok {
		t.Fatalf("no pricing ConfigMap in %v", kinds(objs))
	}
	var prices map[string]any
	if err := yaml.Unmarshal([]byte(get(cm, "data", "pricing.yml").(string)), &prices); err != nil || prices["currency"] != "USD" {
		t.Errorf("pricing.yml %v (%v); want the content given", prices, err)
	}
	for _, o := range objs {
		if o.kind() == "Deployment" && get(o, "spec", "template", "metadata", "annotations", "checksum/pricing") == nil {
			t.Error("no checksum/pricing annotation: a changed price table would not roll the pod")
		}
	}

	objs = mustRender(t, minimalValues+"pricing: {existingConfigMap: my-prices}")
	c = container(t, objs)
	if v, _ := volumeOf(objs, c, "pricing"); get(v, "configMap", "name") != "my-prices" || !slices.Contains(args(c), flag) {
		t.Errorf("existingConfigMap: volume %v, args %v; want my-prices mounted and %s", v, args(c), flag)
	}
	if _, ok := objs["ConfigMap/demo-clouddb-exporter-pricing"]; ok {
		t.Error("existingConfigMap: the chart made its own pricing ConfigMap too")
	}

	_, err := render(t, minimalValues+"pricing: {existingConfigMap: my-prices}\nextraArgs: [--pricing.file=/x]")
	if err == nil || !strings.Contains(err.Error(), "use pricing.content or pricing.existingConfigMap") {
		t.Errorf("--pricing.file in extraArgs: %v; want a refusal naming pricing.content", err)
	}
}
