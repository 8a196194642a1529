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

// slot is one part of the window: minutes observed, a CPU histogram (counts
// of minutes) and the peak memory.
type slot struct {
	// n is the slot's number since the Unix epoch (time / slot length); 0 unused.
	n       int64
	minutes uint16
	memPeak float32 // bytes
	cpu     [cpuBuckets]uint16
}

// Window is one node's usage over the window, under 700 bytes whatever the
// window's length. The zero value is empty. Not safe for concurrent use.
type Window struct {
	slots [Slots]slot
	// lastCPU and lastMemory are the Unix minutes of the newest buckets
	// added: a bucket read twice (overlapping reads) counts once.
	lastCPU, lastMemory int64
}

// Size is the bytes a Window is saved in.
const Size = Slots*(8+2+4+2*cpuBuckets) + 16

// AddCPU records the CPU use (millicores) of the closed 1-minute bucket
// starting at t, a minute of coverage; a bucket at or before the newest one
// added, or NaN (no value), is ignored.
func (w *Window) AddCPU(t time.Time, slotLen time.Duration, millis float64) {
	minute := t.Unix() / 60
	if minute <= w.lastCPU || math.IsNaN(millis) {
		return
	}
	s := w.slotAt(t, slotLen)
	if s == nil {
		return
	}
	w.lastCPU = minute
	if s.minutes < math.MaxUint16 {
		s.minutes++
	}
	if b := &s.cpu[cpuBucket(millis)]; *b < math.MaxUint16 {
		*b++
	}
}

// AddMemory records the memory use (bytes) of the bucket starting at t, as
// AddCPU does; CPU alone counts the minutes covered.
func (w *Window) AddMemory(t time.Time, slotLen time.Duration, bytes float64) {
	minute := t.Unix() / 60
	if minute <= w.lastMemory || math.IsNaN(bytes) {
		return
	}
	s := w.slotAt(t, slotLen)
	if s == nil {
		return
	}
	w.lastMemory = minute
	if float32(bytes) > s.memPeak {
		s.memPeak = float32(bytes)
	}
}

// slotAt returns the slot of t, emptied if it held an older part; nil if it
// holds a newer one: t is older than the window (a read reaching back past
// it), and must not empty the part kept in its place.
func (w *Window) slotAt(t time.Time, slotLen time.Duration) *slot {
	n := slotNumber(t, slotLen)
	s := &w.slots[n%Slots]
	switch {
	case s.n > n:
		return nil
	case s.n < n:
		*s = slot{n: n}
	}
	return s
}

func slotNumber(t time.Time, slotLen time.Duration) int64 {
	return t.UnixNano()/int64(slotLen) + 1 // 0 marks an unused slot
}

// live calls f with every slot within the window ending at now.
func (w *Window) live(now time.Time, slotLen time.Duration, f func(*slot)) {
	cur := slotNumber(now, slotLen)
	for i := range w.slots {
		if s := &w.slots[i]; s.n > cur-Slots && s.n <= cur && s.n != 0 {
			f(s)
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
	w.live(now, slotLen, func(s *slot) { minutes += int(s.minutes) })
	first := time.Unix(0, (slotNumber(now, slotLen)-Slots)*int64(slotLen)).Add(time.Minute - 1).Truncate(time.Minute)
	newest := time.Unix((w.lastCPU+1)*60, 0)
	span := now.Sub(first) - min(max(now.Sub(newest), 0), readLag)
	if minutes == 0 || span <= 0 {
		return 0
	}
	return min(float64(minutes)/span.Minutes(), 1)
}

// MemoryPeak is the largest memory use in the window, in bytes; 0 for none.
func (w *Window) MemoryPeak(now time.Time, window time.Duration) float64 {
	var peak float32
	w.live(now, window/Slots, func(s *slot) { peak = max(peak, s.memPeak) })
	return float64(peak)
}

// CPUPercentile is the q-quantile (0 < q <= 1) of the CPU minutes in the
// window, in millicores, interpolated within its bucket; false for none.
func (w *Window) CPUPercentile(now time.Time, window time.Duration, q float64) (float64, bool) {
	var counts [cpuBuckets]int
	total := 0
	w.live(now, window/Slots, func(s *slot) {
		for i, c := range s.cpu {
			counts[i] += int(c)
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

// MarshalBinary writes the window for the state file: little-endian, the
// live slots only.
func (w *Window) MarshalBinary() ([]byte, error) {
	out := binary.LittleEndian.AppendUint64(nil, uint64(w.lastCPU))
	out = binary.LittleEndian.AppendUint64(out, uint64(w.lastMemory))
	for _, s := range w.slots {
		out = binary.LittleEndian.AppendUint64(out, uint64(s.n))
		out = binary.LittleEndian.AppendUint16(out, s.minutes)
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(s.memPeak))
		for _, c := range s.cpu {
			out = binary.LittleEndian.AppendUint16(out, c)
		}
	}
	return out, nil
}

// errWindowSize is a saved window of another length: another version's.
var errWindowSize = errors.New("rightsizing: a saved window of the wrong size")

// UnmarshalBinary reads what MarshalBinary wrote.
func (w *Window) UnmarshalBinary(b []byte) error {
	if len(b) != Size {
		return errWindowSize
	}
	w.lastCPU = int64(binary.LittleEndian.Uint64(b))
	w.lastMemory = int64(binary.LittleEndian.Uint64(b[8:]))
	b = b[16:]
	for i := range w.slots {
		s := &w.slots[i]
		s.n = int64(binary.LittleEndian.Uint64(b))
		s.minutes = binary.LittleEndian.Uint16(b[8:])
		s.memPeak = math.Float32frombits(binary.LittleEndian.Uint32(b[10:]))
		b = b[14:]
		for j := range s.cpu {
			s.cpu[j] = binary.LittleEndian.Uint16(b[2*j:])
		}
		b = b[2*cpuBuckets:]
	}
	return nil
}
