package fleettest

import (
	"fmt"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// PinnedLabels are, by family, the labels that golden files hold of an info
// family whose labels grow with the API: those of its first release. The
// collector's table test (TestServiceInfoLabels) checks every label, so that
// a new one rewrites no golden file.
var PinnedLabels = map[string][]string{
	"clouddb_service_info": {"project_id", "service_id", "name", "region_code", "service_type", "environment", "host", "port"},
}

// PinnedHelp are, by family, the labels of a family whose HELP grows with the
// data-plane parts registered (the collector's parts list): golden files hold a
// fixed HELP, so that a new reader rewrites none (the data plane's tests check
// that the HELP names every part).
var PinnedHelp = map[string][]string{
	"clouddb_exporter_collector_success": {"project_id", "collector"},
}

// PinnedHelpText is the HELP golden files hold of the families of PinnedHelp.
const PinnedHelpText = "Pinned: the HELP names every registered part."

// The real HELP lists every label's field, so it grows with them.
var pinnedDescs = func() map[string]*prometheus.Desc {
	descs := map[string]*prometheus.Desc{}
	for name, labels := range PinnedLabels {
		descs[name] = prometheus.NewDesc(name, "Cut to the labels fleettest.PinnedLabels names.", labels, nil)
	}
	for name, labels := range PinnedHelp {
		descs[name] = prometheus.NewDesc(name, PinnedHelpText, labels, nil)
	}
	return descs
}()

// Pinned returns c with the families of PinnedLabels cut to those labels, and
// those of PinnedHelp with PinnedHelpText.
func Pinned(c prometheus.Collector) prometheus.Collector { return pinned{c} }

type pinned struct{ inner prometheus.Collector }

func (p pinned) Describe(ch chan<- *prometheus.Desc) {
	descs := make(chan *prometheus.Desc)
	go func() { p.inner.Describe(descs); close(descs) }()
	for d := range descs {
		if pinnedDescs[familyName(d)] == nil {
			ch <- d
		}
	}
	for _, d := range pinnedDescs {
		ch <- d
	}
}

func (p pinned) Collect(ch chan<- prometheus.Metric) {
	metrics := make(chan prometheus.Metric)
	go func() { p.inner.Collect(metrics); close(metrics) }()
	for m := range metrics {
		if d := pinnedDescs[familyName(m.Desc())]; d != nil {
			labels, ok := PinnedLabels[familyName(m.Desc())]
			if !ok {
				labels = PinnedHelp[familyName(m.Desc())]
			}
			m = cut(m, d, labels)
		}
		ch <- m
	}
}

// cut returns gauge m under d with only the given labels; a label m lacks
// makes it invalid, which fails the gathering.
func cut(m prometheus.Metric, d *prometheus.Desc, labels []string) prometheus.Metric {
	var pb dto.Metric
	if err := m.Write(&pb); err != nil {
		return prometheus.NewInvalidMetric(d, err)
	}
	values := make([]string, len(labels))
	for i, name := range labels {
		var found bool
		for _, l := range pb.GetLabel() {
			if l.GetName() == name {
				values[i], found = l.GetValue(), true
			}
		}
		if !found {
			return prometheus.NewInvalidMetric(d, fmt.Errorf("%s has no label %s", familyName(d), name))
		}
	}
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, pb.GetGauge().GetValue(), values...)
}

// familyName reads the name out of a Desc, which has no accessor for it.
func familyName(d *prometheus.Desc) string {
	_, rest, _ := strings.Cut(d.String(), `fqName: "`)
	name, _, _ := strings.Cut(rest, `"`)
	return name
}
