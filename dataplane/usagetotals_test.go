package dataplane

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// totalsSeries are a node series and the two totals, which change only
// with the service's shape.
var totalsSeries = []string{"system_cpu_usage_millicores", "system_cpu_total_millicores", "system_memory_total_bytes"}

// newTotalsHarness reads totalsSeries of n services of one node each, of
// 2 cores and 8 GiB, whose answers all have a value.
func newTotalsHarness(t *testing.T, n int, usage usageSettings) *usageHarness {
	t.Helper()
	if usage.Series == nil {
		usage.Series = totalsSeries
	}
	var names []string
	for _, s := range usage.Series {
		names = append(names, "x_"+s)
	}
	h := newUsageHarness(t, n, 0, usage, names...)
	h.host.setServices(func(list []fleet.Service) []fleet.Service {
		for i := range list {
			list[i].Resources = []apiclient.Resource{{ID: "r-" + list[i].ServiceID, Spec: &apiclient.ResourceSpec{CPUMillis: ptr(apiclient.Int(2000)), MemoryGBs: ptr(apiclient.Int(8))}}}
		}
		return list
	})
	now := h.clock.Now().Truncate(time.Minute)
	node := apiclient.SeriesLabels{"role": "primary", "ordinal": "0"}
	values := map[string]float64{apiclient.SeriesCPUUsage: 500, apiclient.SeriesCPUTotal: 2000, apiclient.SeriesMemoryTotal: 8 << 30}
	for _, name := range names {
		v := 1.0
		if x, ok := values[strings.TrimPrefix(name, "x")]; ok {
			v = x
		}
		h.fu.series[name] = []apiclient.Series{{Labels: node, Data: []apiclient.SeriesPoint{point(now, f64(v))}}}
	}
	return h
}

func ptr[T any](v T) *T { return &v }

func isTotal(read string) bool {
	return strings.HasSuffix(read, apiclient.SeriesCPUTotal) || strings.HasSuffix(read, apiclient.SeriesMemoryTotal)
}

// tickReads runs a tick and counts its series reads: the nodes' totals and the others.
func (h *usageHarness) tickReads() (totals, others int) {
	before := len(h.fu.asked)
	h.tick()
	for _, a := range h.fu.asked[before:] {
		if isTotal(a) {
			totals++
		} else {
			others++
		}
	}
	return totals, others
}

// TestUsageTotalsReadOncePerPeriod: the nodes' totals are read at the
// first tick, not in the ticks after it, and then once an hour, each
// service at its own minute of the hour: first between half an hour and
// an hour and a half after the first read, then exactly an hour apart;
// the other series are read every interval.
func TestUsageTotalsReadOncePerPeriod(t *testing.T) {
	const n = 40
	h := newTotalsHarness(t, n, usageSettings{})
	if totals, others := h.tickReads(); totals != 2*n || others != n {
		t.Fatalf("first tick: %d total reads and %d others, want %d and %d", totals, others, 2*n, n)
	}
	start := h.clock.Now()
	reads := map[string][]time.Duration{} // by service: when its CPU total was read
	for tick := 1; tick <= 36; tick++ {
		h.clock.Advance(5 * time.Minute)
		before := len(h.fu.asked)
		totals, others := h.tickReads()
		if others != n {
			t.Fatalf("tick %d: %d reads of the node series, want %d", tick, others, n)
		}
		if tick <= 5 && totals != 0 {
			t.Errorf("tick %d (%s): %d total reads, want none within half an hour of the first", tick, h.clock.Now().Sub(start), totals)
		}
		cpu, mem := 0, 0
		for _, a := range h.fu.asked[before:] {
			id, name, _ := strings.Cut(a, "/")
			switch "_" + strings.TrimPrefix(name, "x_") {
			case apiclient.SeriesCPUTotal:
				cpu++
				reads[id] = append(reads[id], h.clock.Now().Sub(start))
			case apiclient.SeriesMemoryTotal:
				mem++
			}
		}
		if cpu != mem {
			t.Errorf("tick %d: %d CPU totals and %d memory totals read, want them together", tick, cpu, mem)
		}
	}
	firstTicks := map[time.Duration]bool{}
	for i := range n {
		id := fmt.Sprintf("svc%02d", i)
		at := reads[id]
		if len(at) == 0 || at[0] < 30*time.Minute || at[0] > 90*time.Minute {
			t.Errorf("%s: totals read again at %v, want first between 30m and 1h30m", id, at[:min(len(at), 4)])
			continue
		}
		firstTicks[at[0]] = true
		for j := 1; j < len(at); j++ {
			if at[j]-at[j-1] != time.Hour {
				t.Errorf("%s: totals read at %v, want an hour apart", id, at)
			}
		}
		if want := int((3*time.Hour-at[0])/time.Hour) + 1; len(at) != want {
			t.Errorf("%s: totals read at %v, want %d times in 3 hours", id, at, want)
		}
	}
	if len(firstTicks) < 6 {
		t.Errorf("the %d services' totals first fell due in %d ticks only: not staggered", n, len(firstTicks))
	}
}

// TestUsageTotalsCallsPerInterval: with the 15 documented series, a usage
// interval's series reads drop from 15 to 13 a service, plus each
// service's two totals once an hour.
func TestUsageTotalsCallsPerInterval(t *testing.T) {
	const n = 100
	h := newTotalsHarness(t, n, usageSettings{Series: documentedSeries})
	// calls runs a tick and counts its series reads and available-series reads.
	calls := func() (series, avail int) {
		before, avail := len(h.fu.asked), h.fu.calls[apiclient.OpGetServiceMetricsAvailableSeries]
		h.tick()
		return len(h.fu.asked) - before, h.fu.calls[apiclient.OpGetServiceMetricsAvailableSeries] - avail
	}
	if series, avail := calls(); series != 15*n || avail != n {
		t.Fatalf("first interval: %d series and %d available-series reads, want %d and %d", series, avail, 15*n, n)
	}
	for tick := 1; tick <= 5; tick++ {
		h.clock.Advance(5 * time.Minute)
		if series, avail := calls(); series+avail != 13*n {
			t.Errorf("interval %d: %d calls, want %d (15 a service before)", tick, series+avail, 13*n)
		}
	}
	// From 70 minutes on, every service's totals are read once in any 12
	// intervals in a row (the available series' hourly reads apart).
	for range 8 {
		h.clock.Advance(5 * time.Minute)
		calls()
	}
	sum := 0
	for range 12 {
		h.clock.Advance(5 * time.Minute)
		series, _ := calls()
		sum += series
	}
	if want := 12*13*n + 2*n; sum != want {
		t.Errorf("12 intervals: %d series reads, want %d (%d before)", sum, want, 12*15*n)
	}
	t.Logf("%d services: %d series reads an interval from the 2nd, %d in 12 intervals (before: %d and %d)", n, 13*n, sum, 15*n, 12*15*n)
}

// TestUsageTotalsNeededSteady: the calls a refresh needs, which the
// budget's round-robin and its WARN go by, stay level across the hour
// after the start: the totals fall due a few services a tick, not all in
// one tick an hour after the first read.
func TestUsageTotalsNeededSteady(t *testing.T) {
	const n = 600
	h := newTotalsHarness(t, n, usageSettings{})
	h.tick()
	lo, hi := 2*n, 0
	for tick := 1; tick <= 36; tick++ {
		h.clock.Advance(5 * time.Minute)
		now := h.clock.Now()
		pl := h.u.plan(h.u.sel.selected(h.host.Snapshot()), now, -1)
		// The available series' hourly reads are apart: they are not
		// the totals.
		due := pl.needed - len(pl.availReads) - n
		if tick >= 7 {
			lo, hi = min(lo, due), max(hi, due)
		}
		h.tick()
	}
	// 1,200 totals an hour: 100 a tick on average, and within half of it.
	if avg := 2 * n / 12; lo < avg/2 || hi > avg*3/2 {
		t.Errorf("from 35 minutes to 3 hours, %d to %d totals due a tick, want %d to %d", lo, hi, avg/2, avg*3/2)
	}
}

// TestUsageTotalsEveryIntervalWhen: with sample timestamps on (an hour-old
// timestamp goes stale in Prometheus) or with no other node series
// selected (the totals then are the nodes' only fresh bucket), the totals
// are read every interval, as all series are.
func TestUsageTotalsEveryIntervalWhen(t *testing.T) {
	for name, usage := range map[string]usageSettings{
		"timestamps":  {Timestamps: true},
		"totals only": {Series: []string{"system_cpu_total_millicores", "system_memory_total_bytes", "database_job_success"}},
	} {
		h := newTotalsHarness(t, 3, usage)
		for tick := range 4 {
			if totals, _ := h.tickReads(); totals != 6 {
				t.Errorf("%s: tick %d read %d totals, want 6", name, tick, totals)
			}
			h.clock.Advance(5 * time.Minute)
		}
	}
}

// TestUsageTotalsReadTheirNewestBuckets: a total read an hour after the
// last asks for an interval and the lag, not the hour between: only its
// newest bucket is exported, and the catch-up of the other series (whose
// buckets feed rightsizing) would bring 60 buckets instead of 7.
func TestUsageTotalsReadTheirNewestBuckets(t *testing.T) {
	h := newTotalsHarness(t, 1, usageSettings{})
	h.tick()
	window := h.u.cfg.Interval + usageWindowSlack + time.Minute
	for range 24 {
		h.clock.Advance(5 * time.Minute)
		before := len(h.fu.froms["x"+apiclient.SeriesCPUTotal])
		h.tick()
		froms := h.fu.froms["x"+apiclient.SeriesCPUTotal]
		for _, from := range froms[before:] {
			if back := h.clock.Now().Sub(from); back > window {
				t.Fatalf("at %s a total was read from %s back, want at most %s", h.clock.Now().Format("15:04"), back, window)
			}
		}
	}
	if n := len(h.fu.froms["x"+apiclient.SeriesCPUTotal]); n < 2 {
		t.Fatalf("the CPU total was read %d times in two hours, want its refresh", n)
	}
}

// TestUsageTotalsDueForAMissingNode: a total whose answer lacked a node
// that another of the service's node series has (its one bucket lost) is
// read again at the next interval, not an hour later: every node exports
// its size.
func TestUsageTotalsDueForAMissingNode(t *testing.T) {
	h := newTotalsHarness(t, 1, usageSettings{})
	now := h.clock.Now().Truncate(time.Minute)
	nodes := func(ordinals ...string) []apiclient.Series {
		var out []apiclient.Series
		for _, o := range ordinals {
			role := "replica"
			if o == "0" {
				role = "primary"
			}
			out = append(out, apiclient.Series{Labels: apiclient.SeriesLabels{"role": role, "ordinal": o}, Data: []apiclient.SeriesPoint{point(now, f64(1000))}})
		}
		return out
	}
	h.fu.series["x"+apiclient.SeriesCPUUsage] = nodes("0", "1")
	h.fu.series["x"+apiclient.SeriesCPUTotal] = nodes("0", "1")
	h.fu.series["x"+apiclient.SeriesMemoryTotal] = nodes("0") // node 1's bucket lost
	h.tick()
	h.fu.series["x"+apiclient.SeriesMemoryTotal] = nodes("0", "1")
	h.clock.Advance(5 * time.Minute)
	before := len(h.fu.asked)
	h.tick()
	var read []string
	for _, a := range h.fu.asked[before:] {
		if isTotal(a) {
			read = append(read, a)
		}
	}
	if len(read) != 1 || !strings.HasSuffix(read[0], apiclient.SeriesMemoryTotal) {
		t.Fatalf("second tick read the totals %v, want the memory total alone (it lacked node 1)", read)
	}
	got := h.u.services["svc00"].pub.Series(slices.Index(h.u.suffixes, apiclient.SeriesMemoryTotal))
	if len(got) != 2 {
		t.Errorf("the memory total has %d nodes after its read again, want 2", len(got))
	}
}
