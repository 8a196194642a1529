package collector

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/common/model"
)

// Desc describes one resource metric family: its name, HELP and labels, which
// an encoder writes as given.
type Desc struct {
	name    string
	help    string
	labels  []string // in the order the collect functions pass their values
	counter bool
	// part is the data-plane part that registered it, "" for the state's.
	part string

	family int
}

// newDesc panics on a name that needs quoting: encoders write names unquoted.
func newDesc(name, help string, labels ...string) *Desc {
	if !model.LegacyValidation.IsValidMetricName(name) {
		panic("collector: metric name " + strconv.Quote(name) + " needs quoting")
	}
	for _, l := range labels {
		if !model.LegacyValidation.IsValidLabelName(l) {
			panic("collector: label name " + strconv.Quote(l) + " of " + name + " needs quoting")
		}
	}
	return &Desc{
		name:   name,
		help:   help,
		labels: labels,
	}
}

// NewDesc builds a gauge descriptor for a part registered with RegisterPart.
func NewDesc(name, help string, labels ...string) *Desc { return newDesc(name, help, labels...) }

// NewCounterDesc builds the descriptor of such a part's counter.
func NewCounterDesc(name, help string, labels ...string) *Desc {
	return newCounterDesc(name, help, labels...)
}

func newCounterDesc(name, help string, labels ...string) *Desc {
	if !strings.HasSuffix(name, "_total") {
		panic("collector: counter " + strconv.Quote(name) + " must end in _total")
	}
	d := newDesc(name, help, labels...)
	d.counter = true
	return d
}

// Part returns the data-plane part whose RegisterPart added d, "" for a family of the state.
func (d *Desc) Part() string { return d.part }

// Counter reports whether the metric is a counter; the others are gauges.
func (d *Desc) Counter() bool { return d.counter }

// Name returns the metric name.
func (d *Desc) Name() string { return d.name }

// Help returns the HELP text, unescaped.
func (d *Desc) Help() string { return d.help }

// Labels returns the label names in sample order; the slice must not be modified.
func (d *Desc) Labels() []string { return d.labels }

// Family returns the index of d in Families().
func (d *Desc) Family() int {
	familyDescs() // numbers the families the first time
	return d.family
}

// Families returns every descriptor sorted by name, the exposition's order.
func Families() []*Desc { return familyDescs() }

var familyDescs = sync.OnceValue(func() []*Desc { return sortFamilies(allDescs()) })

func sortFamilies(descs []*Desc) []*Desc {
	sorted := slices.Clone(descs)
	slices.SortFunc(sorted, func(a, b *Desc) int { return cmp.Compare(a.name, b.name) })
	for i, d := range sorted {
		d.family = i
	}
	return sorted
}
