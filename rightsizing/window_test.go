package rightsizing

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"
)

// TestWindowSizeClass: a window fits the heap's 256-byte size class, the
// most of the ~350 bytes a service may keep (the map's entry and key take
// the rest).
func TestWindowSizeClass(t *testing.T) {
	if s := unsafe.Sizeof(Window{}); s > 256 || Size > 256 {
		t.Errorf("a window takes %d bytes in memory, %d saved; want at most 256", s, Size)
	}
}

// refPercentile is the q-quantile of values in the 40 buckets of the whole
// range, interpolated within its bucket: what a window gives when no minute
// falls below its slot's range.
func refPercentile(values []float64, q float64) float64 {
	var counts [cpuBuckets]int
	for _, v := range values {
		counts[cpuBucket(v)]++
	}
	rank := q * float64(len(values))
	seen := 0.0
	for i, c := range counts {
		if c > 0 && seen+float64(c) >= rank {
			lo, hi := bucketBounds(i)
			return lo + (hi-lo)*(rank-seen)/float64(c)
		}
		seen += float64(c)
	}
	_, hi := bucketBounds(cpuBuckets - 1)
	return hi
}

// fill adds values one a minute from start, and returns the time after the
// last.
func fill(w *Window, slotLen time.Duration, values []float64, mem func(i int) float64) time.Time {
	at := start
	for i, v := range values {
		w.AddCPU(at, slotLen, v)
		w.AddMemory(at, slotLen, mem(i))
		at = at.Add(time.Minute)
	}
	return at
}

// TestPercentileAsBefore: a spread within a slot's range (its highest value
// less than 1.2^12 times its 95th percentile) gives the 95th percentile of
// the whole range's buckets, whatever the order of the minutes (rising:
// the range rebased at each new highest bucket), and the exact peak.
func TestPercentileAsBefore(t *testing.T) {
	const window = 7 * 24 * time.Hour // slots of a day
	r := rand.New(rand.NewPCG(1, 2))
	spread := make([]float64, 5*1440)
	for i := range spread {
		spread[i] = 300 + 2000*r.Float64() // 300..2300: 8.4 buckets
	}
	rising := make([]float64, 5*1440)
	for i := range rising {
		rising[i] = 50 + float64(i%1440)*0.3 // 50..482, rising through each day
	}
	for name, values := range map[string][]float64{"random": spread, "rising": rising} {
		var w Window
		now := fill(&w, window/Slots, values, func(i int) float64 { return float64(i%1000) * gib })
		for _, q := range []float64{0.5, 0.95, 1} {
			got, ok := w.CPUPercentile(now, window, q)
			if want := refPercentile(values, q); !ok || math.Abs(got-want) > 1e-9*want {
				t.Errorf("%s: %g-quantile %v (%v); want %v, as with every bucket kept", name, q, got, ok, want)
			}
		}
		if peak := w.MemoryPeak(now, window); peak != 999*gib {
			t.Errorf("%s: memory peak %v; want %v", name, peak, 999.0*gib)
		}
	}
}

// TestPercentileBelowTheRange: a 95th percentile more than the range below
// its slot's highest bucket comes out higher, within the range's lowest
// bucket, never lower than with every bucket kept.
func TestPercentileBelowTheRange(t *testing.T) {
	const window = 7 * 24 * time.Hour
	values := make([]float64, 3*1440)
	for i := range values {
		values[i] = 20 + float64(i%7) // idle: 20..26m
		if i%1440 < 60 {
			values[i] = 4000 // an hour a day: 4%
		}
	}
	var w Window
	now := fill(&w, window/Slots, values, func(int) float64 { return gib })
	got, ok := w.CPUPercentile(now, window, 0.95)
	want := refPercentile(values, 0.95)
	lowest := cpuBucket(4000) - (slotBuckets - 1)
	_, bound := bucketBounds(lowest)
	if !ok || got < want || got > bound {
		t.Errorf("95th percentile %v (%v); want between %v (every bucket kept) and %v (the range's lowest bucket's bound)", got, ok, want, bound)
	}
	if p100, _ := w.CPUPercentile(now, window, 1); p100 != refPercentile(values, 1) {
		t.Errorf("highest %v; want %v", p100, refPercentile(values, 1))
	}
}

// TestRebase: a higher bucket moves the slot's range up; the minutes below
// the new range count in its lowest bucket, none is lost.
func TestRebase(t *testing.T) {
	const window = 7 * time.Hour // slots of an hour
	slotLen := window / Slots
	for v, b := range map[float64]int{100: 4, 500: 13, 1000: 17, 30000: 36, 100000: cpuBuckets - 1} {
		if cpuBucket(v) != b {
			t.Fatalf("%v in bucket %d; the test expects %d", v, cpuBucket(v), b)
		}
	}
	var w Window
	at := start
	add := func(values ...float64) {
		for _, v := range values {
			w.AddCPU(at, slotLen, v)
			at = at.Add(time.Minute)
		}
	}
	i := w.slotAt(start, slotLen)
	check := func(top int, want [slotBuckets]uint16, minutes int) {
		t.Helper()
		if int(w.top[i]) != top || w.cpu[i] != want || w.minutes(i) != minutes {
			t.Errorf("highest bucket %d, counts %v, %d minutes; want %d, %v, %d", w.top[i], w.cpu[i], w.minutes(i), top, want, minutes)
		}
	}
	add(100, 500)
	check(13, [slotBuckets]uint16{3: 1, 12: 1}, 2) // buckets 1..13
	add(1000)
	check(17, [slotBuckets]uint16{0: 1, 8: 1, 12: 1}, 3) // 5..17: 100 below, in 5
	add(100000, 30000, 100)
	check(cpuBuckets-1, [slotBuckets]uint16{0: 4, 9: 1, 12: 1}, 6) // 27..39
}

// TestOlderStateRefused: a state of the previous layout (version 1) is not
// read: the windows fill again.
func TestOlderStateRefused(t *testing.T) {
	cfg := testConfig(t)
	old := binary.AppendUvarint(nil, 1)
	old = binary.AppendUvarint(old, uint64(cfg.Window))
	old = binary.AppendUvarint(old, 1)
	old = binary.AppendUvarint(old, 3)
	old = append(old, "p/s"...)
	old = append(old, make([]byte, Slots*(8+2+4+2*40)+16)...)
	var buf bytes.Buffer
	zw, _ := flate.NewWriter(&buf, flate.BestSpeed)
	if _, err := zw.Write(old); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	tr := NewTracker(cfg, time.Now)
	if err := tr.UnmarshalBinary(buf.Bytes()); !errors.Is(err, ErrOtherWindow) {
		t.Errorf("a version 1 state: %v; want ErrOtherWindow", err)
	}
	if tr.Len() != 0 {
		t.Errorf("%d windows read from a version 1 state", tr.Len())
	}
}

// TestWindowRoundTrip: a window read back is the same, and a saved slot
// naming a bucket beyond the last is refused.
func TestWindowRoundTrip(t *testing.T) {
	var w Window
	values := make([]float64, 3000)
	for i := range values {
		values[i] = float64(i * 7 % 5000)
	}
	fill(&w, time.Hour, values, func(i int) float64 { return float64(i) * 1e6 })
	b, err := w.MarshalBinary()
	if err != nil || len(b) != Size {
		t.Fatalf("%d bytes, %v; want %d", len(b), err, Size)
	}
	var back Window
	if err := back.UnmarshalBinary(b); err != nil || back != w {
		t.Errorf("read back: %v, equal %v", err, back == w)
	}
	b[8+8] = cpuBuckets // the first slot's highest bucket
	if err := back.UnmarshalBinary(b); err == nil {
		t.Error("a slot's highest bucket beyond the last was read")
	}
}
