package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/clouddb/clouddb_exporter/admin"
	"github.com/clouddb/clouddb_exporter/apimetrics"
	"github.com/clouddb/clouddb_exporter/changes"
	"github.com/clouddb/clouddb_exporter/collector"
	"github.com/clouddb/clouddb_exporter/internal/collectortest"
	"github.com/clouddb/clouddb_exporter/internal/safefile"
	"github.com/clouddb/clouddb_exporter/pricing"
	"github.com/clouddb/clouddb_exporter/projects"
)

var update = flag.Bool("update", false, "rewrite the generated table of docs/metrics.md from the exporter's descriptors")

// metricsDoc is the metrics reference; its table sits between these markers
// and is rewritten by `go test . -run TestMetricsDoc -update`.
const (
	metricsDoc      = "docs/metrics.md"
	tableBeginMark  = "<!-- BEGIN GENERATED TABLE: go test . -run TestMetricsDoc -update -->"
	tableEndMark    = "<!-- END GENERATED TABLE -->"
	metricsDocTitle = "| Metric | Type | Labels | Stability | Description |"
)

// metricRow is one family as the reference lists it.
type metricRow struct {
	name, typ, help string
	labels          []string
}

// recorder is a prometheus.Registerer that keeps what is registered on it:
// the test hands it to every part that registers metrics, so a family that
// part adds later is listed without a change here.
type recorder struct{ collectors []prometheus.Collector }

func (r *recorder) Register(c prometheus.Collector) error {
	r.collectors = append(r.collectors, c)
	return nil
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	r.collectors = append(r.collectors, cs...)
}

func (r *recorder) Unregister(prometheus.Collector) bool { return false }

// TestMetricsDoc keeps the table of docs/metrics.md equal to the families
// the exporter serves on /metrics (its own Go and process metrics aside):
// name, type, labels and HELP, read from the descriptors of the resource
// collector, the API metrics, the reload metrics, the admin surface's metrics
// and the build info, wired as main wires them.
func TestMetricsDoc(t *testing.T) {
	rows := exporterMetricRows(t)
	if len(rows) < 40 {
		t.Fatalf("found %d families; the descriptors were not all read", len(rows))
	}
	want := renderMetricsTable(rows)

	doc, err := os.ReadFile(metricsDoc)
	if err != nil {
		t.Fatal(err)
	}
	begin := bytes.Index(doc, []byte(tableBeginMark))
	end := bytes.Index(doc, []byte(tableEndMark))
	if begin < 0 || end < begin {
		t.Fatalf("%s has no %q ... %q section", metricsDoc, tableBeginMark, tableEndMark)
	}
	begin += len(tableBeginMark) + 1
	got := string(doc[begin:end])
	if got == want {
		return
	}
	if *update {
		out := slices.Concat(doc[:begin:begin], []byte(want), doc[end:])
		if err := os.WriteFile(metricsDoc, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	gotLines, wantLines := strings.Split(got, "\n"), strings.Split(want, "\n")
	for _, l := range wantLines {
		if !slices.Contains(gotLines, l) {
			t.Errorf("%s lacks or has another row for:\n%s", metricsDoc, l)
		}
	}
	for _, l := range gotLines {
		if !slices.Contains(wantLines, l) {
			t.Errorf("%s has a row the exporter does not serve as such:\n%s", metricsDoc, l)
		}
	}
	if !t.Failed() {
		t.Errorf("%s's table is out of order", metricsDoc)
	}
	t.Log("run `go test . -run TestMetricsDoc -update` to rewrite the table")
}

// exporterMetricRows reads every clouddb_ family of the exporter.
func exporterMetricRows(t *testing.T) []metricRow {
	t.Helper()
	rec := &recorder{}
	apimetrics.New(rec)
	projects.NewReloader(rec, nil, nil, "", slog.New(slog.DiscardHandler))
	projects.NewDiscoveryMetrics(rec)
	pricing.NewEstimator(nil, rec, nil)
	safefile.NewHealth(rec)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	if _, err := admin.New(ctx, admin.Options{
		Projects:   func(string) (admin.Project, bool) { return admin.Project{}, false },
		Token:      "metrics-doc-test-token",
		Registerer: rec,
	}); err != nil {
		t.Fatal(err)
	}

	var rows []metricRow
	// The resource collector emits nothing without a snapshot, so its
	// types come from its descriptors: gauges, and the log collector's
	// counters.
	counters := map[string]bool{}
	for _, d := range collector.Families() {
		counters[d.Name()] = d.Counter()
	}
	for _, d := range describe(collectortest.NewFleetCollectorOf()) {
		typ := "gauge"
		if row := descRow(t, d, ""); counters[row.name] {
			typ = "counter"
		}
		rows = append(rows, descRow(t, d, typ))
	}
	for _, f := range changes.Families() {
		rows = append(rows, descRow(t, f.Desc, f.Type))
	}
	for _, c := range rec.collectors {
		for _, d := range describe(c) {
			rows = append(rows, descRow(t, d, collectorType(t, c)))
		}
	}
	// The build info comes from main's own registry, as served.
	mfs, err := newRegistry(true).Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		rows = append(rows, familyRow(mf))
	}

	rows = slices.DeleteFunc(rows, func(r metricRow) bool { return !strings.HasPrefix(r.name, "clouddb_") })
	slices.SortFunc(rows, func(a, b metricRow) int { return strings.Compare(a.name, b.name) })
	for i := 1; i < len(rows); i++ {
		if rows[i].name == rows[i-1].name {
			t.Errorf("family %s is described twice", rows[i].name)
		}
	}
	return rows
}

func describe(c prometheus.Collector) []*prometheus.Desc {
	ch := make(chan *prometheus.Desc)
	go func() {
		c.Describe(ch)
		close(ch)
	}()
	var descs []*prometheus.Desc
	for d := range ch {
		descs = append(descs, d)
	}
	return descs
}

// collectorType is the metric type of a collector of one family: the vector
// types by their Go type, anything else by gathering it.
func collectorType(t *testing.T, c prometheus.Collector) string {
	t.Helper()
	switch c.(type) {
	case *prometheus.CounterVec:
		return "counter"
	case *prometheus.GaugeVec:
		return "gauge"
	case *prometheus.HistogramVec:
		return "histogram"
	case *prometheus.SummaryVec:
		return "summary"
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil || len(mfs) != 1 {
		t.Fatalf("cannot tell the type of %v: %d families, %v", describe(c), len(mfs), err)
	}
	return strings.ToLower(mfs[0].GetType().String())
}

// descPattern reads prometheus.Desc.String(), the only way client_golang
// shows a descriptor's help and label names.
var descPattern = regexp.MustCompile(`^Desc\{fqName: ("(?:[^"\\]|\\.)*"), help: ("(?:[^"\\]|\\.)*"), (?:unit: "(?:[^"\\]|\\.)*", )?constLabels: \{([^}]*)\}, variableLabels: \{([^}]*)\}\}$`)

func descRow(t *testing.T, d *prometheus.Desc, typ string) metricRow {
	t.Helper()
	m := descPattern.FindStringSubmatch(d.String())
	if m == nil {
		t.Fatalf("cannot read descriptor %s", d)
	}
	name, err1 := strconv.Unquote(m[1])
	help, err2 := strconv.Unquote(m[2])
	if err1 != nil || err2 != nil {
		t.Fatalf("cannot read descriptor %s", d)
	}
	var labels []string
	if m[4] != "" {
		for _, l := range strings.Split(m[4], ",") {
			labels = append(labels, strings.TrimSuffix(strings.TrimPrefix(l, "c("), ")"))
		}
	}
	if m[3] != "" {
		var constant []string
		for _, pair := range strings.Split(m[3], ",") {
			constant = append(constant, strings.SplitN(pair, "=", 2)[0])
		}
		slices.Sort(constant)
		labels = append(labels, constant...)
	}
	return metricRow{name: name, typ: typ, help: help, labels: labels}
}

func familyRow(mf *dto.MetricFamily) metricRow {
	var labels []string
	if ms := mf.GetMetric(); len(ms) > 0 {
		for _, l := range ms[0].GetLabel() {
			labels = append(labels, l.GetName())
		}
	}
	return metricRow{name: mf.GetName(), typ: strings.ToLower(mf.GetType().String()), help: mf.GetHelp(), labels: labels}
}

func renderMetricsTable(rows []metricRow) string {
	var b strings.Builder
	b.WriteString(metricsDocTitle + "\n|---|---|---|---|---|\n")
	cell := strings.NewReplacer("|", `\|`, "\n", " ")
	for _, r := range rows {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", r.name, r.typ, strings.Join(r.labels, ", "), collector.Stability(r.name), cell.Replace(r.help))
	}
	return b.String()
}

// TestReadmeMetricFamilies keeps the README's "metric families at a glance"
// whole: every family the exporter serves matches one of its patterns
// (`clouddb_service_*` or a full name), and every pattern matches a family.
func TestReadmeMetricFamilies(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, glance, ok := strings.Cut(string(readme), "## Metrics at a glance")
	if !ok {
		t.Fatal("README.md has no \"Metrics at a glance\" section")
	}
	glance, _, _ = strings.Cut(glance, "\n## ")
	pattern := regexp.MustCompile("`(clouddb_[a-z_]*\\*?)`")
	var patterns []string
	for _, line := range strings.Split(glance, "\n") {
		if first, _, ok := strings.Cut(strings.TrimPrefix(line, "| "), " | "); ok && strings.HasPrefix(line, "| `") {
			for _, m := range pattern.FindAllStringSubmatch(first, -1) {
				patterns = append(patterns, m[1])
			}
		}
	}
	if len(patterns) == 0 {
		t.Fatal("README.md's metric families table names no family")
	}
	matches := func(p, name string) bool {
		if prefix, ok := strings.CutSuffix(p, "*"); ok {
			return strings.HasPrefix(name, prefix)
		}
		return p == name
	}
	rows := exporterMetricRows(t)
	for _, r := range rows {
		if !slices.ContainsFunc(patterns, func(p string) bool { return matches(p, r.name) }) {
			t.Errorf("README.md's metric families at a glance do not cover %s", r.name)
		}
	}
	for _, p := range patterns {
		if !slices.ContainsFunc(rows, func(r metricRow) bool { return matches(p, r.name) }) {
			t.Errorf("README.md's metric families at a glance name %s, which matches no family", p)
		}
	}
}

// TestMetricHelpIsShort: as node_exporter's (under 80 characters), a HELP
// says what the value is; where it comes from, its conversion and when it
// is absent are in metrics.md's sources table. They averaged 230
// characters (longest 730) before; build_info is client_golang's.
func TestMetricHelpIsShort(t *testing.T) {
	total, n := 0, 0
	for _, r := range exporterMetricRows(t) {
		if r.name == "clouddb_exporter_build_info" {
			continue
		}
		n++
		total += len(r.help)
		if len(r.help) > 100 || !strings.HasSuffix(r.help, ".") {
			t.Errorf("%s: HELP of %d characters, want one sentence of at most 100 saying what the value is (the details go in %s's sources table): %q", r.name, len(r.help), metricsDoc, r.help)
		}
	}
	if avg := total / n; avg > 80 {
		t.Errorf("HELP averages %d characters over %d families, want at most 80", avg, n)
	}
	t.Logf("%d families, HELP %d characters on average", n, total/n)
}

// TestMetricSourcesDoc keeps metrics.md's table of where each value comes
// from to one row per family the exporter serves.
func TestMetricSourcesDoc(t *testing.T) {
	doc, err := os.ReadFile(metricsDoc)
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "\n| Metric | Source |\n|---|---|\n")
	if !ok {
		t.Fatalf("%s has no | Metric | Source | table", metricsDoc)
	}
	table, _, _ = strings.Cut(table, "\n\n")
	rows := map[string]bool{}
	for _, line := range strings.Split(table, "\n") {
		name, _, _ := strings.Cut(strings.TrimPrefix(line, "| `"), "`")
		if rows[name] {
			t.Errorf("%s: %s has two source rows", metricsDoc, name)
		}
		rows[name] = true
	}
	for _, r := range exporterMetricRows(t) {
		if !rows[r.name] {
			t.Errorf("%s: no source row for %s", metricsDoc, r.name)
		}
		delete(rows, r.name)
	}
	for name := range rows {
		t.Errorf("%s: a source row for %s, which the exporter does not serve", metricsDoc, name)
	}
}
