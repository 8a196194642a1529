package deploy

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/clouddb/clouddb_exporter/admin"
)

// TestHelmSchemaAdminOperations keeps the Helm chart's values.schema.json,
// which refuses an admin.allow entry that is not a write operation before
// the pod starts, in step with the exporter's own list (the chart's tests
// live in a module of their own, without the exporter's packages).
func TestHelmSchemaAdminOperations(t *testing.T) {
	var schema struct {
		Properties struct {
			Admin struct {
				Properties struct {
					Allow struct {
						Items struct {
							Enum []string `json:"enum"`
						} `json:"items"`
					} `json:"allow"`
				} `json:"properties"`
			} `json:"admin"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(readFile(t, "deploy/helm/clouddb-exporter/values.schema.json"), &schema); err != nil {
		t.Fatal(err)
	}
	got, want := schema.Properties.Admin.Properties.Allow.Items.Enum, admin.WriteOperations()
	if !slices.Equal(got, want) {
		t.Errorf("values.schema.json admin.allow enum %v\nwant the exporter's write operations %v", got, want)
	}
}
