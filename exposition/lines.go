package exposition

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/clouddb/clouddb_exporter/collector"
)

// family is what the line writer needs of a resource metric family,
// prepared once from its descriptor.
type family struct {
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

// families holds every family of collector.Families(), by the same index
// (loadCollector).
var families []family

func newFamilies(descs []*collector.Desc) []family {
	fams := make([]family, len(descs))
	for i, d := range descs {
		fams[i] = newFamily(d.Name(), d.Help(), d.Labels())
		if d.Counter() {
			fams[i].counterHeaders(d.Name(), d.Help())
		}
	}
	return fams
}

func newFamily(name, help string, labels []string) family {
	fam := family{order: make([]int, len(labels))}
	for i := range fam.order {
		fam.order[i] = i
	}
	slices.SortFunc(fam.order, func(a, b int) int { return cmp.Compare(labels[a], labels[b]) })
	lead := name + "{"
	for _, i := range fam.order {
		fam.prefixes = append(fam.prefixes, lead+labels[i]+`="`)
		lead = `",`
	}
	fam.closing = `"} `
	if len(labels) == 0 {
		fam.closing = name + " "
	}
	for f := range numFormats {
		h := append([]byte("# HELP "+name+" "), escapeHelp(help, f == formatOpenMetrics)...)
		h = append(h, "\n# TYPE "+name+" gauge\n"...)
		fam.header[f] = h[:len(h):len(h)]
	}
	return fam
}

// counterHeaders makes fam's HELP and TYPE lines a counter's, as expfmt
// writes them: the OpenMetrics family name without its _total suffix,
// which its samples keep.
func (fam *family) counterHeaders(name, help string) {
	for f := range numFormats {
		family := name
		if f == formatOpenMetrics {
			family = strings.TrimSuffix(name, "_total")
		}
		h := append([]byte("# HELP "+family+" "), escapeHelp(help, f == formatOpenMetrics)...)
		h = append(h, "\n# TYPE "+family+" counter\n"...)
		fam.header[f] = h[:len(h):len(h)]
	}
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
	return &lineWriter{samples: make([][numFormats][]byte, len(families))}
}

// writeAll writes every sample of rec.
func (w *lineWriter) writeAll(rec *collector.Samples) {
	for i := range rec.Len() {
		d, value, labelValues := rec.At(i)
		w.write(d, value, labelValues, rec.Timestamp(i))
	}
}

// write writes one sample line in each format; ts is an explicit
// timestamp in Unix milliseconds, 0 for none (written as expfmt does:
// milliseconds in the text format, seconds in OpenMetrics).
func (w *lineWriter) write(d *collector.Desc, value float64, labelValues []string, ts int64) {
	// The checks of prometheus.NewConstMetric, with its messages.
	if len(labelValues) != len(d.Labels()) {
		w.errs = append(w.errs, fmt.Errorf("%s: expected %d label values but got %d", d.Name(), len(d.Labels()), len(labelValues)))
		return
	}
	for _, v := range labelValues {
		if !utf8.ValidString(v) {
			w.errs = append(w.errs, fmt.Errorf("%s: label value %q is not valid UTF-8", d.Name(), v))
			return
		}
	}
	desc := &families[d.Family()]
	fam := &w.samples[d.Family()]
	text := fam[formatText]
	start := len(text)
	for i, j := range desc.order {
		text = append(text, desc.prefixes[i]...)
		text = appendLabelValue(text, labelValues[j])
	}
	text = append(text, desc.closing...)
	fam[formatOpenMetrics] = append(fam[formatOpenMetrics], text[start:]...)
	fam[formatOpenMetrics] = appendOpenMetricsFloat(fam[formatOpenMetrics], value)
	text = appendTextFloat(text, value)
	if ts != 0 {
		fam[formatOpenMetrics] = appendOpenMetricsFloat(append(fam[formatOpenMetrics], ' '), float64(ts)/1000)
		text = strconv.AppendInt(append(text, ' '), ts, 10)
	}
	fam[formatOpenMetrics] = append(fam[formatOpenMetrics], '\n')
	fam[formatText] = append(text, '\n')
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
