package collector

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Sink receives the samples of the resource metrics. The collect functions
// (collectServices and the others) emit through it, so that what each
// metric holds is written once and serves both uses: sent as const metrics
// to a registry (FleetCollector), or recorded in Samples for an encoder
// that writes exposition lines itself (the exposition package).
//
// It is a struct rather than an interface on purpose: a call through an
// interface makes its variadic label values escape, which would cost one
// allocation per series, the very cost the direct rendering avoids.
type Sink struct {
	ch  chan<- prometheus.Metric
	rec *Samples
}

// gauge emits one gauge sample. On the const metric path, a sample that
// cannot be built (a label value that is not valid UTF-8) becomes an
// invalid metric, so that the registry reports it and still serves every
// other series, instead of panicking in the middle of a Collect. Samples
// records every sample as given: its encoder checks them.
func (s *Sink) gauge(d *Desc, value float64, labelValues ...string) {
	s.gaugeAt(d, value, time.Time{}, labelValues...)
}

// Gauge emits one sample of d, a gauge or a counter: the collect function
// of a part defined outside this package emits through it.
func (s *Sink) Gauge(d *Desc, value float64, labelValues ...string) {
	s.gaugeAt(d, value, time.Time{}, labelValues...)
}

// gaugeAt emits one sample with an explicit timestamp; a zero ts is none.
func (s *Sink) gaugeAt(d *Desc, value float64, ts time.Time, labelValues ...string) {
	if s.rec != nil {
		s.rec.add(d, value, ts, labelValues)
		return
	}
	vt := prometheus.GaugeValue
	if d.counter {
		vt = prometheus.CounterValue
	}
	m, err := prometheus.NewConstMetric(d.desc, vt, value, labelValues...)
	switch {
	case err != nil:
		m = prometheus.NewInvalidMetric(d.desc, err)
	case !ts.IsZero():
		m = prometheus.NewMetricWithTimestamp(ts, m)
	}
	s.ch <- m
}

// Samples records the samples collect functions emit, in order, for an
// encoder to read back with Len and At. Its buffers are kept across Reset,
// so that recording costs no allocation per sample once they have grown.
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

// Timestamp returns sample i's explicit timestamp in Unix milliseconds, 0
// when it has none (the scrape's time applies).
func (s *Samples) Timestamp(i int) int64 { return s.samples[i].ts }

// Len returns the number of samples recorded since the last Reset.
func (s *Samples) Len() int { return len(s.samples) }

// At returns sample i: its descriptor, value and label values, in the order
// of d.Labels() (as many as the collect function passed). The label values
// are valid until the next Reset.
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

// Trim lets go of a buffer that holds more than limit bytes: after a
// spike, larger ones are let go rather than held for good. It returns the
// bytes kept.
func (s *Samples) Trim(limit int) (kept int) {
	const stringSize, sampleSize = 16, 24
	if cap(s.values)*stringSize > limit {
		s.values = nil
	}
	if cap(s.samples)*sampleSize > limit {
		s.samples = nil
	}
	return cap(s.values)*stringSize + cap(s.samples)*sampleSize
}
