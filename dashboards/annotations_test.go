package dashboards_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/clouddb/clouddb_exporter/dashboards"
)

// TestChangeAnnotations checks the change annotations: the fleet overview
// marks the changes counted in clouddb_changes_total, the service detail
// each change of its service; every annotation query names metrics of the
// metrics reference (generated from the descriptors) and uses
// $__rate_interval.
func TestChangeAnnotations(t *testing.T) {
	reference, err := os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"fleet-overview.json": "clouddb_changes_total",
		"service-detail.json": "clouddb_service_last_change_timestamp_seconds",
	}
	for file, metric := range want {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Annotations struct {
				List []struct {
					Name string `json:"name"`
					Expr string `json:"expr"`
				} `json:"list"`
			} `json:"annotations"`
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, a := range d.Annotations.List {
			if a.Expr == "" {
				continue
			}
			for _, name := range dashboards.MetricNames(a.Expr) {
				found = found || name == metric
				if !strings.Contains(string(reference), "| `"+name+"` |") {
					t.Errorf("%s: annotation %q names %s, which the exporter does not export", file, a.Name, name)
				}
			}
			if p := dashboards.RateIntervalProblems(a.Expr); len(p) > 0 {
				t.Errorf("%s: annotation %q: %v", file, a.Name, p)
			}
		}
		if !found {
			t.Errorf("%s: no annotation reads %s", file, metric)
		}
	}
}
