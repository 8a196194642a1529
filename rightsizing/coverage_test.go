package rightsizing

import (
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/fakeclock"
	"github.com/clouddb/clouddb_exporter/pricing"
)

var demoSize = pricing.Size{CPUMillis: 500, MemoryGBs: 2}

// apiLag is how far the API's newest closed bucket lags its clock: a bucket
// has a value once it ended a minute ago (the simulator's, and the spec's
// "at least one bucket").
const apiLag = 2 * time.Minute

// readAPI adds what a usage read at now starting at from returns: every
// closed 1-minute bucket, each with a value.
func readAPI(tr *Tracker, key string, from, now time.Time) {
	var times []time.Time
	var cpu, mem []float64
	for at := from.Truncate(time.Minute); !at.Add(apiLag).After(now); at = at.Add(time.Minute) {
		times = append(times, at)
		cpu, mem = append(cpu, 100), append(mem, gib)
	}
	tr.Add(key, times, cpu, mem)
}

// TestCoverageBetweenReads: the buckets that the reads could not have had
// yet (the API's lag and the time to the next read, Config.ReadLag) are not
// missing. A 30-minute window read every 5 minutes, with every bucket
// there, stays fully covered between reads; once the reads stop, the
// coverage falls a read lag later, to nothing after a window.
func TestCoverageBetweenReads(t *testing.T) {
	const every = 5 * time.Minute
	cfg := testConfig(t)
	cfg.Window, cfg.ReadLag = 30*time.Minute, every+apiLag
	clock := fakeclock.New(start.Add(17 * time.Second))
	tr := NewTracker(cfg, clock.Now)
	readAPI(tr, "s", clock.Now().Add(-cfg.Window), clock.Now()) // the first read backfills the window
	lowest := 1.0
	var last time.Time
	for range 24 { // two hours
		last = clock.Now()
		for range every / (10 * time.Second) {
			r := tr.recommend("s", demoSize)
			lowest = min(lowest, r.Coverage)
			clock.Advance(10 * time.Second)
		}
		readAPI(tr, "s", last.Add(-apiLag), clock.Now())
	}
	if lowest < 1 {
		t.Errorf("coverage %.3f between reads of every bucket; want 1", lowest)
	}

	// The reads stop: when the next was due nothing is missing yet, ten
	// minutes later a third of the window is.
	clock.Advance(every)
	if r := tr.recommend("s", demoSize); r.Coverage < 1 {
		t.Errorf("coverage %.3f when the next read is due; want 1", r.Coverage)
	}
	clock.Advance(10 * time.Minute)
	if r := tr.recommend("s", demoSize); r.Finding != InsufficientData || r.Coverage > 0.7 {
		t.Errorf("fifteen minutes without reads: %s, coverage %.3f; want insufficient data, at most 0.7", r.Finding, r.Coverage)
	}
	clock.Advance(cfg.Window)
	if r := tr.recommend("s", demoSize); r.Coverage != 0 {
		t.Errorf("a window without reads: coverage %.3f; want 0", r.Coverage)
	}
}

// TestCoverageDefaultWindow: with the default window the read lag changes
// the coverage by minutes of two weeks: a day without reads still shows.
func TestCoverageDefaultWindow(t *testing.T) {
	cfg := testConfig(t)
	cfg.ReadLag = 5*time.Minute + apiLag
	clock := fakeclock.New(start)
	tr := NewTracker(cfg, clock.Now)
	feed(tr, clock, "s", 0, days14, steady(100, gib))
	before := tr.recommend("s", demoSize).Coverage
	if before < 1 {
		t.Errorf("coverage %.3f right after reading every bucket; want 1", before)
	}
	clock.Advance(24 * time.Hour)
	// The window is six slots of two days and the current one so far: at
	// most 14 days, of which the day less the read lag is missing.
	if after, most := tr.recommend("s", demoSize).Coverage, 1-(1440-7)/float64(days14); after > most {
		t.Errorf("coverage %.4f after a day without reads; want at most %.4f", after, most)
	}
}

// TestReadBeyondTheWindow: a read reaching back further than the window (a
// first read's backfill, from before the oldest slot) keeps every bucket of
// the window, whichever series comes first: a bucket of a slot the window
// has dropped must not empty the newer slot kept in its place.
func TestReadBeyondTheWindow(t *testing.T) {
	cfg := testConfig(t)
	cfg.Window, cfg.ReadLag = 30*time.Minute, 7*time.Minute
	for _, cpuFirst := range []bool{true, false} {
		clock := fakeclock.New(start.Add(17 * time.Second))
		tr := NewTracker(cfg, clock.Now)
		var times []time.Time
		var cpu, mem []float64
		for at := clock.Now().Add(-cfg.Window - apiLag).Truncate(time.Minute); !at.Add(apiLag).After(clock.Now()); at = at.Add(time.Minute) {
			times = append(times, at)
			cpu, mem = append(cpu, 100), append(mem, float64(len(times))*gib)
		}
		if cpuFirst {
			tr.Add("s", times, cpu, mem)
		} else {
			tr.Add("s", times, nil, mem)
			tr.Add("s", times, cpu, nil)
		}
		r := tr.recommend("s", demoSize)
		peak := tr.windowOf("s").MemoryPeak(clock.Now(), cfg.Window)
		if r.Coverage != 1 || peak != mem[len(mem)-1] {
			t.Errorf("CPU first %v: coverage %.3f, memory peak %.0f GiB; want 1 and %.0f GiB, the newest bucket's", cpuFirst, r.Coverage, peak/gib, mem[len(mem)-1]/gib)
		}
	}
}
