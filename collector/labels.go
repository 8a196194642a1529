package collector

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// cachedNote ends every resource metric's HELP: the value is never fetched
// at scrape time.
const cachedNote = " Cached from the last poll of the API."

// newDesc builds a descriptor with variable labels only: every label of a
// resource metric comes from the snapshot, none is constant.
func newDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, labels, nil)
}

// gauge sends one gauge sample. A sample that cannot be built (a label value
// that is not valid UTF-8) becomes an invalid metric, so that the registry
// reports it and still serves every other series, instead of panicking in
// the middle of a Collect.
func gauge(ch chan<- prometheus.Metric, desc *prometheus.Desc, value float64, labelValues ...string) {
	m, err := prometheus.NewConstMetric(desc, prometheus.GaugeValue, value, labelValues...)
	if err != nil {
		m = prometheus.NewInvalidMetric(desc, err)
	}
	ch <- m
}

// endpointLabels returns the host and port label values of an endpoint:
// empty strings when the API sent none, so that the label set stays the same
// for every series of a metric.
func endpointLabels(e *apiclient.Endpoint) (host, port string) {
	if e == nil {
		return "", ""
	}
	return e.Host, strconv.FormatInt(int64(e.Port), 10)
}

// boolValue maps a flag to the 0/1 of a Prometheus boolean gauge.
func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// unixSeconds converts t to float seconds with sub-second precision. It
// avoids UnixNano, which overflows for dates past 2262 that a drifting API
// might still send.
func unixSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}

// timestamp sends a _timestamp_seconds sample, or nothing when t is zero:
// an unknown point in time has no meaningful value, and 0 would read as 1970.
func timestamp(ch chan<- prometheus.Metric, desc *prometheus.Desc, t time.Time, labelValues ...string) {
	if t.IsZero() {
		return
	}
	gauge(ch, desc, unixSeconds(t), labelValues...)
}

// milliCoresToCores converts the API's cpu_millis (thousandths of a core)
// to cores.
func milliCoresToCores(millis apiclient.Int) float64 { return float64(millis) / 1000 }

// gigabytesToBytes converts the API's memory_gbs to bytes, reading GB as GiB
// (2^30 bytes), the unit cloud providers size memory in.
func gigabytesToBytes(gbs apiclient.Int) float64 { return float64(gbs) * (1 << 30) }
