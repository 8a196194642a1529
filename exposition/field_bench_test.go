package exposition

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/dataplane"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/dataplanetest"
	"github.com/clouddb/clouddb_exporter/internal/fleettest"
)

// The field at 10,000 services with usage and logs at their default
// intervals, as the readers publish: a tick is 5 s.
const (
	fieldServices = 10000
	// A usage read lasts its interval (5 m): 60 publishes. Its plan puts
	// first the nodes' totals that are due, each service's about hourly at
	// a second of its own (a twelfth of the services a read, spread over
	// the ids), then the other series of every service, by service id.
	fieldUsageTicks  = 60
	fieldTotalsReads = 12
	// A log read lasts its interval (1 m): 12 publishes in service id order.
	fieldLogsTicks = 12
	// The poller publishes every 20 s, its lists unchanged.
	fieldPollTicks = 4
)

// fieldModel makes the snapshots of the field's publishes, tick after tick.
type fieldModel struct {
	// logs[m][i] is service i's counts after minute m's read (m: 0 or 1,
	// every other read).
	logs     [2][]*dataplane.ServiceLogs
	suffixes []string
	curUsage []*dataplane.UsageService
	curLogs  []*dataplane.ServiceLogs
	state    *fleet.Snapshot
	tick     int
}

func newFieldModel(n int) *fieldModel {
	m := &fieldModel{state: fleettest.Synthetic("bench", n)}
	base := dataplanetest.WithDataPlane(fleettest.Synthetic("bench", n))
	u := fleet.DataOf[dataplane.Usage](base, dataplane.PartUsage)
	l := fleet.DataOf[dataplane.Logs](base, dataplane.PartLogs)
	m.suffixes = u.Suffixes
	for r := range 2 {
		for i, svc := range u.Services {
			logs := dataplanetest.LogCounts(svc.ID, nil)
			for sev, n := range map[string]float64{"LOG": 1000, "WARNING": 100, "ERROR": 10, "INFO": 5} {
				logs.Set(dataplane.LogSeverityIndex(sev), n+float64(i%7+r))
			}
			m.logs[r] = append(m.logs[r], logs)
		}
	}
	m.curUsage, m.curLogs = slices.Clone(u.Services), slices.Clone(l.Counts)
	return m
}

// read returns a copy of svc after a read of its nodes' totals (totals) or
// of its other series: a total's value stays and its bucket moves an hour;
// the others' values move, and their buckets an interval.
func (m *fieldModel) read(svc *dataplane.UsageService, totals bool) *dataplane.UsageService {
	c := &dataplane.UsageService{ID: svc.ID, Ends: svc.Ends, Points: slices.Clone(svc.Points)}
	for i, suffix := range m.suffixes {
		if isTotal := suffix == apiclient.SeriesCPUTotal || suffix == apiclient.SeriesMemoryTotal; isTotal != totals {
			continue
		}
		for j := range c.Series(i) {
			p := &c.Series(i)[j]
			if totals {
				p.Bucket += int64(time.Hour)
			} else {
				p.Value++
				p.Bucket += int64(5 * time.Minute)
			}
		}
	}
	return c
}

// span returns the services [from, to) of n that publish k of steps
// publishes reaches.
func span(n, k, steps int) (from, to int) {
	return n * k / steps, n * (k + 1) / steps
}

// next returns the snapshots of one tick's publishes: the usage's, the
// logs' and, every fieldPollTicks, the poller's.
func (m *fieldModel) next() []*fleet.Snapshot {
	t := m.tick
	m.tick++
	n := len(m.curUsage)
	m.curUsage = slices.Clone(m.curUsage)
	read, k := t/fieldUsageTicks, t%fieldUsageTicks
	if k == 0 {
		for i := range m.curUsage {
			if (i*7919+read)%fieldTotalsReads == 0 {
				m.curUsage[i] = m.read(m.curUsage[i], true)
			}
		}
	}
	from, to := span(n, k, fieldUsageTicks)
	for i := from; i < to; i++ {
		m.curUsage[i] = m.read(m.curUsage[i], false)
	}
	out := []*fleet.Snapshot{m.snapshot()}
	from, to = span(n, t%fieldLogsTicks, fieldLogsTicks)
	m.curLogs = slices.Clone(m.curLogs)
	copy(m.curLogs[from:to], m.logs[t/fieldLogsTicks%2][from:to])
	out = append(out, m.snapshot())
	if t%fieldPollTicks == 0 {
		// The poller's lists are the last ones when nothing changed; its
		// parts' health is new.
		state := *m.state
		state.Parts = slices.Clone(state.Parts)
		state.Parts[0].Duration = time.Duration(t) * time.Millisecond
		m.state = &state
		out = append(out, m.snapshot())
	}
	return out
}

func (m *fieldModel) snapshot() *fleet.Snapshot {
	s := *m.state
	s.Data = nil
	s.SetData(dataplane.PartUsage, &dataplane.Usage{Suffixes: m.suffixes, Services: m.curUsage, RefreshPeriod: 5 * time.Minute})
	s.SetData(dataplane.PartLogs, &dataplane.Logs{Counts: m.curLogs, ReadPeriod: time.Minute})
	return &s
}

// BenchmarkFieldRender is the exposition's CPU per scrape in the field of
// fieldModel: each op is one tick, the usage's and the logs' publishes
// (and the making of their data, as the readers make it), the poller's
// every fourth, then a scrape as Prometheus makes it
// (OpenMetrics, gzip). Over the ticks of two usage reads before the timed
// ones, it reports per scrape and group (named by its first family) the
// chunks rendered again (chunks), their raw bytes (raw_kB), and their
// pieces (a chunk's family) rendered to the same bytes as before
// (same_pieces, same_kB), and the pieces deflated in all (those others);
// and the process's CPU time per tick (cpu_ms), the garbage collector's
// included, which the machine's other loads move less than the time.
func BenchmarkFieldRender(b *testing.B) {
	e, tick := fieldTicks(fieldServices)
	tick()
	var counts fieldCounts
	deflated := e.render.deflated
	for range 2 * fieldUsageTicks {
		before := e.renderings()
		tick()
		counts.add(before, e.renderings())
	}
	deflated = e.render.deflated - deflated
	b.ReportAllocs()
	cpu := processCPU()
	for b.Loop() {
		tick()
	}
	b.ReportMetric(float64(processCPU()-cpu)/float64(b.N)/1e6, "cpu_ms/scrape")
	counts.report(b, 2*fieldUsageTicks)
	b.ReportMetric(float64(deflated)/(2*fieldUsageTicks), "deflated_pieces/scrape")
}

// fieldTicks returns a handler of the field of n services and a tick of
// it: its publishes, then a scrape as Prometheus makes it.
func fieldTicks(n int) (*Handler, func()) {
	m := newFieldModel(n)
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept", acceptPrometheus3)
	req.Header.Set("Accept-Encoding", "gzip")
	w := &discardResponse{header: http.Header{}}
	e := New(nil, nil)
	return e, func() {
		for _, s := range m.next() {
			e.SetSnapshot(s)
		}
		clear(w.header)
		e.ServeHTTP(w, req)
	}
}

// rendering is what a chunk's piece of a family was last rendered to.
type rendering struct {
	group int
	first chunkKey
	fam   int
}

type renderedPiece struct {
	form *chunkForm
	crc  uint32
	raw  int
}

// renderings lists the Prometheus form's pieces of every chunk.
func (e *Handler) renderings() map[rendering]renderedPiece {
	e.renderMu.Lock()
	defer e.renderMu.Unlock()
	f := formOf(formatOpenMetrics, true)
	out := map[rendering]renderedPiece{}
	for _, p := range e.projects {
		for g, chunks := range p.groups {
			for _, c := range chunks {
				if cf := c.forms[f]; cf != nil {
					for _, pc := range cf.pieces {
						out[rendering{g, c.first, int(pc.family)}] = renderedPiece{cf, pc.crc, int(pc.raw)}
					}
				}
			}
		}
	}
	return out
}

type fieldCounts struct {
	chunks, raw, same, sameRaw map[string]int
}

// add counts the pieces of after rendered since before.
func (c *fieldCounts) add(before, after map[rendering]renderedPiece) {
	if c.chunks == nil {
		c.chunks, c.raw, c.same, c.sameRaw = map[string]int{}, map[string]int{}, map[string]int{}, map[string]int{}
	}
	first := map[int]int{}
	for k := range after {
		if f, ok := first[k.group]; !ok || k.fam < f {
			first[k.group] = k.fam
		}
	}
	forms := map[*chunkForm]bool{}
	for k, p := range after {
		old, ok := before[k]
		if ok && old.form == p.form {
			continue
		}
		name := familyName(first[k.group])
		if !forms[p.form] {
			forms[p.form] = true
			c.chunks[name]++
		}
		c.raw[name] += p.raw
		if ok && old.crc == p.crc && old.raw == p.raw {
			c.same[name]++
			c.sameRaw[name] += p.raw
		}
	}
}

func (c *fieldCounts) report(b *testing.B, scrapes int) {
	per := func(n int) float64 { return float64(n) / float64(scrapes) }
	total := 0
	for name, n := range c.chunks {
		total += c.raw[name]
		b.ReportMetric(per(n), "chunks/scrape:"+name)
		b.ReportMetric(per(c.raw[name])/1000, "raw_kB/scrape:"+name)
		b.ReportMetric(per(c.same[name]), "same_pieces/scrape:"+name)
		b.ReportMetric(per(c.sameRaw[name])/1000, "same_kB/scrape:"+name)
	}
	b.ReportMetric(per(total)/1000, "raw_kB/scrape")
}

// familyName names a group by its first family, without the namespace.
func familyName(fam int) string {
	name, _, _ := strings.Cut(strings.TrimPrefix(string(families[fam].header[formatText]), "# HELP "), " ")
	return strings.TrimPrefix(name, "clouddb_")
}

// processCPU is the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
