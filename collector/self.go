package collector

import (
	"bytes"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
)

// selfGatherInterval is how often the self-metrics other than the API
// metrics (build info, Go and process metrics) are gathered when they come
// through SelfGatherer: scrapes serve the encoding of the last gather, at
// most this old. Gathering and encoding the Go and process collectors costs
// about a thousand allocations and a millisecond and a half of CPU, which
// every scrape would otherwise pay; a Go or process value a few seconds old
// is still true to within what those metrics are read for.
const selfGatherInterval = 5 * time.Second

// scheduledGatherer gathers and encodes a Gatherer in both formats on its
// own schedule, from the first scrape on, so that scrapes only copy bytes.
type scheduledGatherer struct {
	g        prometheus.Gatherer
	interval time.Duration

	startOnce sync.Once
	stopOnce  sync.Once
	stopped   atomic.Bool
	done      chan struct{}

	mu  sync.Mutex // serialises gathers
	cur atomic.Pointer[selfEncoding]
}

// selfEncoding is one gather, encoded in each format.
type selfEncoding struct {
	bytes [numFormats][]byte
	err   error
}

func newScheduledGatherer(g prometheus.Gatherer, interval time.Duration) *scheduledGatherer {
	return &scheduledGatherer{g: g, interval: interval, done: make(chan struct{})}
}

// current returns the last gather, starting the schedule on first use.
// After stop, every call gathers afresh.
func (s *scheduledGatherer) current() *selfEncoding {
	s.startOnce.Do(func() {
		s.refresh()
		go s.loop()
	})
	if s.stopped.Load() {
		s.refresh()
	}
	return s.cur.Load()
}

func (s *scheduledGatherer) loop() {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
			s.refresh()
		}
	}
}

func (s *scheduledGatherer) stop() {
	s.stopOnce.Do(func() {
		s.stopped.Store(true)
		close(s.done)
	})
}

// refresh gathers and encodes once.
func (s *scheduledGatherer) refresh() {
	s.mu.Lock()
	defer s.mu.Unlock()
	mfs, err := s.g.Gather()
	c := &selfEncoding{err: err}
	var errs []error
	for f := range numFormats {
		var buf bytes.Buffer
		errs = append(errs, encodeFamilies(&buf, mfs, f, true)...)
		c.bytes[f] = buf.Bytes()
	}
	if err == nil && len(errs) > 0 {
		c.err = errs[0]
	}
	s.cur.Store(c)
}

// encodeFamilies appends mfs to buf in format, leaving out any family that
// fails to encode, whose half-written lines would make the whole
// exposition unparsable, and with skipAPI the API metrics (served from
// APIMetrics; registered twice by mistake).
func encodeFamilies(buf *bytes.Buffer, mfs []*dto.MetricFamily, format int, skipAPI bool) (errs []error) {
	for _, mf := range mfs {
		if skipAPI && isAPIMetric(mf.GetName()) {
			continue
		}
		mark := buf.Len()
		var err error
		if format == formatOpenMetrics {
			_, err = expfmt.MetricFamilyToOpenMetrics(buf, mf)
		} else {
			_, err = expfmt.MetricFamilyToText(buf, mf)
		}
		if err != nil {
			buf.Truncate(mark)
			errs = append(errs, fmt.Errorf("encoding %s: %w", mf.GetName(), err))
		}
	}
	return errs
}
