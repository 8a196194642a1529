package collector

import "strings"

// Stability levels of a metric family, as docs/metrics.md defines them.
const (
	Stable       = "stable"
	Experimental = "experimental"
)

// experimental lists families (names, or prefixes ending in "_") that may
// change in a minor release, besides the data-plane parts' (RegisterPart):
// the data plane's API is a preview.
var experimental = []string{
	"clouddb_up",
	"clouddb_project_down_cause",
	"clouddb_api_clock_skew_seconds",
	"clouddb_exporter_admin_unauthenticated_requests_total",
	"clouddb_exporter_api_lists_too_long_total",
	"clouddb_exporter_api_retry_after_capped_total",
	"clouddb_exporter_api_texts_truncated_total",
	"clouddb_exporter_api_values_rejected_total",
	"clouddb_exporter_discovery_",
	// Estimates from a price file the user supplies: the shape may change.
	"clouddb_service_estimated_",
	"clouddb_pricing_",
	"clouddb_service_rightsizing_",
	"clouddb_changes_total",
	"clouddb_service_last_change_timestamp_seconds",
	"clouddb_exporter_changes_",
	"clouddb_exporter_state_file_",
}

// Stability returns the stability level of the family name.
func Stability(name string) string {
	for _, d := range Families() {
		if d.name == name && d.part != "" {
			return Experimental
		}
	}
	for _, e := range experimental {
		if name == e || strings.HasSuffix(e, "_") && strings.HasPrefix(name, e) {
			return Experimental
		}
	}
	return Stable
}
