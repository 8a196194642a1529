package rightsizing

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/internal/fakeclock"
	"github.com/clouddb/clouddb_exporter/pricing"
)

const gib = 1 << 30

var start = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

func testConfig(t *testing.T) Config {
	t.Helper()
	sizes, err := ParseSizes(DefaultSizes)
	if err != nil {
		t.Fatal(err)
	}
	return Config{Window: DefaultWindow, Headroom: DefaultHeadroom, MinCoverage: DefaultMinCoverage, Sizes: sizes}
}

// usage is a service's CPU (millicores) and memory (bytes) in minute i.
type usage func(i int) (cpu, mem float64)

// feed adds the minutes [from, to) after start, a day per call as a reader
// would read them, and moves the clock to the end of the last one.
func feed(tr *Tracker, clock *fakeclock.Clock, key string, from, to int, u usage) {
	for day := from; day < to; day += 1440 {
		var times []time.Time
		var cpu, mem []float64
		for i := day; i < min(day+1440, to); i++ {
			c, m := u(i)
			times = append(times, start.Add(time.Duration(i)*time.Minute))
			cpu, mem = append(cpu, c), append(mem, m)
		}
		tr.Add(key, times, cpu, mem)
	}
	clock.Advance(start.Add(time.Duration(to) * time.Minute).Sub(clock.Now()))
}

const days14 = 14 * 1440

func steady(cpu, mem float64) usage { return func(int) (float64, float64) { return cpu, mem } }

// daily is busy (cpu, mem) for busyMinutes at the start of each day, idle
// the rest: the peaks between reads a newest-bucket reading would miss.
func daily(busyMinutes int, busyCPU, busyMem, idleCPU, idleMem float64) usage {
	return func(i int) (float64, float64) {
		if i%1440 < busyMinutes {
			return busyCPU, busyMem
		}
		return idleCPU, idleMem
	}
}

// TestRecommend: the findings the usage's shape dictates on the default
// ladder: CPU at its 95th percentile and memory at its peak, both plus 15%.
func TestRecommend(t *testing.T) {
	for _, c := range []struct {
		name    string
		current pricing.Size
		u       usage
		minutes int
		want    string
		size    pricing.Size
	}{
		// 300m and 3 GiB need 345m and 3.45 GiB: 1000/4.
		{"oversized", pricing.Size{CPUMillis: 4000, MemoryGBs: 16}, steady(300, 3*gib), days14, OverProvisioned, pricing.Size{CPUMillis: 1000, MemoryGBs: 4}},
		// 950m and 3.8 GiB need 1093m and 4.37 GiB: 2000/8.
		{"undersized", pricing.Size{CPUMillis: 1000, MemoryGBs: 4}, steady(950, 3.8*gib), days14, UnderProvisioned, pricing.Size{CPUMillis: 2000, MemoryGBs: 8}},
		{"fits", pricing.Size{CPUMillis: 2000, MemoryGBs: 8}, steady(1200, 5*gib), days14, Optimal, pricing.Size{CPUMillis: 2000, MemoryGBs: 8}},
		// Busy 2 hours a day (8% of the minutes): the 95th percentile is busy.
		{"daily peaks above the 95th percentile", pricing.Size{CPUMillis: 1000, MemoryGBs: 4}, daily(120, 3000, 3*gib, 100, 1*gib), days14, UnderProvisioned, pricing.Size{CPUMillis: 4000, MemoryGBs: 16}},
		// Busy one hour a day (4%): CPU sized on the idle minutes, memory on the peak.
		{"daily peaks below the 95th percentile", pricing.Size{CPUMillis: 4000, MemoryGBs: 16}, daily(60, 3000, 3*gib, 100, 1*gib), days14, OverProvisioned, pricing.Size{CPUMillis: 1000, MemoryGBs: 4}},
		// Memory alone needs more: 7.5 GiB peak, 8.6 with headroom.
		{"memory decides", pricing.Size{CPUMillis: 2000, MemoryGBs: 8}, steady(400, 7.5*gib), days14, UnderProvisioned, pricing.Size{CPUMillis: 4000, MemoryGBs: 16}},
		// Beyond the ladder: its largest size, under-provisioned.
		{"beyond the ladder", pricing.Size{CPUMillis: 32000, MemoryGBs: 64}, steady(31000, 60*gib), days14, UnderProvisioned, pricing.Size{CPUMillis: 32000, MemoryGBs: 128}},
		{"half the window", pricing.Size{CPUMillis: 4000, MemoryGBs: 16}, steady(300, 3*gib), days14 / 2, InsufficientData, pricing.Size{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := fakeclock.New(start)
			tr := NewTracker(testConfig(t), clock.Now)
			feed(tr, clock, "s", 0, c.minutes, c.u)
			r := tr.recommend("s", c.current)
			if r.Finding != c.want || r.Size != c.size {
				t.Errorf("%s %s (CPU need %.0f, memory need %.2f GiB, coverage %.2f); want %s %s", r.Finding, r.Size, r.CPUNeed, r.MemoryNeed/gib, r.Coverage, c.want, c.size)
			}
		})
	}
}

func TestPercentileWithinItsBucket(t *testing.T) {
	clock := fakeclock.New(start)
	tr := NewTracker(testConfig(t), clock.Now)
	feed(tr, clock, "s", 0, days14, func(i int) (float64, float64) { return float64(i % 1000), gib })
	got, ok := tr.windowOf("s").CPUPercentile(clock.Now(), DefaultWindow, 0.95)
	if !ok || got < 950/cpuRatio || got > 950*cpuRatio {
		t.Errorf("95th percentile of 0..999 = %v (%v); want 950 within a bucket's 20%%", got, ok)
	}
}

// TestWindowMoves: what happened more than the window ago is forgotten, a
// slot at a time.
func TestWindowMoves(t *testing.T) {
	clock := fakeclock.New(start)
	tr := NewTracker(testConfig(t), clock.Now)
	small := pricing.Size{CPUMillis: 500, MemoryGBs: 2}
	feed(tr, clock, "s", 0, days14, steady(3000, 10*gib))
	if r := tr.recommend("s", small); r.Finding != UnderProvisioned {
		t.Fatalf("busy fortnight: %s %s", r.Finding, r.Size)
	}
	feed(tr, clock, "s", days14, 2*days14+1440, steady(200, gib))
	if r := tr.recommend("s", small); r.Finding != Optimal {
		t.Errorf("a quiet fortnight later: %s %s (coverage %.2f); want optimal", r.Finding, r.Size, r.Coverage)
	}
	// No reads for a whole window: too little left to say anything.
	clock.Advance(DefaultWindow)
	if r := tr.recommend("s", small); r.Finding != InsufficientData || r.Coverage != 0 {
		t.Errorf("after a window without data: %s, coverage %v", r.Finding, r.Coverage)
	}
}

// TestOverlappingReadsCountOnce: a bucket read again (overlapping reads, a
// retry) adds nothing; an empty bucket adds no minute.
func TestOverlappingReadsCountOnce(t *testing.T) {
	clock := fakeclock.New(start)
	tr := NewTracker(testConfig(t), clock.Now)
	feed(tr, clock, "s", 0, 1440, steady(100, gib))
	feed(tr, clock, "s", 0, 1440, steady(9000, 90*gib))
	tr.Add("s", []time.Time{clock.Now()}, []float64{math.NaN()}, []float64{math.NaN()})
	w := tr.windowOf("s")
	// The window kept: six slots of two days and the current one so far.
	if cov := w.Coverage(clock.Now(), DefaultWindow, 0); cov != 1.0/13 {
		t.Errorf("coverage %v after a day read twice; want 1 day of 13", cov)
	}
	if peak := w.MemoryPeak(clock.Now(), DefaultWindow); peak != gib {
		t.Errorf("memory peak %v; the second read of the same buckets counted", peak)
	}
}

// TestStateRoundTrip: a restart that reads the saved state recommends the
// same; a state saved with another window is not read.
func TestStateRoundTrip(t *testing.T) {
	clock := fakeclock.New(start)
	cfg := testConfig(t)
	tr := NewTracker(cfg, clock.Now)
	feed(tr, clock, "p/oversized", 0, days14, daily(120, 700, 3*gib, 200, 2*gib))
	feed(tr, clock, "q/undersized", 0, days14, steady(1900, 7*gib))
	b, err := tr.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	restarted := NewTracker(cfg, clock.Now)
	if err := restarted.UnmarshalBinary(b); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"p/oversized", "q/undersized"} {
		cur := pricing.Size{CPUMillis: 2000, MemoryGBs: 8}
		if before, after := tr.recommend(key, cur), restarted.recommend(key, cur); before != after {
			t.Errorf("%s: %+v before the restart, %+v after", key, before, after)
		}
	}
	if len(b) > Size {
		t.Errorf("%d bytes saved for two services; the windows deflate", len(b))
	}
	other := cfg
	other.Window = time.Hour
	if err := NewTracker(other, clock.Now).UnmarshalBinary(b); !errors.Is(err, ErrOtherWindow) {
		t.Errorf("another window: %v; want ErrOtherWindow", err)
	}
	for _, cut := range []int{1, len(b) / 2, len(b) - 1} {
		if err := NewTracker(cfg, clock.Now).UnmarshalBinary(b[:cut]); err == nil {
			t.Errorf("a state cut at %d of %d bytes was read", cut, len(b))
		}
	}
	tr.RemoveProject("p")
	if tr.Len() != 1 || tr.windowOf("q/undersized") == nil {
		t.Errorf("%d windows after removing one's project", tr.Len())
	}
}

func TestSavingPerHour(t *testing.T) {
	table, err := pricing.Parse([]byte("currency: USD\neffective_date: 2026-11-01\ncompute:\n  us-east-1: {\"1000/4\": 0.09, \"4000/16\": 0.36}\nha_replica: 1.0\n"))
	if err != nil {
		t.Fatal(err)
	}
	big, small := pricing.Size{CPUMillis: 4000, MemoryGBs: 16}, pricing.Size{CPUMillis: 1000, MemoryGBs: 4}
	for _, c := range []struct {
		cur, rec pricing.Size
		ha       int
		want     float64
		ok       bool
	}{
		{big, small, 0, 0.27, true},
		{big, small, 1, 0.54, true}, // the HA replica follows its primary
		{small, big, 0, -0.27, true},
		{small, pricing.Size{CPUMillis: 2000, MemoryGBs: 8}, 0, 0, false},
	} {
		got, ok := SavingPerHour(table, "us-east-1", c.cur, c.rec, c.ha)
		if got != c.want || ok != c.ok {
			t.Errorf("%s -> %s with %d HA: %v %v; want %v %v", c.cur, c.rec, c.ha, got, ok, c.want, c.ok)
		}
	}
}

func TestSettings(t *testing.T) {
	for _, bad := range []string{"", "500/2,500/4", "1000/4,500/8", "1000/x"} {
		if _, err := ParseSizes(bad); err == nil {
			t.Errorf("ladder %q accepted", bad)
		}
	}
	cfg := testConfig(t)
	for _, c := range []struct {
		change func(*Config)
		flag   string
	}{
		{func(c *Config) { c.Window = 6 * time.Minute }, "--rightsizing.window"},
		{func(c *Config) { c.Headroom = -0.1 }, "--rightsizing.headroom"},
		{func(c *Config) { c.MinCoverage = 0 }, "--rightsizing.min-coverage"},
	} {
		bad := cfg
		c.change(&bad)
		if err := bad.Check(); err == nil || !strings.HasPrefix(err.Error(), c.flag) {
			t.Errorf("%v; want an error naming %s", err, c.flag)
		}
	}
	if err := cfg.Check(); err != nil {
		t.Error(err)
	}
}

func series(role, ordinal string, from time.Time, values ...float64) apiclient.Series {
	s := apiclient.Series{Labels: apiclient.SeriesLabels{"role": role, "ordinal": ordinal}}
	for i, v := range values {
		p := apiclient.SeriesPoint{Time: apiclient.Time{Time: from.Add(time.Duration(i) * time.Minute)}}
		if !math.IsNaN(v) {
			p.Value = apiclient.NullableFloat{Value: v, Valid: true}
		}
		s.Data = append(s.Data, p)
	}
	return s
}

// TestAddSeries: the primary's CPU and memory buckets, read in separate
// calls, each count; an HA replica's, an empty bucket and another series do
// not; overlapping reads count a bucket once.
func TestAddSeries(t *testing.T) {
	clock := fakeclock.New(start)
	tr := NewTracker(testConfig(t), clock.Now)
	nan := math.NaN()
	tr.AddSeries("p", "s", apiclient.SeriesCPUUsage, []apiclient.Series{
		series("primary", "0", start, 100, nan, 300, 200),
		series("replica", "1", start, 9000, 9000, 9000, 9000),
	})
	tr.AddSeries("p", "s", apiclient.SeriesCPUUsage, []apiclient.Series{series("primary", "0", start.Add(2*time.Minute), 300, 200, 100)})
	tr.AddSeries("p", "s", apiclient.SeriesMemoryUsage, []apiclient.Series{
		series("primary", "0", start, gib, 2*gib, nan),
		series("replica", "1", start, 50*gib),
	})
	tr.AddSeries("p", "s", apiclient.SeriesDiskUsage, []apiclient.Series{series("primary", "0", start, 1e15)})
	clock.Advance(5 * time.Minute)
	w := tr.windowOf("s")
	slotLen := DefaultWindow / Slots
	minutes := 0
	w.live(clock.Now(), slotLen, func(i int) { minutes += w.minutes(i) })
	if minutes != 4 {
		t.Errorf("%d minutes covered; want 4 (100, 300, 200 and the later 100)", minutes)
	}
	if p95, _ := w.CPUPercentile(clock.Now(), DefaultWindow, 1); p95 > 300*cpuRatio {
		t.Errorf("largest CPU %v; an HA replica's 9000 counted", p95)
	}
	if peak := w.MemoryPeak(clock.Now(), DefaultWindow); peak != 2*gib {
		t.Errorf("memory peak %v; want 2 GiB, the primary's", peak)
	}
}

// TestAddSeriesAnyOrderAnyOrdinal: the API promises no order of a series'
// buckets, and a replaced primary node has another ordinal: a newest-first
// answer counts every bucket, and the primary counts whatever its ordinal.
func TestAddSeriesAnyOrderAnyOrdinal(t *testing.T) {
	clock := fakeclock.New(start)
	tr := NewTracker(testConfig(t), clock.Now)
	s := series("primary", "3", start, 100, 200, 300, 400)
	slices.Reverse(s.Data)
	tr.AddSeries("p", "s", apiclient.SeriesCPUUsage, []apiclient.Series{s})
	clock.Advance(5 * time.Minute)
	w := tr.windowOf("s")
	if w == nil {
		t.Fatal("no window for a primary at ordinal 3")
	}
	minutes := 0
	w.live(clock.Now(), DefaultWindow/Slots, func(i int) { minutes += w.minutes(i) })
	if minutes != 4 {
		t.Errorf("%d minutes covered; want the 4 buckets of a newest-first answer", minutes)
	}
}
