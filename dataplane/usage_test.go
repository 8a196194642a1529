package dataplane

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/fakeclock"
)

// fakeUsage is the usage API: each service has the same series; values
// are set per series name and label set.
type fakeUsage struct {
	mu     sync.Mutex
	names  []string
	series map[string][]apiclient.Series // by name
	fail   map[string]error              // by op or op/service
	calls  map[string]int
	asked  []string               // service/name of each series read, in order
	froms  map[string][]time.Time // the From of each read, by name
	// slow makes series reads answer only when their ctx ends, as an API
	// slower than every timeout.
	slow bool
}

func newFakeUsage(names ...string) *fakeUsage {
	return &fakeUsage{names: names, series: map[string][]apiclient.Series{}, fail: map[string]error{}, calls: map[string]int{}}
}

func (f *fakeUsage) err(op, id string) error {
	f.calls[op]++
	if err := f.fail[op+"/"+id]; err != nil {
		return err
	}
	return f.fail[op]
}

func (f *fakeUsage) GetServiceMetricsAvailableSeries(_ context.Context, id string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.err(apiclient.OpGetServiceMetricsAvailableSeries, id); err != nil {
		return nil, err
	}
	return f.names, nil
}

func (f *fakeUsage) GetServiceMetricsSeries(ctx context.Context, id string, req apiclient.SeriesRequest) ([]apiclient.Series, error) {
	f.mu.Lock()
	if f.slow {
		f.mu.Unlock()
		<-ctx.Done()
		return nil, ctx.Err()
	}
	defer f.mu.Unlock()
	f.asked = append(f.asked, id+"/"+req.Name)
	if f.froms == nil {
		f.froms = map[string][]time.Time{}
	}
	f.froms[req.Name] = append(f.froms[req.Name], req.From.Time)
	if !req.From.Before(req.To.Time) || req.BucketSeconds < 60 {
		panic("bad window")
	}
	if err := f.err(apiclient.OpGetServiceMetricsSeries, id); err != nil {
		return nil, err
	}
	return f.series[req.Name], nil
}

func point(t time.Time, v *float64) apiclient.SeriesPoint {
	p := apiclient.SeriesPoint{Time: apiclient.Time{Time: t}}
	if v != nil {
		p.Value = apiclient.NullableFloat{Value: *v, Valid: true}
	}
	return p
}

type usageHarness struct {
	t     *testing.T
	clock *fakeclock.Clock
	host  *fakeHost
	fu    *fakeUsage
	u     *usageReader
	logs  *bytes.Buffer
}

func newUsageHarness(t *testing.T, services int, rateLimit float64, usage usageSettings, names ...string) *usageHarness {
	t.Helper()
	clock := fakeclock.New(time.Date(2026, 3, 1, 12, 0, 30, 0, time.UTC))
	host := newFakeHost(services)
	fu := newFakeUsage(names...)
	if usage.Interval == 0 {
		usage.Interval = 5 * time.Minute
	}
	usage.Enabled = true
	if usage.MaxJobs == 0 {
		usage.MaxJobs = defaultUsageMaxJobs
	}
	var logs bytes.Buffer
	opts := Options{Collect: withReader(config.Collect{Interval: time.Minute, Concurrency: 2}, usageKey, usage), RateLimit: rateLimit,
		Now: clock.Now, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	u := newUsageReader(newRunner(host, opts, PartUsage, usage.Interval), fu)
	u.unpaced = true
	return &usageHarness{t: t, clock: clock, host: host, fu: fu, u: u, logs: &logs}
}

func (h *usageHarness) tick() *Usage {
	h.u.tick(context.Background())
	return usageOf(h.host.Snapshot())
}

func (h *usageHarness) health() fleet.PartHealth {
	ph, ok := h.host.part(PartUsage)
	if !ok {
		h.t.Fatal("no usage part")
	}
	return ph
}

func f64(v float64) *float64 { return &v }

// askedSeries lists the series the reader keeps that were ever asked for.
func askedSeries(u *usageReader) []seriesRef {
	var out []seriesRef
	for id, svc := range u.services {
		for i, s := range svc.series {
			if s.asked != 0 {
				out = append(out, seriesRef{id, i})
			}
		}
	}
	return out
}

func TestUsageNewestNonNullBucket(t *testing.T) {
	h := newUsageHarness(t, 1, 0, usageSettings{Series: []string{"system_cpu_usage_millicores", "database_qps", "database_job_success"}},
		"acme_system_cpu_usage_millicores", "acme_database_qps", "acme_database_job_success", "acme_unknown_series")
	now := h.clock.Now().Truncate(time.Minute)
	h.fu.series["acme_system_cpu_usage_millicores"] = []apiclient.Series{
		{Labels: apiclient.SeriesLabels{"role": "primary", "ordinal": "0", "zone": "a"}, Data: []apiclient.SeriesPoint{
			point(now.Add(-3*time.Minute), f64(100)), point(now.Add(-2*time.Minute), f64(200)), point(now.Add(-time.Minute), nil), point(now, nil)}},
		{Labels: apiclient.SeriesLabels{"role": "replica", "ordinal": "1"}, Data: []apiclient.SeriesPoint{
			point(now.Add(-2*time.Minute), nil), point(now.Add(-time.Minute), nil)}}, // all null: left out
	}
	h.fu.series["acme_database_job_success"] = []apiclient.Series{
		{Labels: apiclient.SeriesLabels{"role": "primary", "ordinal": "0", "job_id": "1001"}, Data: []apiclient.SeriesPoint{point(now.Add(-time.Minute), f64(0))}},
	}
	u := h.tick()
	if h.fu.calls[apiclient.OpGetServiceMetricsAvailableSeries] != 1 || h.fu.calls[apiclient.OpGetServiceMetricsSeries] != 3 {
		t.Fatalf("calls = %v, want 1 available-series read and 3 series reads (the unknown name costs none)", h.fu.calls)
	}
	want := []UsageSample{
		{ServiceID: "svc00", Suffix: apiclient.SeriesJobSuccess, Labels: NewUsageLabels("primary", "0", "1001"), Value: 0, Bucket: now.Add(-time.Minute)},
		{ServiceID: "svc00", Suffix: apiclient.SeriesCPUUsage, Labels: NewUsageLabels("primary", "0", ""), Value: 200, Bucket: now.Add(-2 * time.Minute)},
	}
	if len(u.Samples()) != len(want) {
		t.Fatalf("samples = %+v, want %+v", u.Samples(), want)
	}
	for i := range want {
		if u.Samples()[i] != want[i] {
			t.Errorf("sample %d = %+v, want %+v", i, u.Samples()[i], want[i])
		}
	}
	if hl := h.health(); !hl.Success || hl.LastSuccess.IsZero() {
		t.Errorf("health = %+v", hl)
	}

	// A failed read keeps the last values, flagged by the part's health.
	h.clock.Advance(5 * time.Minute)
	h.fu.fail[apiclient.OpGetServiceMetricsSeries] = errBoom
	last := h.health().LastSuccess
	u = h.tick()
	if len(u.Samples()) != 2 || u.Samples()[1].Value != 200 {
		t.Errorf("after a failure: %+v, want the last values", u.Samples())
	}
	if hl := h.health(); hl.Success || !hl.LastSuccess.Equal(last) {
		t.Errorf("health after a failure = %+v", hl)
	}
	// The available series are not read again within half an hour, and
	// are by an hour and a half (the service's second of the hour).
	if n := h.fu.calls[apiclient.OpGetServiceMetricsAvailableSeries]; n != 1 {
		t.Errorf("%d available-series reads in 5 minutes, want 1", n)
	}
	h.clock.Advance(85 * time.Minute)
	delete(h.fu.fail, apiclient.OpGetServiceMetricsSeries)
	h.tick()
	if n := h.fu.calls[apiclient.OpGetServiceMetricsAvailableSeries]; n != 2 {
		t.Errorf("%d available-series reads after an hour and a half, want 2", n)
	}
}

func TestUsageSelection(t *testing.T) {
	h := newUsageHarness(t, 4, 0, usageSettings{Series: []string{"database_qps"}, Selection: config.Selection{ServiceNameRegex: "svc0[12]"}}, "x_database_qps")
	h.tick()
	slices.Sort(h.fu.asked)
	got := strings.Join(h.fu.asked, " ")
	if got != "svc01/x_database_qps svc02/x_database_qps" {
		t.Errorf("series reads %q, want svc-1 and svc-2 only", got)
	}
	h2 := newUsageHarness(t, 2, 0, usageSettings{Series: []string{"database_qps"}, Selection: config.Selection{Environments: []string{"nope"}}}, "x_database_qps")
	h2.tick()
	if len(h2.fu.asked) != 0 || h2.fu.calls[apiclient.OpGetServiceMetricsAvailableSeries] != 0 {
		t.Errorf("an environment no service has: calls %v", h2.fu.calls)
	}
}

// TestUsageSamplesByService: the samples are sorted by service id, then
// suffix, whatever the ids: "s1-a" comes after "s1", though its task key
// "s1-a/…" sorts before "s1/…" as text. The exposition chunks the samples
// by service, in this order.
func TestUsageSamplesByService(t *testing.T) {
	h := newUsageHarness(t, 2, 0, usageSettings{Series: []string{"database_qps", "database_num_connections"}}, "x_database_qps", "x_database_num_connections")
	h.host.setServices(func(list []fleet.Service) []fleet.Service {
		list[0].ServiceID, list[1].ServiceID = "s1-a", "s1"
		return list
	})
	now := h.clock.Now().Truncate(time.Minute).Add(-time.Minute)
	for _, name := range h.fu.names {
		h.fu.series[name] = []apiclient.Series{{Data: []apiclient.SeriesPoint{point(now, f64(1))}}}
	}
	var got []string
	for _, s := range h.tick().Samples() {
		got = append(got, s.ServiceID+s.Suffix)
	}
	if want := "s1_database_num_connections s1_database_qps s1-a_database_num_connections s1-a_database_qps"; strings.Join(got, " ") != want {
		t.Errorf("samples %v, want %s", got, want)
	}
}

// TestUsageSeriesSelectedTwice: a series selected twice (with and without
// its leading underscore) is read and exported once; it was read twice and
// exported twice, a duplicate sample.
func TestUsageSeriesSelectedTwice(t *testing.T) {
	h := newUsageHarness(t, 1, 0, usageSettings{Series: []string{"database_qps", "_database_qps"}}, "x_database_qps")
	now := h.clock.Now().Truncate(time.Minute).Add(-time.Minute)
	h.fu.series["x_database_qps"] = []apiclient.Series{{Data: []apiclient.SeriesPoint{point(now, f64(1))}}}
	if n := len(h.tick().Samples()); n != 1 || len(h.fu.asked) != 1 {
		t.Errorf("%d samples from %d reads, want 1 from 1", n, len(h.fu.asked))
	}
}

// TestUsagePrunesEverySeries: a service that is no longer selected leaves
// nothing behind, not even the series that were asked for and never
// answered (kept apart from the values, they once stayed for good).
func TestUsagePrunesEverySeries(t *testing.T) {
	h := newUsageHarness(t, 2, 0, usageSettings{Series: []string{"database_qps"}}, "x_database_qps")
	h.fu.fail[apiclient.OpGetServiceMetricsSeries+"/svc01"] = errBoom
	h.tick()
	if n := len(askedSeries(h.u)); n != 2 {
		t.Fatalf("%d series kept after a read of 2 services, want 2 (one failed)", n)
	}
	h.host.setServices(func(list []fleet.Service) []fleet.Service { return list[:1] })
	h.tick()
	for _, k := range askedSeries(h.u) {
		if k.serviceID == "svc01" {
			t.Errorf("series %v of a service gone is still kept", k)
		}
	}
	if h.u.services["svc01"] != nil {
		t.Error("a service gone is still kept")
	}
}

// TestUsagePublishSharesLists: a publish holds the runner's own list of
// each service's points, not a copy (every 5 seconds during a read, at
// 10,000 services a copy was 28 MB); two publishes with no read between
// them hold the same lists.
func TestUsagePublishSharesLists(t *testing.T) {
	h := newUsageHarness(t, 3, 0, usageSettings{Series: []string{"database_qps", "database_num_connections"}}, "x_database_qps", "x_database_num_connections")
	now := h.clock.Now().Truncate(time.Minute).Add(-time.Minute)
	for _, name := range h.fu.names {
		h.fu.series[name] = []apiclient.Series{
			{Labels: apiclient.SeriesLabels{"role": "primary", "ordinal": "0"}, Data: []apiclient.SeriesPoint{point(now, f64(1))}},
			{Labels: apiclient.SeriesLabels{"role": "replica", "ordinal": "1"}, Data: []apiclient.SeriesPoint{point(now, f64(2))}},
		}
	}
	first := h.tick()
	if len(first.Services) != 3 || len(first.Samples()) != 12 {
		t.Fatalf("%d services, %d samples published, want 3 and 12", len(first.Services), len(first.Samples()))
	}
	again := h.u.build(false)
	for i, svc := range first.Services {
		kept := h.u.services[svc.ID].pub.Points
		if &svc.Points[0] != &kept[0] || &again.Services[i].Points[0] != &kept[0] {
			t.Errorf("service %d (%s) was copied into the publish", i, svc.ID)
		}
	}
}

func TestUsageMaxJobs(t *testing.T) {
	h := newUsageHarness(t, 1, 0, usageSettings{Series: []string{"database_job_success", "database_job_duration_usecs"}, MaxJobs: 2},
		"x_database_job_success", "x_database_job_duration_usecs")
	now := h.clock.Now().Truncate(time.Minute).Add(-time.Minute)
	var jobs []apiclient.Series
	for _, id := range []string{"10", "9", "11", "100"} {
		jobs = append(jobs, apiclient.Series{Labels: apiclient.SeriesLabels{"job_id": id}, Data: []apiclient.SeriesPoint{point(now, f64(1))}})
	}
	h.fu.series["x_database_job_success"] = jobs
	h.fu.series["x_database_job_duration_usecs"] = jobs
	u := h.tick()
	var kept []string
	for _, s := range u.Samples() {
		kept = append(kept, s.Suffix+":"+s.Labels.JobID())
	}
	if strings.Join(kept, " ") != "_database_job_duration_usecs:9 _database_job_duration_usecs:10 _database_job_success:9 _database_job_success:10" {
		t.Errorf("kept %v, want jobs 9 and 10 of both series", kept)
	}
	if u.JobsOverLimit != 2 {
		t.Errorf("JobsOverLimit = %d, want 2 (jobs 11 and 100)", u.JobsOverLimit)
	}
}

// TestUsageHostileAnswers: label sets that differ only in labels the
// exporter does not export become one series (the newest bucket), never
// duplicates; a job series with thousands of job ids keeps at most
// max-jobs of them in memory and counts the rest.
func TestUsageHostileAnswers(t *testing.T) {
	h := newUsageHarness(t, 1, 0, usageSettings{Series: []string{"system_cpu_usage_millicores", "database_job_success"}, MaxJobs: 50},
		"x_system_cpu_usage_millicores", "x_database_job_success")
	now := h.clock.Now().Truncate(time.Minute)
	h.fu.series["x_system_cpu_usage_millicores"] = []apiclient.Series{
		{Labels: apiclient.SeriesLabels{"role": "primary", "ordinal": "0", "zone": "a"}, Data: []apiclient.SeriesPoint{point(now.Add(-2*time.Minute), f64(1))}},
		{Labels: apiclient.SeriesLabels{"role": "primary", "ordinal": "0", "zone": "b"}, Data: []apiclient.SeriesPoint{point(now.Add(-time.Minute), f64(2))}},
		{Labels: apiclient.SeriesLabels{"role": "primary", "ordinal": "0"}, Data: []apiclient.SeriesPoint{point(now.Add(-3*time.Minute), f64(3))}},
		{Labels: nil, Data: nil},
	}
	var jobs []apiclient.Series
	for i := range 5000 {
		jobs = append(jobs, apiclient.Series{Labels: apiclient.SeriesLabels{"job_id": fmt.Sprint(5000 - i)}, Data: []apiclient.SeriesPoint{point(now, f64(1))}})
	}
	h.fu.series["x_database_job_success"] = jobs
	u := h.tick()
	var cpu []UsageSample
	jobIDs := map[string]bool{}
	for _, s := range u.Samples() {
		if s.Suffix == apiclient.SeriesCPUUsage {
			cpu = append(cpu, s)
		} else {
			jobIDs[s.Labels.JobID()] = true
		}
	}
	if len(cpu) != 1 || cpu[0].Value != 2 {
		t.Errorf("cpu samples %+v, want one: the newest bucket of role=primary ordinal=0", cpu)
	}
	if len(jobIDs) != 50 || !jobIDs["1"] || !jobIDs["50"] || jobIDs["51"] {
		t.Errorf("%d jobs exported, want jobs 1 to 50", len(jobIDs))
	}
	if u.JobsOverLimit != 4950 {
		t.Errorf("JobsOverLimit = %d, want 4950", u.JobsOverLimit)
	}
	kept := 0
	for _, svc := range h.u.services {
		if svc.pub != nil {
			kept += cap(svc.pub.Points)
		}
	}
	if kept > 51 {
		t.Errorf("%d samples kept in memory, want at most 51 (max-jobs and the cpu one)", kept)
	}
}

// tickWithin runs one tick and fails the test if it has not returned
// within a generous bound: a tick must end on its own.
func (h *usageHarness) tickWithin(what string) {
	h.t.Helper()
	done := make(chan struct{})
	go func() { h.u.tick(context.Background()); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		h.t.Fatalf("%s: the usage tick did not end", what)
	}
}

// TestUsageTickEnds: a usage read ends within about two usage intervals
// whatever the API does. Calls that could not start within the interval
// (the state's calls kept going) are left for the next read, neither
// failed nor counted as asked; calls slower than that fail, and the part's
// health says so while the last values stay.
func TestUsageTickEnds(t *testing.T) {
	h := newUsageHarness(t, 2, 0, usageSettings{Series: []string{"database_qps"}}, "x_database_qps")
	now := h.clock.Now().Truncate(time.Minute)
	h.fu.series["x_database_qps"] = []apiclient.Series{{Labels: apiclient.SeriesLabels{"role": "primary", "ordinal": "0"}, Data: []apiclient.SeriesPoint{point(now, f64(7))}}}
	h.tick()
	if len(usageOf(h.host.Snapshot()).Samples()) != 2 {
		t.Fatalf("samples %+v", usageOf(h.host.Snapshot()).Samples())
	}
	// The deadlines are the context's, in real time: the reads that must
	// hit them run with a 50 ms interval, and the read that must not
	// (its calls answer at once) with the usual one, which a loaded
	// machine cannot overrun (at 50 ms it once failed these calls).
	interval := h.u.cfg.Interval
	h.u.cfg.Interval = 50 * time.Millisecond

	// A state cycle that does not end: nothing starts, nothing fails.
	asked := len(h.fu.asked)
	h.host.enter()
	h.tickWithin("state calls running")
	h.host.leave()
	if len(h.fu.asked) != asked {
		t.Errorf("series read while the state's calls ran")
	}
	if hl := h.health(); !hl.Success {
		t.Errorf("calls that did not start are failures: %+v", hl)
	}
	// They were not counted as asked: the next read has them first.
	h.u.cfg.Interval = interval
	h.tick()
	h.u.cfg.Interval = 50 * time.Millisecond
	if len(h.fu.asked) != asked+2 {
		t.Errorf("%d series reads after the state's calls ended, want 2", len(h.fu.asked)-asked)
	}

	// An API slower than every timeout: the read ends, flagged, with the
	// last values.
	h.fu.slow = true
	last := h.health().LastSuccess
	h.tickWithin("a slow API")
	if hl := h.health(); hl.Success || !hl.LastSuccess.Equal(last) {
		t.Errorf("health after slow calls = %+v", hl)
	}
	if u := usageOf(h.host.Snapshot()); len(u.Samples()) != 2 || u.Samples()[0].Value != 7 {
		t.Errorf("samples after slow calls %+v, want the last values", u.Samples())
	}
}

// TestUsageMaxStaleness: with --collect.max-staleness, a usage value whose
// refresh fails more than that after its last good read is dropped, as a
// state resource is; before, and without the flag, it stays.
func TestUsageMaxStaleness(t *testing.T) {
	for _, ms := range []time.Duration{0, 10 * time.Minute} {
		h := newUsageHarness(t, 1, 0, usageSettings{Series: []string{"database_qps"}}, "x_database_qps")
		h.u.opts.MaxStaleness = ms
		now := h.clock.Now().Truncate(time.Minute)
		h.fu.series["x_database_qps"] = []apiclient.Series{{Labels: apiclient.SeriesLabels{"role": "primary", "ordinal": "0"}, Data: []apiclient.SeriesPoint{point(now, f64(7))}}}
		h.tick()
		h.fu.fail[apiclient.OpGetServiceMetricsSeries] = errBoom
		h.clock.Advance(5 * time.Minute)
		if u := h.tick(); len(u.Samples()) != 1 {
			t.Errorf("max-staleness %s: %d samples 5 minutes into an outage, want the last one", ms, len(u.Samples()))
		}
		h.clock.Advance(6 * time.Minute)
		u := h.tick()
		if want := map[bool]int{true: 0, false: 1}[ms > 0]; len(u.Samples()) != want {
			t.Errorf("max-staleness %s: %d samples 11 minutes into an outage, want %d", ms, len(u.Samples()), want)
		}
		if h.health().Success {
			t.Errorf("max-staleness %s: the outage is not flagged", ms)
		}
	}
}
