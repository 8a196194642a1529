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

type family struct {
	// order is the labels sorted by name, as const metrics write them.
	order    []int
	prefixes []string
	closing  string
	header   [numFormats][]byte
}

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

// counterHeaders writes the OpenMetrics family name without _total, as expfmt does.
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

// escapeHelp escapes as expfmt does; quote only in OpenMetrics.
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

// lineWriter writes text 0.0.4 or OpenMetrics 1.0 lines (format) byte for
// byte as expfmt encodes a const metric.
type lineWriter struct {
	samples [][numFormats][]byte // by family index
	format  int
	errs    []error
}

func newLineWriter() *lineWriter {
	return &lineWriter{samples: make([][numFormats][]byte, len(families))}
}

func (w *lineWriter) writeAll(rec *collector.Samples) {
	for i := range rec.Len() {
		d, value, labelValues := rec.At(i)
		w.write(d, value, labelValues, rec.Timestamp(i))
	}
}

// write takes ts in Unix milliseconds, 0 for none.
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
	b := w.samples[d.Family()][w.format]
	for i, j := range desc.order {
		b = append(b, desc.prefixes[i]...)
		b = appendLabelValue(b, labelValues[j])
	}
	b = append(b, desc.closing...)
	if w.format == formatOpenMetrics {
		b = appendOpenMetricsFloat(b, value)
		if ts != 0 {
			b = appendOpenMetricsFloat(append(b, ' '), float64(ts)/1000)
		}
	} else {
		b = appendTextFloat(b, value)
		if ts != 0 {
			b = strconv.AppendInt(append(b, ' '), ts, 10)
		}
	}
	w.samples[d.Family()][w.format] = append(b, '\n')
}

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

// appendOpenMetricsFloat adds ".0" where text would have neither "." nor exponent.
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
