package exposition

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/clouddb/clouddb_exporter/apimetrics"
)

// selfGatherInterval: Go and process metrics cost a thousand allocations to
// gather, and a value a few seconds old is still true enough.
const selfGatherInterval = 5 * time.Second

// SelfGatherer returns the self-metrics Gatherer to give New: api's metrics
// served from a cached encoding, others gathered every selfGatherInterval.
func SelfGatherer(api *apimetrics.Metrics, others prometheus.Gatherer) prometheus.Gatherer {
	return &selfGatherer{api: api, others: others}
}

type selfGatherer struct {
	api    *apimetrics.Metrics
	others prometheus.Gatherer
}

// Gather implements prometheus.Gatherer.
func (g *selfGatherer) Gather() ([]*dto.MetricFamily, error) {
	if g.others == nil {
		return g.api.Gather()
	}
	mfs, err := g.others.Gather()
	mfs = slices.DeleteFunc(mfs, func(mf *dto.MetricFamily) bool { return apimetrics.IsAPIMetric(mf.GetName()) })
	return prometheus.Gatherers{g.api, prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return mfs, err })}.Gather()
}

// apiCache keeps the API metrics' encoding until they change: API calls are
// rarer than scrapes between polls.
type apiCache struct {
	mu    sync.Mutex
	cache [numFormats]encodedAPIMetrics // guarded by mu
}

type encodedAPIMetrics struct {
	valid      bool
	generation uint64
	bytes      []byte
}

// encoded's result must not be modified.
func (c *apiCache) encoded(m *apimetrics.Metrics, f int) ([]byte, error) {
	// Read before gathering, so a racing change only costs one more encoding.
	gen := m.Generation()
	c.mu.Lock()
	defer c.mu.Unlock()
	enc := &c.cache[f]
	if enc.valid && enc.generation == gen {
		return enc.bytes, nil
	}
	mfs, err := m.Gather()
	var buf bytes.Buffer
	buf.Grow(len(enc.bytes))
	if errs := encodeFamilies(&buf, mfs, f, false); len(errs) > 0 {
		err = errors.Join(append(errs, err)...)
	}
	if err != nil {
		// Not cached: the next scrape tries again.
		return buf.Bytes(), err
	}
	*enc = encodedAPIMetrics{valid: true, generation: gen, bytes: buf.Bytes()}
	return enc.bytes, nil
}

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

type selfEncoding struct {
	bytes [numFormats][]byte
	err   error
}

func newScheduledGatherer(g prometheus.Gatherer, interval time.Duration) *scheduledGatherer {
	return &scheduledGatherer{g: g, interval: interval, done: make(chan struct{})}
}

// current starts the schedule on first use; after stop, it gathers afresh.
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

// encodeFamilies leaves out a family that fails to encode, whose half-written
// lines would make the whole exposition unparsable.
func encodeFamilies(buf *bytes.Buffer, mfs []*dto.MetricFamily, format int, skipAPI bool) (errs []error) {
	for _, mf := range mfs {
		if skipAPI && apimetrics.IsAPIMetric(mf.GetName()) {
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

type selfPart struct {
	apiGeneration uint64
	apiRemovals   uint64
	others        *selfEncoding

	raw      []byte
	deflated []byte
	// crc and shift (crcX8n of raw's length) make the gzip trailer's CRC.
	crc, shift uint32
}

// selfPart reuses the cached part while its sources are unchanged.
func (e *Handler) selfPart(format int, gzip bool) *selfPart {
	if e.self != nil {
		p := &selfPart{}
		var buf bytes.Buffer
		e.reportSelf(e.encodeSelf(&buf, format, nil))
		p.raw = buf.Bytes()
		if gzip {
			e.deflateSelf(p)
		}
		return p
	}
	var generation, removals uint64
	if e.api != nil {
		removals = e.api.Removals()
		generation = e.api.Generation()
	}
	var others *selfEncoding
	if e.others != nil {
		others = e.others.current()
	}
	now := e.now()
	// The API metrics change with every API call: re-encode them at most
	// every selfGatherInterval.
	fresh := func(p *cachedSelfPart) bool {
		return p != nil && p.others == others && p.apiRemovals == removals &&
			(p.apiGeneration == generation || now.Sub(p.made) < selfGatherInterval)
	}
	if p := e.selfCache[format].Load(); fresh(p) {
		e.reportSelf(p.err)
		return &p.selfPart
	}
	e.selfMu.Lock()
	defer e.selfMu.Unlock()
	if p := e.selfCache[format].Load(); fresh(p) {
		e.reportSelf(p.err)
		return &p.selfPart
	}
	var buf bytes.Buffer
	p := &cachedSelfPart{selfPart: selfPart{apiGeneration: generation, apiRemovals: removals, others: others}, made: now}
	p.err = e.encodeSelf(&buf, format, others)
	e.reportSelf(p.err)
	p.raw = buf.Bytes()
	e.deflateSelf(&p.selfPart)
	e.selfCache[format].Store(p)
	return &p.selfPart
}

// cachedSelfPart keeps its encoding error, reported by every scrape serving it.
type cachedSelfPart struct {
	selfPart
	made time.Time
	err  error
}

func (e *Handler) deflateSelf(p *selfPart) {
	var out bytes.Buffer
	e.deflater.deflate(&out, p.raw)
	p.deflated = out.Bytes()
	p.crc, p.shift = crc32.ChecksumIEEE(p.raw), crcX8n(int64(len(p.raw)))
}

// encodeSelf: a failing gatherer or family costs only its own series.
func (e *Handler) encodeSelf(buf *bytes.Buffer, format int, others *selfEncoding) error {
	var errs []error
	if e.api != nil {
		b, err := e.apiCache.encoded(e.api, format)
		if err != nil {
			errs = append(errs, err)
		}
		buf.Write(b)
	}
	if others != nil {
		buf.Write(others.bytes[format])
		if others.err != nil {
			errs = append(errs, others.err)
		}
	}
	if e.self != nil {
		mfs, err := e.self.Gather()
		if err != nil {
			errs = append(errs, err)
		}
		errs = append(errs, encodeFamilies(buf, mfs, format, false)...)
	}
	if format == formatOpenMetrics {
		buf.WriteString("# EOF\n")
	}
	return errors.Join(errs...)
}

func (e *Handler) reportSelf(err error) {
	if err == nil {
		e.selfFailing.Store(false)
		return
	}
	if e.selfFailing.CompareAndSwap(false, true) {
		e.logger.Error("Self-metrics could not be gathered completely; serving the rest until this recovers.", "err", err)
	}
}
