package collector

import (
	"time"
	"unsafe"
)

// Sink records the collect functions' samples into Samples. A struct, not an
// interface: a call through an interface makes its variadic label values escape,
// one allocation per series.
type Sink struct {
	rec *Samples
}

// gauge records a sample as given: an encoder checks its values (invalid UTF-8).
func (s *Sink) gauge(d *Desc, value float64, labelValues ...string) {
	s.rec.add(d, value, time.Time{}, labelValues)
}

// Gauge emits one sample of d for a part's collect function outside this package.
func (s *Sink) Gauge(d *Desc, value float64, labelValues ...string) {
	s.rec.add(d, value, time.Time{}, labelValues)
}

// GaugeAt emits one sample of d with an explicit timestamp (none when ts is zero).
func (s *Sink) GaugeAt(d *Desc, value float64, ts time.Time, labelValues ...string) {
	s.rec.add(d, value, ts, labelValues)
}

// Samples records emitted samples for an encoder to read with Len and At; its
// buffers survive Reset, so recording stops allocating once they have grown.
type Samples struct {
	sink    Sink
	samples []sample
	values  []string // the label values of every sample, one after another
}

type sample struct {
	desc  *Desc
	value float64
	end   int   // of its label values in values
	ts    int64 // Unix milliseconds of an explicit timestamp; 0 for none
}

// Sink returns the Sink that records into s.
func (s *Samples) Sink() *Sink {
	s.sink.rec = s
	return &s.sink
}

func (s *Samples) add(d *Desc, value float64, ts time.Time, labelValues []string) {
	s.values = append(s.values, labelValues...)
	smp := sample{desc: d, value: value, end: len(s.values)}
	if !ts.IsZero() {
		smp.ts = ts.UnixMilli()
	}
	s.samples = append(s.samples, smp)
}

// Timestamp returns sample i's timestamp in Unix milliseconds, 0 for none.
func (s *Samples) Timestamp(i int) int64 { return s.samples[i].ts }

// Len returns the number of samples recorded since the last Reset.
func (s *Samples) Len() int { return len(s.samples) }

// At returns sample i; its label values are valid until the next Reset.
func (s *Samples) At(i int) (d *Desc, value float64, labelValues []string) {
	start := 0
	if i > 0 {
		start = s.samples[i-1].end
	}
	smp := &s.samples[i]
	return smp.desc, smp.value, s.values[start:smp.end:smp.end]
}

// Reset forgets the samples and keeps the buffers.
func (s *Samples) Reset() {
	clear(s.values) // the strings must not stay reachable
	s.values = s.values[:0]
	s.samples = s.samples[:0]
}

// Size returns the bytes the samples recorded since the last Reset take in
// the buffers.
func (s *Samples) Size() int {
	return len(s.values)*stringSize + len(s.samples)*sampleSize
}

const (
	stringSize = int(unsafe.Sizeof(""))
	sampleSize = int(unsafe.Sizeof(sample{}))
)

// Trim drops a buffer over limit bytes, so that a spike is not held for good,
// and returns the bytes kept.
func (s *Samples) Trim(limit int) (kept int) {
	if cap(s.values)*stringSize > limit {
		s.values = nil
	}
	if cap(s.samples)*sampleSize > limit {
		s.samples = nil
	}
	return cap(s.values)*stringSize + cap(s.samples)*sampleSize
}
