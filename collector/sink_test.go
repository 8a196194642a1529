package collector

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// oddSnapshot returns a project whose label values need escaping or are
// far from ASCII, and whose values are negative, fractional, huge, before
// 1970 or far in the future: what a drifting API might send.
func oddSnapshot() *fleet.Snapshot {
	s := testSnapshots()[0]
	s.ProjectID = `proj-"odd"`
	svc := &s.Services[0]
	svc.Name = "back\\slash \"quoted\"\nnew line"
	svc.RegionCode = "ünïcødé-😀"
	svc.ServiceType = ""
	svc.Status = `WEIRD "status"`
	svc.Created = apiclient.Time{Time: ts("1960-06-30T23:59:59.999Z")}
	svc.Resources[0].Spec.CPUMillis = -1500
	svc.Resources[0].Spec.MemoryGBs = 1 << 40
	svc.Resources[1].ID = `res\2`
	svc.Endpoint.Port = 65535
	s.Services[1].StatusSince = ts("3000-01-01T00:00:00.000000001Z")
	s.ReplicaSets[0].Nodes = -1
	s.ReplicaSets[0].CPUMillis = 1
	s.VPCs[0].Name = "\\"
	s.VPCs[0].CIDR = "\n"
	s.Peerings[0].PeerAccountID = `"`
	s.Parts[0].Duration = time.Nanosecond
	s.Parts[1].Duration = 90 * time.Minute
	s.Auth.APIKey.Name = "key with\ttab"
	return s
}

// checkRendering asserts that rendering snaps directly gives what a
// registry Gather of a FleetCollector over them gives: byte for byte what
// expfmt encodes from the parsed rendering in both formats, and the same
// families and series as the registry, whatever their order.
func checkRendering(t *testing.T, snaps ...*fleet.Snapshot) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewFleetCollectorOf(snaps...))
	want, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	projects := map[string]*projectRender{}
	for _, s := range snaps {
		p, err := renderProject(s, nil, nil)
		if err != nil {
			t.Fatalf("rendering %s: %v", s.ProjectID, err)
		}
		// Buffers sized after a previous rendering hold the same bytes.
		again, err := renderProject(s, p, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(p.families, again.families, func(a, b familyRender) bool {
			return a.name == b.name && bytes.Equal(a.samples[formatText], b.samples[formatText]) &&
				bytes.Equal(a.samples[formatOpenMetrics], b.samples[formatOpenMetrics])
		}) || p.size != again.size {
			t.Errorf("rendering %s again with a size hint gives other bytes", s.ProjectID)
		}
		projects[s.ProjectID] = p
	}
	r := merge(projects)
	text, om := r.formats[formatText].identity(), r.formats[formatOpenMetrics].identity()
	if len(text) != r.formats[formatText].size || len(om) != r.formats[formatOpenMetrics].size {
		t.Error("size does not match the bytes")
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
	for _, tc := range []struct {
		name  string
		snaps []*fleet.Snapshot
	}{
		{"test snapshots", testSnapshots()},
		{"odd values", []*fleet.Snapshot{oddSnapshot(), testSnapshots()[1]}},
		{"synthetic", []*fleet.Snapshot{syntheticSnapshot("big", 500), syntheticSnapshot("small", 3)}},
		{"empty project", []*fleet.Snapshot{{ProjectID: "empty", Taken: ts("2025-03-01T12:00:00Z")}}},
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
func TestDescHeader(t *testing.T) {
	help := `Back\slash, "quotes"` + "\nand a new line."
	d := newDesc("clouddb_test_metric", help, "b", "a")
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

// Rendering a series costs no allocation of its own: the buffers are the
// only allocations, and with a size hint they are one per format.
func TestRenderAllocations(t *testing.T) {
	s := syntheticSnapshot("p", 200)
	prev, err := renderProject(s, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(5, func() {
		if _, err := renderProject(s, prev, nil); err != nil {
			t.Fatal(err)
		}
	})
	// Per project: the writer, its family table, the two slabs, the
	// project and its family list, and the port label of each service and
	// replica set (strconv.FormatInt).
	if limit := 10.0 + 3*200; allocs > limit {
		t.Errorf("%.0f allocations to render 200 services, want at most %.0f", allocs, limit)
	}
}
