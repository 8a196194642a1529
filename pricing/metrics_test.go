package pricing

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/clouddb/clouddb_exporter/internal/fleettest"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/clouddb/clouddb_exporter/collector"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/collectortest"
)

// samples renders s through every registered group, as the exposition does.
func samples(s *fleet.Snapshot) []string {
	var rec collector.Samples
	for _, g := range collector.Groups() {
		g.Collect(rec.Sink(), s)
	}
	var out []string
	for i := range rec.Len() {
		d, v, labels := rec.At(i)
		if strings.HasPrefix(d.Name(), "clouddb_service_estimated_") || strings.HasPrefix(d.Name(), "clouddb_pricing_") {
			out = append(out, fmt.Sprintf("%s%v %g", d.Name(), labels, v))
		}
	}
	return out
}

// TestEstimatorPublishes: the estimate travels in a copy of each snapshot
// (the poller's stays as it was), one series per priced component.
func TestEstimatorPublishes(t *testing.T) {
	next := &fleettest.Recorder{}
	reg := prometheus.NewPedanticRegistry()
	e := NewEstimator(next, reg, nil)
	s := estimateSnapshot()

	e.SetSnapshot(s)
	if Of(next.Got[0]) != nil {
		t.Error("no table yet, but the snapshot was priced")
	}
	e.SetTable(mustParse(t, testTable))
	e.SetSnapshot(s)
	if s.Data != nil {
		t.Error("the poller's snapshot was modified")
	}
	got := samples(next.Got[1])
	for _, want := range []string{
		"clouddb_service_estimated_cost_per_hour[p1 a-plain compute] 0.09",
		"clouddb_service_estimated_cost_per_hour[p1 b-ha ha] 0.18",
		"clouddb_service_estimated_cost_per_hour[p1 c-replica-sets read_replicas] 0.225",
		"clouddb_service_estimated_cost_per_hour[p1 d-paused compute] 0",
		"clouddb_pricing_unpriced_resources[p1] 5",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("no sample %s in\n%s", want, strings.Join(got, "\n"))
		}
	}
	for _, unwanted := range []string{"[p1 b-ha storage]", "[p1 f-elsewhere compute]"} {
		for _, g := range got {
			if strings.Contains(g, unwanted) {
				t.Errorf("an unpriced component has a series: %s", g)
			}
		}
	}
	if len(samples(next.Got[0])) != 0 {
		t.Error("an unpriced snapshot has cost series")
	}

	info := `# HELP clouddb_pricing_info The price file the cost estimates use, value 1.
# TYPE clouddb_pricing_info gauge
clouddb_pricing_info{currency="EUR",effective_date="2026-11-01"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(info), "clouddb_pricing_info"); err != nil {
		t.Error(err)
	}
	e.SetTable(nil)
	if n, err := testutil.GatherAndCount(reg, "clouddb_pricing_info"); err != nil || n != 0 {
		t.Errorf("without a table: %d clouddb_pricing_info series, %v", n, err)
	}
	e.RemoveProject("p1")
	if !slices.Equal(next.Removed, []string{"p1"}) {
		t.Errorf("removed %v; want [p1]", next.Removed)
	}
}

func TestCostMetricsLint(t *testing.T) {
	next := &fleettest.Recorder{}
	e := NewEstimator(next, nil, nil)
	e.SetTable(mustParse(t, testTable))
	e.SetSnapshot(estimateSnapshot())
	problems, err := testutil.CollectAndLint(collectortest.NewFleetCollectorOf(next.Got[0]), "clouddb_service_estimated_cost_per_hour", "clouddb_pricing_unpriced_resources")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}
