package dataplane

import (
	"testing"

	"github.com/clouddb/clouddb_exporter/config"
)

// TestUsageServicesShareNameLists: services whose available series have
// the same names share one list of them (a list of 16 strings a service
// was 2.5 MB at 10,000).
func TestUsageServicesShareNameLists(t *testing.T) {
	h := newUsageHarness(t, 3, 0, config.Usage{Series: []string{"database_qps", "database_job_success"}},
		"x_database_qps", "x_database_job_success")
	h.tick()
	a, b := h.u.services["svc00"], h.u.services["svc02"]
	if a == nil || b == nil || len(a.avail.names) != 2 || len(b.avail.names) != 2 {
		t.Fatalf("available series not read: %+v, %+v", a, b)
	}
	if &a.avail.names[0] != &b.avail.names[0] {
		t.Errorf("two services with the same available series keep a list each")
	}
}
