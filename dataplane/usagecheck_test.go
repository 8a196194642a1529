package dataplane

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/collectortest"
)

// TestUsageRejectsImpossibleValues: a memory usage of 1e308 bytes on a
// node of 8 GiB (it paged "1.164e+300% of its memory") and -5
// connections are no measurement: each is rejected and counted, the
// series keeps its newest possible bucket (or none), and the rest of the
// answer, the other node's values, is kept.
func TestUsageRejectsImpossibleValues(t *testing.T) {
	h := newUsageHarness(t, 1, 0, usageSettings{Series: []string{"system_memory_total_bytes", "system_memory_usage_bytes", "database_num_connections"}},
		"x_system_memory_total_bytes", "x_system_memory_usage_bytes", "x_database_num_connections")
	h.u.opts.Concurrency = 1 // the total first, as the plan orders the series
	now := h.clock.Now().Truncate(time.Minute)
	node := func(ordinal string) apiclient.SeriesLabels {
		return apiclient.SeriesLabels{"role": "primary", "ordinal": ordinal}
	}
	const gib = 1 << 30
	h.fu.series["x_system_memory_total_bytes"] = []apiclient.Series{
		{Labels: node("0"), Data: []apiclient.SeriesPoint{point(now, f64(8*gib))}},
		{Labels: node("1"), Data: []apiclient.SeriesPoint{point(now, f64(8*gib))}},
	}
	h.fu.series["x_system_memory_usage_bytes"] = []apiclient.Series{
		{Labels: node("0"), Data: []apiclient.SeriesPoint{point(now.Add(-time.Minute), f64(6*gib)), point(now, f64(1e308))}},
		{Labels: node("1"), Data: []apiclient.SeriesPoint{point(now, f64(7*gib))}},
	}
	h.fu.series["x_database_num_connections"] = []apiclient.Series{
		{Labels: node("0"), Data: []apiclient.SeriesPoint{point(now, f64(-5))}},
		{Labels: node("1"), Data: []apiclient.SeriesPoint{point(now, f64(40))}},
	}
	u := h.tick()
	got := map[string]float64{}
	for _, s := range u.Samples() {
		got[s.Suffix+"/"+s.Labels.Ordinal()] = s.Value
	}
	want := map[string]float64{
		apiclient.SeriesMemoryTotal + "/0": 8 * gib, apiclient.SeriesMemoryTotal + "/1": 8 * gib,
		apiclient.SeriesMemoryUsage + "/0": 6 * gib, // the older bucket
		apiclient.SeriesMemoryUsage + "/1": 7 * gib,
		apiclient.SeriesConnections + "/1": 40, // node 0's -5: none
	}
	if len(got) != len(want) {
		t.Errorf("samples %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	if !h.health().Success {
		t.Errorf("the part fails for values it rejected: %+v", h.health())
	}
	c := collectortest.NewFleetCollectorOf(&fleet.Snapshot{ProjectID: "p1", Data: map[string]any{PartUsage: u}})
	exp := "# HELP clouddb_exporter_api_values_rejected_total " + valuesRejectedDesc.Help() + "\n# TYPE clouddb_exporter_api_values_rejected_total counter\n" +
		`clouddb_exporter_api_values_rejected_total{field="database_num_connections",project_id="p1",reason="negative"} 1` + "\n" +
		`clouddb_exporter_api_values_rejected_total{field="system_memory_usage_bytes",project_id="p1",reason="over_total"} 1` + "\n"
	if err := testutil.CollectAndCompare(c, strings.NewReader(exp), "clouddb_exporter_api_values_rejected_total"); err != nil {
		t.Error(err)
	}
	if n := strings.Count(h.logs.String(), "no node can have"); n != 2 {
		t.Errorf("%d WARN lines, want one a field and reason:\n%s", n, h.logs)
	}
	// Read again: counted again, warned once.
	h.clock.Advance(5 * time.Minute)
	h.tick()
	if n := strings.Count(h.logs.String(), "no node can have"); n != 2 {
		t.Errorf("%d WARN lines after a second read, want still 2:\n%s", n, h.logs)
	}
}

// totalLast holds the answer to the first service's total until the reads
// of the second service begin: by then the first service's usage has been
// applied, as when, on a service's first read, the parallel reads answer
// out of order. The second service has no series.
type totalLast struct {
	*fakeUsage
	total   string
	release chan struct{}
	once    sync.Once
}

func (c *totalLast) GetServiceMetricsSeries(ctx context.Context, id string, req apiclient.SeriesRequest) ([]apiclient.Series, error) {
	if id != "svc00" {
		c.once.Do(func() { close(c.release) })
		return nil, nil
	}
	if req.Name == c.total {
		<-c.release
	}
	return c.fakeUsage.GetServiceMetricsSeries(ctx, id, req)
}

// TestUsageRejectsOverTotalWhenTheTotalComesLast: on a service's first
// read the node's total was not known yet when a parallel read brought its
// usage first, so 1e308 bytes of memory were exported.
func TestUsageRejectsOverTotalWhenTheTotalComesLast(t *testing.T) {
	h := newUsageHarness(t, 2, 0, usageSettings{Series: []string{"system_memory_total_bytes", "system_memory_usage_bytes", "database_num_connections"}},
		"x_system_memory_total_bytes", "x_system_memory_usage_bytes", "x_database_num_connections")
	h.u.opts.Concurrency = 2
	h.u.client = &totalLast{fakeUsage: h.fu, total: "x_system_memory_total_bytes", release: make(chan struct{})}
	now := h.clock.Now().Truncate(time.Minute)
	node := apiclient.SeriesLabels{"role": "primary", "ordinal": "0"}
	const gib = 1 << 30
	h.fu.series["x_system_memory_total_bytes"] = []apiclient.Series{{Labels: node, Data: []apiclient.SeriesPoint{point(now, f64(8*gib))}}}
	h.fu.series["x_system_memory_usage_bytes"] = []apiclient.Series{{Labels: node, Data: []apiclient.SeriesPoint{point(now, f64(1e308))}}}
	h.fu.series["x_database_num_connections"] = []apiclient.Series{{Labels: node, Data: []apiclient.SeriesPoint{point(now, f64(40))}}}
	u := h.tick()
	found := false
	for _, s := range u.Samples() {
		switch s.Suffix {
		case apiclient.SeriesMemoryUsage:
			t.Errorf("memory usage %v exported on a node of 8 GiB", s.Value)
		case apiclient.SeriesMemoryTotal:
			found = true
		}
	}
	if !found {
		t.Error("the total was not exported")
	}
	if !strings.Contains(h.logs.String(), "no node can have") {
		t.Errorf("no WARN for the rejected value:\n%s", h.logs)
	}
}

// TestUsageRejectsValuesOverAnyNode: the check against the node's total
// needs the total selected, and a total of 1e308 was itself taken as
// true. A CPU or memory value, usage or total, beyond any node's size is
// rejected whatever else is selected.
func TestUsageRejectsValuesOverAnyNode(t *testing.T) {
	h := newUsageHarness(t, 1, 0, usageSettings{Series: []string{"system_cpu_total_millicores", "system_cpu_usage_millicores", "system_memory_usage_bytes"}},
		"x_system_cpu_total_millicores", "x_system_cpu_usage_millicores", "x_system_memory_usage_bytes")
	h.u.opts.Concurrency = 1
	now := h.clock.Now().Truncate(time.Minute)
	node := apiclient.SeriesLabels{"role": "primary", "ordinal": "0"}
	h.fu.series["x_system_cpu_total_millicores"] = []apiclient.Series{{Labels: node, Data: []apiclient.SeriesPoint{point(now, f64(1e308))}}}
	h.fu.series["x_system_cpu_usage_millicores"] = []apiclient.Series{{Labels: node, Data: []apiclient.SeriesPoint{point(now, f64(1500))}}}
	h.fu.series["x_system_memory_usage_bytes"] = []apiclient.Series{{Labels: node, Data: []apiclient.SeriesPoint{point(now, f64(1e308))}}}
	u := h.tick()
	got := map[string]float64{}
	for _, s := range u.Samples() {
		got[s.Suffix] = s.Value
	}
	if want := map[string]float64{apiclient.SeriesCPUUsage: 1500}; len(got) != 1 || got[apiclient.SeriesCPUUsage] != 1500 {
		t.Errorf("samples %v, want %v", got, want)
	}
	c := collectortest.NewFleetCollectorOf(&fleet.Snapshot{ProjectID: "p1", Data: map[string]any{PartUsage: u}})
	exp := "# HELP clouddb_exporter_api_values_rejected_total " + valuesRejectedDesc.Help() + "\n# TYPE clouddb_exporter_api_values_rejected_total counter\n" +
		`clouddb_exporter_api_values_rejected_total{field="system_cpu_total_millicores",project_id="p1",reason="over_any_node"} 1` + "\n" +
		`clouddb_exporter_api_values_rejected_total{field="system_memory_usage_bytes",project_id="p1",reason="over_any_node"} 1` + "\n"
	if err := testutil.CollectAndCompare(c, strings.NewReader(exp), "clouddb_exporter_api_values_rejected_total"); err != nil {
		t.Error(err)
	}
}

// TestUsageTotalsFirstInPlace: the reads of the nodes' totals go first,
// each part in the plan's order, in the plan's own list: two lists
// appended anew each read were kept while it lasted (2.3 MB at 10,000
// services).
func TestUsageTotalsFirstInPlace(t *testing.T) {
	h := newUsageHarness(t, 1, 0, usageSettings{Series: []string{"system_memory_total_bytes", "system_memory_usage_bytes",
		"database_num_connections", "system_cpu_total_millicores"}})
	isTotal := func(idx uint16) bool {
		s := h.u.suffixes[idx]
		return s == apiclient.SeriesMemoryTotal || s == apiclient.SeriesCPUTotal
	}
	var plan []usageTask
	for i := range 64 {
		plan = append(plan, usageTask{last: uint32(i), idx: uint16(i*7%13) % uint16(len(h.u.suffixes))})
	}
	var want [2][]usageTask
	for _, task := range plan {
		if isTotal(task.idx) {
			want[0] = append(want[0], task)
		} else {
			want[1] = append(want[1], task)
		}
	}
	tasks := slices.Clone(plan)
	got := h.u.totalsFirst(tasks)
	for i := range got {
		if !slices.Equal(got[i], want[i]) {
			t.Errorf("part %d: %v, want %v", i, got[i], want[i])
		}
	}
	if len(got[0]) > 0 && &got[0][0] != &tasks[0] || len(got[1]) > 0 && &got[1][0] != &tasks[len(got[0])] {
		t.Error("the parts are not the plan's list")
	}
	if allocs := testing.AllocsPerRun(5, func() { copy(tasks, plan); h.u.totalsFirst(tasks) }); allocs != 0 {
		t.Errorf("putting the totals first made %.0f allocations, want none", allocs)
	}
}
