// Package collectortest is the oracle the exposition is tested against: a
// prometheus.Collector over the collector's groups, encoded by client_golang
// where the exposition writes its lines itself.
package collectortest

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clouddb/clouddb_exporter/collector"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// FleetCollector collects the groups of its source's snapshots.
type FleetCollector struct {
	source func() []*fleet.Snapshot
}

// NewFleetCollector returns a collector over source() at each Collect; nil
// snapshots are skipped, and a project must appear only once.
func NewFleetCollector(source func() []*fleet.Snapshot) *FleetCollector {
	return &FleetCollector{source: source}
}

// NewFleetCollectorOf returns a collector over a fixed set of snapshots.
func NewFleetCollectorOf(snapshots ...*fleet.Snapshot) *FleetCollector {
	return NewFleetCollector(func() []*fleet.Snapshot { return snapshots })
}

// Describe implements prometheus.Collector.
func (c *FleetCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range collector.Families() {
		ch <- promDesc(d)
	}
}

// Collect implements prometheus.Collector: the samples each group records,
// as const metrics (an unbuildable one, invalid UTF-8, as an invalid metric).
func (c *FleetCollector) Collect(ch chan<- prometheus.Metric) {
	descs := map[*collector.Desc]*prometheus.Desc{}
	var rec collector.Samples
	for _, s := range c.source() {
		if s == nil {
			continue
		}
		groups := collector.Groups()
		for g := range groups {
			rec.Reset()
			groups[g].Collect(rec.Sink(), s)
			for i := range rec.Len() {
				d, v, lv := rec.At(i)
				if descs[d] == nil {
					descs[d] = promDesc(d)
				}
				ch <- metric(descs[d], d.Counter(), v, rec.Timestamp(i), lv)
			}
		}
	}
}

func promDesc(d *collector.Desc) *prometheus.Desc {
	return prometheus.NewDesc(d.Name(), d.Help(), d.Labels(), nil)
}

func metric(d *prometheus.Desc, counter bool, v float64, tsMillis int64, labelValues []string) prometheus.Metric {
	vt := prometheus.GaugeValue
	if counter {
		vt = prometheus.CounterValue
	}
	m, err := prometheus.NewConstMetric(d, vt, v, labelValues...)
	switch {
	case err != nil:
		return prometheus.NewInvalidMetric(d, err)
	case tsMillis != 0:
		return prometheus.NewMetricWithTimestamp(time.UnixMilli(tsMillis), m)
	}
	return m
}
