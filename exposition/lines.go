package exposition

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"hash/maphash"
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
// byte as expfmt encodes a const metric: a chunk's lines, family after
// family, into one buffer, so that its scratch is the largest chunk's
// lines rather than every family's largest.
type lineWriter struct {
	buf    []byte
	spans  [][2]int // by family index: its lines in buf
	sums   []uint64 // by family index: the samples' sum, 0 for none
	counts []int32  // by family index: its samples, then where they start in order
	order  []int32  // the samples' indices, family after family
	hashes []maphash.Hash
	// last is by family index the piece of the rendering replaced, nil for
	// none: a family of the same samples as its piece is not written again.
	last   []*piece
	format int
	errs   []error
}

func newLineWriter() *lineWriter {
	n := len(families)
	return &lineWriter{spans: make([][2]int, n), sums: make([]uint64, n), counts: make([]int32, n), hashes: make([]maphash.Hash, n), last: make([]*piece, n)}
}

// writeAll writes rec's samples but those of a family whose sum is its
// piece's in last (counts -1): the same samples make the same sum, and
// other samples the same one by a chance of one in 2^64.
func (w *lineWriter) writeAll(rec *collector.Samples) {
	w.buf = w.buf[:0]
	clear(w.counts)
	for i := range rec.Len() {
		d, value, labelValues := rec.At(i)
		fam := d.Family()
		if w.counts[fam] == 0 {
			w.hashes[fam].SetSeed(chunkSeed)
		}
		w.counts[fam]++
		sampleSum(&w.hashes[fam], value, labelValues, rec.Timestamp(i))
	}
	start := int32(0)
	for fam, n := range w.counts {
		w.spans[fam] = [2]int{}
		w.sums[fam] = 0
		if n == 0 {
			continue
		}
		w.sums[fam] = w.hashes[fam].Sum64()
		if w.same(fam) {
			w.counts[fam] = -1
			continue
		}
		w.counts[fam] = start
		start += n
	}
	w.order = slices.Grow(w.order[:0], int(start))[:start]
	for i := range rec.Len() {
		d, _, _ := rec.At(i)
		if at := w.counts[d.Family()]; at >= 0 {
			w.order[at] = int32(i)
			w.counts[d.Family()]++
		}
	}
	fam := -1
	for _, i := range w.order {
		d, value, labelValues := rec.At(int(i))
		if d.Family() != fam {
			fam = d.Family()
			w.spans[fam][0] = len(w.buf)
		}
		if !w.write(d, value, labelValues, rec.Timestamp(int(i))) {
			w.sums[fam] = 0 // Written again next time, to tell its error again.
		}
		w.spans[fam][1] = len(w.buf)
	}
}

func (w *lineWriter) same(fam int) bool {
	return w.sums[fam] != 0 && w.last[fam] != nil && w.last[fam].samples == w.sums[fam]
}

// sampleSum adds a sample to its family's sum: all that its line is made of.
func sampleSum(h *maphash.Hash, value float64, labelValues []string, ts int64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], math.Float64bits(value))
	_, _ = h.Write(b[:])
	binary.LittleEndian.PutUint64(b[:], uint64(ts))
	_, _ = h.Write(b[:])
	binary.LittleEndian.PutUint64(b[:], uint64(len(labelValues)))
	_, _ = h.Write(b[:])
	for _, v := range labelValues {
		binary.LittleEndian.PutUint64(b[:], uint64(len(v)))
		_, _ = h.Write(b[:])
		_, _ = h.WriteString(v)
	}
}

// lines returns family fam's lines.
func (w *lineWriter) lines(fam int) []byte {
	return w.buf[w.spans[fam][0]:w.spans[fam][1]]
}

// write takes ts in Unix milliseconds, 0 for none; false for a sample it cannot write.
func (w *lineWriter) write(d *collector.Desc, value float64, labelValues []string, ts int64) bool {
	// The checks of prometheus.NewConstMetric, with its messages.
	if len(labelValues) != len(d.Labels()) {
		w.errs = append(w.errs, fmt.Errorf("%s: expected %d label values but got %d", d.Name(), len(d.Labels()), len(labelValues)))
		return false
	}
	for _, v := range labelValues {
		if !utf8.ValidString(v) {
			w.errs = append(w.errs, fmt.Errorf("%s: label value %q is not valid UTF-8", d.Name(), v))
			return false
		}
	}
	desc := &families[d.Family()]
	b := w.buf
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
	b = append(b, '\n')
	w.buf = b
	return true
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
