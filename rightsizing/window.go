// Package rightsizing keeps, per service, what its primary's CPU and memory
// did over a window (--rightsizing.window) in a compact form, and turns it
// into a recommended size of a ladder, as KRR and VPA do: CPU at its 95th
// percentile, memory at its peak, both with headroom. It never resizes
// anything: a human reads the recommendation and decides.
package rightsizing

import (
	"encoding/binary"
	"errors"
	"math"
	"time"
)

// Slots is how many parts the window is kept in: the oldest part is dropped
// whole, so the window moves by window/Slots at a time.
const Slots = 7

// CPU buckets: bucket 0 holds values below cpuBase millicores, bucket i
// (1 <= i < cpuBuckets-1) [cpuBase*cpuRatio^(i-1), cpuBase*cpuRatio^i), the
// last one everything above. 20% wide: a percentile is interpolated inside
// its bucket, and the ladder's steps double.
const (
	cpuBuckets = 40
	cpuBase    = 50.0
	cpuRatio   = 1.2
)

// slotBuckets is how many CPU buckets a slot keeps: its highest bucket and
// the 12 below it, a range of 1.2^12 (8.9 times). A minute below the range
// counts in its lowest bucket: a percentile below the range comes out in
// that bucket, higher than it is but at most the bucket's upper bound, and
// none whose rank lands in the range changes (the 95th percentile, unless
// the slot's highest minute is nine times above it). 13 buckets keep a
// window in 256 bytes.
const slotBuckets = 13

// Window is one node's usage over the window, 256 bytes whatever the
// window's length: Slots parts, each with its number, the peak memory and a
// CPU histogram (counts of minutes) of the slotBuckets buckets up to its
// highest. The zero value is empty. Not safe for concurrent use.
type Window struct {
	// lastCPU and lastMemory are the Unix minutes of the newest buckets
	// added: a bucket read twice (overlapping reads) counts once.
	lastCPU, lastMemory uint32
	// n is each slot's number since the Unix epoch (time / slot length + 1);
	// 0 unused.
	n       [Slots]uint32
	memPeak [Slots]float32 // bytes
	// cpu[i][slotBuckets-1] counts the minutes of slot i in bucket top[i],
	// cpu[i][0] those in bucket top[i]-slotBuckets+1 and below.
	cpu [Slots][slotBuckets]uint16
	top [Slots]uint8
}

// Size is the bytes a Window is saved in.
const Size = 8 + Slots*(4+4+1+2*slotBuckets)

// AddCPU records the CPU use (millicores) of the closed 1-minute bucket
// starting at t, a minute of coverage; a bucket at or before the newest one
// added, or NaN (no value), is ignored.
func (w *Window) AddCPU(t time.Time, slotLen time.Duration, millis float64) {
	i := w.take(&w.lastCPU, t, slotLen, millis)
	if i < 0 {
		return
	}
	b := cpuBucket(millis)
	top := int(w.top[i])
	if b > top {
		w.rebase(i, b)
		top = b
	}
	if c := &w.cpu[i][max(b-top+slotBuckets-1, 0)]; *c < math.MaxUint16 {
		*c++
	}
}

// take returns the index of the slot that takes the bucket starting at t
// and records its minute in *last; -1 for a bucket at or before *last, NaN
// (no value), or older than the window.
func (w *Window) take(last *uint32, t time.Time, slotLen time.Duration, v float64) int {
	minute := t.Unix() / 60
	if minute <= int64(*last) || minute > math.MaxUint32 || math.IsNaN(v) {
		return -1
	}
	i := w.slotAt(t, slotLen)
	if i >= 0 {
		*last = uint32(minute)
	}
	return i
}

// rebase moves slot i's range up to end at bucket b: the counts below the
// new range join its lowest bucket.
func (w *Window) rebase(i, b int) {
	shift := b - int(w.top[i])
	var moved [slotBuckets]uint16
	for r, c := range w.cpu[i] {
		moved[max(r-shift, 0)] += c
	}
	w.cpu[i], w.top[i] = moved, uint8(b)
}

// minutes is the minutes of CPU counted in slot i: each in one bucket.
func (w *Window) minutes(i int) int {
	n := 0
	for _, c := range w.cpu[i] {
		n += int(c)
	}
	return n
}

// AddMemory records the memory use (bytes) of the bucket starting at t, as
// AddCPU does; CPU alone counts the minutes covered.
func (w *Window) AddMemory(t time.Time, slotLen time.Duration, bytes float64) {
	i := w.take(&w.lastMemory, t, slotLen, bytes)
	if i < 0 {
		return
	}
	if float32(bytes) > w.memPeak[i] {
		w.memPeak[i] = float32(bytes)
	}
}

// slotAt returns the index of the slot of t, emptied if it held an older
// part; -1 if it holds a newer one: t is older than the window (a read
// reaching back past it), and must not empty the part kept in its place.
func (w *Window) slotAt(t time.Time, slotLen time.Duration) int {
	n := slotNumber(t, slotLen)
	if n <= 0 || n > math.MaxUint32 {
		return -1
	}
	i := int(n % Slots)
	switch {
	case int64(w.n[i]) > n:
		return -1
	case int64(w.n[i]) < n:
		w.n[i], w.memPeak[i], w.cpu[i], w.top[i] = uint32(n), 0, [slotBuckets]uint16{}, 0
	}
	return i
}

func slotNumber(t time.Time, slotLen time.Duration) int64 {
	return t.UnixNano()/int64(slotLen) + 1 // 0 marks an unused slot
}

// live calls f with the index of every slot within the window ending at now.
func (w *Window) live(now time.Time, slotLen time.Duration, f func(i int)) {
	cur := slotNumber(now, slotLen)
	for i, n := range w.n {
		if n := int64(n); n > cur-Slots && n <= cur && n != 0 {
			f(i)
		}
	}
}

// Coverage is the share of the window's minutes with a value, at most 1. The
// window kept is the six slots before the current one and the current one so
// far, so that a slot starting does not look like missing data, from its
// first whole minute (a slot of a short window starts within one); and it
// ends at the newest CPU bucket added when that is less than readLag old, so
// that the buckets the reads could not have had yet (the API's lag, the time
// to the next read) do not look missing either. Older, the minutes after it
// count as missing from readLag ago on.
func (w *Window) Coverage(now time.Time, window, readLag time.Duration) float64 {
	slotLen := window / Slots
	minutes := 0
	w.live(now, slotLen, func(i int) { minutes += w.minutes(i) })
	first := time.Unix(0, (slotNumber(now, slotLen)-Slots)*int64(slotLen)).Add(time.Minute - 1).Truncate(time.Minute)
	newest := time.Unix((int64(w.lastCPU)+1)*60, 0)
	span := now.Sub(first) - min(max(now.Sub(newest), 0), readLag)
	if minutes == 0 || span <= 0 {
		return 0
	}
	return min(float64(minutes)/span.Minutes(), 1)
}

// MemoryPeak is the largest memory use in the window, in bytes; 0 for none.
func (w *Window) MemoryPeak(now time.Time, window time.Duration) float64 {
	var peak float32
	w.live(now, window/Slots, func(i int) { peak = max(peak, w.memPeak[i]) })
	return float64(peak)
}

// CPUPercentile is the q-quantile (0 < q <= 1) of the CPU minutes in the
// window, in millicores, interpolated within its bucket; false for none.
func (w *Window) CPUPercentile(now time.Time, window time.Duration, q float64) (float64, bool) {
	var counts [cpuBuckets]int
	total := 0
	w.live(now, window/Slots, func(i int) {
		low := int(w.top[i]) - (slotBuckets - 1)
		for r, c := range w.cpu[i] {
			counts[max(low+r, 0)] += int(c) // below 0: none but a corrupt state's
			total += int(c)
		}
	})
	if total == 0 {
		return 0, false
	}
	rank := q * float64(total)
	seen := 0.0
	for i, c := range counts {
		if c == 0 {
			continue
		}
		if seen+float64(c) >= rank {
			lo, hi := bucketBounds(i)
			return lo + (hi-lo)*(rank-seen)/float64(c), true
		}
		seen += float64(c)
	}
	_, hi := bucketBounds(cpuBuckets - 1)
	return hi, true
}

func cpuBucket(millis float64) int {
	if millis < cpuBase {
		return 0
	}
	i := 1 + int(math.Log(millis/cpuBase)/math.Log(cpuRatio))
	return min(i, cpuBuckets-1)
}

// bucketBounds: the last bucket is taken as one more step wide.
func bucketBounds(i int) (lo, hi float64) {
	if i == 0 {
		return 0, cpuBase
	}
	lo = cpuBase * math.Pow(cpuRatio, float64(i-1))
	return lo, lo * cpuRatio
}

// MarshalBinary writes the window for the state file: little-endian.
func (w *Window) MarshalBinary() ([]byte, error) { return w.AppendBinary(make([]byte, 0, Size)) }

// AppendBinary appends what MarshalBinary writes to out: the state of many
// windows is written without one allocation each.
func (w *Window) AppendBinary(out []byte) ([]byte, error) {
	out = binary.LittleEndian.AppendUint32(out, w.lastCPU)
	out = binary.LittleEndian.AppendUint32(out, w.lastMemory)
	for i := range Slots {
		out = binary.LittleEndian.AppendUint32(out, w.n[i])
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(w.memPeak[i]))
		out = append(out, w.top[i])
		for _, c := range w.cpu[i] {
			out = binary.LittleEndian.AppendUint16(out, c)
		}
	}
	return out, nil
}

// errWindowSize is a saved window of another length: another version's.
var errWindowSize = errors.New("rightsizing: a saved window of the wrong size")

// errWindowBucket is a saved slot whose highest bucket is beyond the last.
var errWindowBucket = errors.New("rightsizing: a saved window with a CPU bucket beyond the last")

// UnmarshalBinary reads what MarshalBinary wrote.
func (w *Window) UnmarshalBinary(b []byte) error {
	if len(b) != Size {
		return errWindowSize
	}
	var r Window
	r.lastCPU = binary.LittleEndian.Uint32(b)
	r.lastMemory = binary.LittleEndian.Uint32(b[4:])
	b = b[8:]
	for i := range Slots {
		r.n[i] = binary.LittleEndian.Uint32(b)
		r.memPeak[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4:]))
		if b[8] >= cpuBuckets {
			return errWindowBucket
		}
		r.top[i] = b[8]
		b = b[9:]
		for j := range r.cpu[i] {
			r.cpu[i][j] = binary.LittleEndian.Uint16(b[2*j:])
		}
		b = b[2*slotBuckets:]
	}
	*w = r
	return nil
}
