package exposition

import (
	"bytes"
	"compress/gzip"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/dataplane"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/collectortest"
	"github.com/clouddb/clouddb_exporter/internal/dataplanetest"
	"github.com/clouddb/clouddb_exporter/internal/fleettest"
)

// oddSnapshot returns a project whose label values need escaping or are
// far from ASCII, and whose values are negative, fractional, huge, before
// 1970 or far in the future: what a drifting API might send.
func oddSnapshot() *fleet.Snapshot {
	s := dataplanetest.Snapshots()[0]
	s.ProjectID = `proj-"odd"`
	svc := &s.Services[0]
	svc.Name = "back\\slash \"quoted\"\nnew line"
	svc.RegionCode = "ünïcødé-😀"
	svc.ServiceType = ""
	svc.Status = `WEIRD "status"`
	svc.Created = apiclient.Time{Time: fleettest.Time("1960-06-30T23:59:59.999Z")}
	svc.Resources[0].Spec.CPUMillis = fleettest.Int(-1500)
	svc.Resources[0].Spec.MemoryGBs = fleettest.Int(1 << 40)
	svc.Resources[1].ID = `res\2`
	svc.Endpoint.Port = 65535
	s.Services[1].StatusSince = fleettest.Time("3000-01-01T00:00:00.000000001Z")
	s.ReplicaSets[0].Nodes = -1
	s.ReplicaSets[0].CPUMillis = 1
	s.VPCs[0].Name = "\\"
	s.VPCs[0].CIDR = "\n"
	s.Peerings[0].PeerAccountID = `"`
	s.Parts[0].Duration = time.Nanosecond
	s.Parts[1].Duration = 90 * time.Minute
	s.Auth.Key().Name = "key with\ttab"
	return s
}

// checkRendering asserts that rendering snaps directly gives what a
// registry Gather of a FleetCollector over them gives: byte for byte what
// expfmt encodes from the parsed rendering in both formats, and the same
// families and series as the registry, whatever their order.
func checkRendering(t *testing.T, snaps ...*fleet.Snapshot) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(collectortest.NewFleetCollectorOf(snaps...))
	want, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	e := New(nil, nil)
	defer e.Close()
	// Rendered once from other snapshots first: chunks replaced and kept
	// by a change give the bytes of a first rendering.
	before := New(nil, nil)
	defer before.Close()
	for _, s := range snaps {
		e.SetSnapshot(s)
		other := fleettest.Synthetic(s.ProjectID, 300)
		before.SetSnapshot(other)
	}
	scrapeForms(t, before)
	for _, s := range snaps {
		before.SetSnapshot(s)
	}
	text, om := scrapeForms(t, e)
	againText, againOM := scrapeForms(t, before)
	if !bytes.Equal(text, againText) || !bytes.Equal(om, againOM) {
		t.Error("rendering after other snapshots gives other bytes than a first rendering")
	}
	om, ok := bytes.CutSuffix(om, []byte("# EOF\n"))
	if !ok {
		t.Error("OpenMetrics exposition without # EOF")
	}

	got := parseText(t, text)
	names := make([]string, 0, len(got))
	for name := range got {
		names = append(names, name)
	}
	slices.Sort(names)
	var reText, reOM bytes.Buffer
	for _, name := range names {
		if _, err := expfmt.MetricFamilyToText(&reText, got[name]); err != nil {
			t.Fatal(err)
		}
		if _, err := expfmt.MetricFamilyToOpenMetrics(&reOM, got[name]); err != nil {
			t.Fatal(err)
		}
	}
	diffLines(t, "text", text, reText.Bytes())
	diffLines(t, "OpenMetrics", om, reOM.Bytes())

	if len(got) != len(want) {
		t.Errorf("%d families, the registry has %d", len(got), len(want))
	}
	for _, w := range want {
		g := got[w.GetName()]
		if g == nil {
			t.Errorf("no %s", w.GetName())
			continue
		}
		var a, b bytes.Buffer
		if _, err := expfmt.MetricFamilyToText(&a, w); err != nil {
			t.Fatal(err)
		}
		if _, err := expfmt.MetricFamilyToText(&b, g); err != nil {
			t.Fatal(err)
		}
		if len(g.GetMetric()) != len(w.GetMetric()) || sortedLines(a.String()) != sortedLines(b.String()) {
			t.Errorf("%s differs:\nrendered:\n%s\nregistry:\n%s", w.GetName(), b.String(), a.String())
		}
	}
}

// scrapeForms scrapes e in every form and returns its text and OpenMetrics
// expositions, failing the test if the gzip forms do not hold the same.
func scrapeForms(t *testing.T, e *Handler) (text, om []byte) {
	t.Helper()
	text = readBody(t, scrape(t, e, acceptText, ""))
	om = readBody(t, scrape(t, e, acceptPrometheus3, ""))
	for _, want := range []struct {
		accept string
		body   []byte
	}{{acceptText, text}, {acceptPrometheus3, om}} {
		if got := gunzip(t, readBody(t, scrape(t, e, want.accept, "gzip"))); !bytes.Equal(got, want.body) {
			t.Errorf("gzip scrape (%s) differs from the uncompressed one", want.accept)
			diffLines(t, "gzip", got, want.body)
		}
	}
	return text, om
}

func gunzip(t *testing.T, body []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	zr.Multistream(false)
	plain, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return plain
}

// diffLines fails the test with the first line where got and want differ.
func diffLines(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			t.Errorf("%s rendering differs from expfmt's encoding at line %d:\ngot  %q\nwant %q", what, i+1, gl, wl)
			return
		}
	}
}

func TestRenderMatchesRegistry(t *testing.T) {
	t.Parallel() // CPU-bound under -race: the package's tail, on both cores
	for _, tc := range []struct {
		name  string
		snaps []*fleet.Snapshot
	}{
		{"test snapshots", dataplanetest.Snapshots()},
		{"odd values", []*fleet.Snapshot{oddSnapshot(), dataplanetest.Snapshots()[1]}},
		{"synthetic", []*fleet.Snapshot{fleettest.Synthetic("big", 500), fleettest.Synthetic("small", 3)}},
		{"empty project", []*fleet.Snapshot{{ProjectID: "empty", Taken: fleettest.Time("2025-03-01T12:00:00Z")}}},
	} {
		t.Run(tc.name, func(t *testing.T) { checkRendering(t, tc.snaps...) })
	}
}

// The values the line writer formats itself must read as expfmt writes
// them, in both formats.
func TestAppendFloat(t *testing.T) {
	values := []float64{
		0, math.Copysign(0, -1), 1, -1, 2, -2, 0.5, 0.05, 1.5, 100, 1e6, 1e21, 1e-7, 123456789, 1.7408304002e+09,
		8 << 30, 1 << 62, math.MaxFloat64, math.SmallestNonzeroFloat64, -1e-300, math.NaN(), math.Inf(1), math.Inf(-1),
	}
	mf := &dto.MetricFamily{Name: new("v"), Type: dto.MetricType_GAUGE.Enum()}
	for _, v := range values {
		mf.Metric = append(mf.Metric, &dto.Metric{Gauge: &dto.Gauge{Value: new(v)}})
	}
	for _, tc := range []struct {
		name   string
		encode func(*bytes.Buffer, *dto.MetricFamily) error
		append func([]byte, float64) []byte
	}{
		{"text", func(b *bytes.Buffer, mf *dto.MetricFamily) error {
			_, err := expfmt.MetricFamilyToText(b, mf)
			return err
		}, appendTextFloat},
		{"OpenMetrics", func(b *bytes.Buffer, mf *dto.MetricFamily) error {
			_, err := expfmt.MetricFamilyToOpenMetrics(b, mf)
			return err
		}, appendOpenMetricsFloat},
	} {
		var b bytes.Buffer
		if err := tc.encode(&b, mf); err != nil {
			t.Fatal(err)
		}
		var lines []string
		for line := range strings.Lines(b.String()) {
			if !strings.HasPrefix(line, "#") {
				lines = append(lines, strings.TrimSuffix(strings.TrimPrefix(line, "v "), "\n"))
			}
		}
		if len(lines) != len(values) {
			t.Fatalf("%s: %d sample lines for %d values", tc.name, len(lines), len(values))
		}
		for i, v := range values {
			if got := string(tc.append([]byte("x"), v)); got != "x"+lines[i] {
				t.Errorf("%s: %v written as %q, expfmt writes %q", tc.name, v, got[1:], lines[i])
			}
		}
	}
}

// HELP text is escaped as expfmt escapes it: the double quote only in
// OpenMetrics.
func TestFamilyHeader(t *testing.T) {
	help := `Back\slash, "quotes"` + "\nand a new line."
	d := newFamily("clouddb_test_metric", help, []string{"b", "a"})
	mf := &dto.MetricFamily{
		Name: new("clouddb_test_metric"), Help: new(help), Type: dto.MetricType_GAUGE.Enum(),
		Metric: []*dto.Metric{{Gauge: &dto.Gauge{Value: new(1.0)}}},
	}
	var text, om bytes.Buffer
	if _, err := expfmt.MetricFamilyToText(&text, mf); err != nil {
		t.Fatal(err)
	}
	if _, err := expfmt.MetricFamilyToOpenMetrics(&om, mf); err != nil {
		t.Fatal(err)
	}
	for f, want := range [numFormats]string{formatText: text.String(), formatOpenMetrics: om.String()} {
		want = want[:headerLen([]byte(want))]
		if got := string(d.header[f]); got != want {
			t.Errorf("format %d: header\n%q\nwant\n%q", f, got, want)
		}
	}
	if want := []string{`clouddb_test_metric{a="`, `",b="`}; !slices.Equal(d.prefixes, want) || !slices.Equal(d.order, []int{1, 0}) {
		t.Errorf("prefixes %q, order %v: labels not in sorted order", d.prefixes, d.order)
	}
}

// headerLen returns the length of the comment lines that open an encoded
// family. Sample lines never start with '#'.
func headerLen(block []byte) int {
	n := 0
	for n < len(block) && block[n] == '#' {
		nl := bytes.IndexByte(block[n:], '\n')
		if nl < 0 {
			return len(block)
		}
		n += nl + 1
	}
	return n
}

// Rendering a chunk costs no allocation per series: the piece list and
// one slab per chunk, and the port label of each service and replica set
// (strconv.FormatInt).
func TestRenderAllocations(t *testing.T) {
	s := fleettest.Synthetic("p", 200)
	var r renderer
	part := groups[0].Part(s, 0, len(s.Services))
	for f := range numForms {
		if _, err := r.renderChunk(&groups[0], &part, f, nil); err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(5, func() {
			if _, err := r.renderChunk(&groups[0], &part, f, nil); err != nil {
				t.Fatal(err)
			}
		})
		if limit := 10.0 + 200; allocs > limit {
			t.Errorf("form %d: %.0f allocations to render 200 services, want at most %.0f", f, allocs, limit)
		}
	}
}

// TestRenderingUsageTimestamps: with --collect.usage.timestamps the usage
// samples carry their bucket's time, rendered as client_golang renders a
// sample timestamp in both formats (milliseconds in text, seconds in
// OpenMetrics); the other samples carry none.
func TestRenderingUsageTimestamps(t *testing.T) {
	s := dataplanetest.Snapshots()[0]
	u := *fleet.DataOf[dataplane.Usage](s, dataplane.PartUsage)
	u.Timestamps = true
	s.SetData(dataplane.PartUsage, &u)
	checkRendering(t, s)
	e := New(nil, nil)
	defer e.Close()
	e.SetSnapshot(s)
	text, _ := scrapeForms(t, e)
	ms := strconv.FormatInt(u.Samples()[0].Bucket.UnixMilli(), 10)
	if line := lineOf(text, "clouddb_service_system_cpu_usage_cores{"); !bytes.HasSuffix(line, []byte(" "+ms)) {
		t.Errorf("usage sample %q is not stamped %s", line, ms)
	}
	if line := lineOf(text, "clouddb_service_info{"); bytes.Count(line, []byte("} ")) != 1 || bytes.Count(bytes.SplitN(line, []byte("} "), 2)[1], []byte(" ")) != 0 {
		t.Errorf("state sample %q carries a timestamp", line)
	}
}

func lineOf(b []byte, prefix string) []byte {
	i := bytes.Index(b, []byte(prefix))
	if i < 0 {
		return nil
	}
	end := bytes.IndexByte(b[i:], '\n')
	return b[i : i+end]
}

// TestRenderChunkWritesOnlyItsFormat: a chunk is rendered for one form, so
// its lines are written in that form's format only (both were written, and
// the other's copy and scratch thrown away): the lines are its pieces'.
func TestRenderChunkWritesOnlyItsFormat(t *testing.T) {
	s := fleettest.Synthetic("p", 50)
	var r renderer
	part := groups[0].Part(s, 0, len(s.Services))
	for f := range numForms {
		cf, err := r.renderChunk(&groups[0], &part, f, nil)
		if err != nil {
			t.Fatal(err)
		}
		raw := 0
		for _, pc := range cf.pieces {
			raw += int(pc.raw)
		}
		if n := len(r.w.buf); n != raw {
			t.Fatalf("form %d: %d bytes written for %d bytes of pieces", f, n, raw)
		}
	}
}
