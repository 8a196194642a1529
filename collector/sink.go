package collector

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"
)

// metricDesc is the descriptor of a resource metric together with what the
// exposition writer needs of it: name, HELP and label names are kept here
// rather than parsed back out of Desc.String().
type metricDesc struct {
	desc   *prometheus.Desc
	name   string
	help   string
	labels []string // in the order the collect functions pass their values

	// family is the index of the metric in familyDescs, where the metrics
	// are sorted by name: the order of families in a rendering.
	family int
	// order holds the indexes of labels sorted by label name, the order in
	// which const metrics, and so a registry, write them.
	order []int
	// prefixes[i] goes before the value of label order[i]: `name{label="`
	// for the first, `",label="` for the others. closing ends the label
	// set and the space before the value.
	prefixes []string
	closing  string
	// header is the HELP and TYPE lines in each format.
	header [numFormats][]byte
}

// newDesc builds the descriptor of a resource gauge with variable labels
// only: every label of a resource metric comes from the snapshot, none is
// constant. The names are written unquoted by the exposition writer, so a
// name outside the legacy character set is a programming error.
func newDesc(name, help string, labels ...string) *metricDesc {
	if !model.LegacyValidation.IsValidMetricName(name) {
		panic("collector: metric name " + strconv.Quote(name) + " needs quoting")
	}
	for _, l := range labels {
		if !model.LegacyValidation.IsValidLabelName(l) {
			panic("collector: label name " + strconv.Quote(l) + " of " + name + " needs quoting")
		}
	}
	d := &metricDesc{
		desc:   prometheus.NewDesc(name, help, labels, nil),
		name:   name,
		help:   help,
		labels: labels,
		order:  make([]int, len(labels)),
	}
	for i := range d.order {
		d.order[i] = i
	}
	slices.SortFunc(d.order, func(a, b int) int { return cmp.Compare(labels[a], labels[b]) })
	lead := name + "{"
	for _, i := range d.order {
		d.prefixes = append(d.prefixes, lead+labels[i]+`="`)
		lead = `",`
	}
	d.closing = `"} `
	if len(labels) == 0 {
		d.closing = d.name + " "
	}
	for f := range numFormats {
		h := append([]byte("# HELP "+d.name+" "), escapeHelp(help, f == formatOpenMetrics)...)
		h = append(h, "\n# TYPE "+d.name+" gauge\n"...)
		d.header[f] = h[:len(h):len(h)]
	}
	return d
}

// escapeHelp escapes HELP text as expfmt does: backslash and newline in
// both formats, and the double quote too in OpenMetrics.
func escapeHelp(help string, quote bool) []byte {
	var b []byte
	for i := 0; i < len(help); i++ {
		switch c := help[i]; {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '"' && quote:
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// sink receives the samples of the resource metrics. The collect functions
// (collectServices and the others) emit through it, so that what each
// metric holds is written once and serves both uses: with ch set, the
// samples become const metrics for a registry (FleetCollector); with w set,
// they become exposition lines (the Exposition's rendering).
//
// It is a struct rather than an interface on purpose: a call through an
// interface makes its variadic label values escape, which would cost one
// allocation per series, the very cost the direct rendering avoids.
type sink struct {
	ch chan<- prometheus.Metric
	w  *lineWriter
}

// gauge emits one gauge sample. On the const metric path, a sample that
// cannot be built (a label value that is not valid UTF-8) becomes an
// invalid metric, so that the registry reports it and still serves every
// other series, instead of panicking in the middle of a Collect; the line
// writer leaves such a sample out and records the error.
func (s *sink) gauge(d *metricDesc, value float64, labelValues ...string) {
	if s.w != nil {
		s.w.write(d, value, labelValues)
		return
	}
	m, err := prometheus.NewConstMetric(d.desc, prometheus.GaugeValue, value, labelValues...)
	if err != nil {
		m = prometheus.NewInvalidMetric(d.desc, err)
	}
	s.ch <- m
}

// lineWriter writes samples as exposition lines into one buffer per family
// and format, in the Prometheus text format 0.0.4 and in OpenMetrics 1.0,
// byte for byte as expfmt encodes the same const metric. Only the value
// differs between the two formats, so the name and labels are escaped once
// and copied.
type lineWriter struct {
	samples [][numFormats][]byte // by family index
	errs    []error
}

func newLineWriter() *lineWriter {
	return &lineWriter{samples: make([][numFormats][]byte, len(familyDescs))}
}

func (w *lineWriter) write(d *metricDesc, value float64, labelValues []string) {
	// The checks of prometheus.NewConstMetric, with its messages.
	if len(labelValues) != len(d.labels) {
		w.errs = append(w.errs, fmt.Errorf("%s: expected %d label values but got %d", d.name, len(d.labels), len(labelValues)))
		return
	}
	for _, v := range labelValues {
		if !utf8.ValidString(v) {
			w.errs = append(w.errs, fmt.Errorf("%s: label value %q is not valid UTF-8", d.name, v))
			return
		}
	}
	fam := &w.samples[d.family]
	text := fam[formatText]
	start := len(text)
	for i, j := range d.order {
		text = append(text, d.prefixes[i]...)
		text = appendLabelValue(text, labelValues[j])
	}
	text = append(text, d.closing...)
	om := append(fam[formatOpenMetrics], text[start:]...)
	fam[formatOpenMetrics] = append(appendOpenMetricsFloat(om, value), '\n')
	fam[formatText] = append(appendTextFloat(text, value), '\n')
}

// appendLabelValue appends v escaped as a label value: backslash, double
// quote and newline, in both formats.
func appendLabelValue(b []byte, v string) []byte {
	plain := 0
	for plain < len(v) && v[plain] != '\\' && v[plain] != '"' && v[plain] != '\n' {
		plain++
	}
	if plain == len(v) {
		return append(b, v...)
	}
	b = append(b, v[:plain]...)
	for i := plain; i < len(v); i++ {
		switch c := v[i]; c {
		case '\\':
			b = append(b, `\\`...)
		case '"':
			b = append(b, `\"`...)
		case '\n':
			b = append(b, `\n`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// appendTextFloat appends v as expfmt's text encoder writes a value: the
// shortest 'g' representation, 0 for negative zero, +Inf, -Inf, NaN.
func appendTextFloat(b []byte, v float64) []byte {
	switch {
	case v == 0:
		return append(b, '0')
	case v == 1:
		return append(b, '1')
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case math.IsInf(v, +1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

// appendOpenMetricsFloat appends v as expfmt's OpenMetrics encoder writes a
// value: like the text format, with ".0" added to a number that would
// otherwise have neither a "." nor an exponent.
func appendOpenMetricsFloat(b []byte, v float64) []byte {
	switch {
	case v == 0:
		return append(b, "0.0"...)
	case v == 1:
		return append(b, "1.0"...)
	case math.IsNaN(v) || math.IsInf(v, 0):
		return appendTextFloat(b, v)
	}
	start := len(b)
	b = strconv.AppendFloat(b, v, 'g', -1, 64)
	for _, c := range b[start:] {
		if c == '.' || c == 'e' {
			return b
		}
	}
	return append(b, ".0"...)
}
