package collector

import (
	"strconv"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// cachedNote ends every resource metric's HELP: the value is never fetched
// at scrape time.
const cachedNote = " Cached from the last poll of the API."

// endpointLabels returns the host and port label values of an endpoint:
// empty strings when the API sent none, so that the label set stays the same
// for every series of a metric.
func endpointLabels(e *apiclient.Endpoint) (host, port string) {
	return endpointHost(e), endpointPort(e)
}

func endpointHost(e *apiclient.Endpoint) string {
	if e == nil {
		return ""
	}
	return e.Host
}

func endpointPort(e *apiclient.Endpoint) string {
	if e == nil {
		return ""
	}
	return strconv.FormatInt(int64(e.Port), 10)
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

// timestamp emits a _timestamp_seconds sample, or nothing when t is zero:
// an unknown point in time has no meaningful value, and 0 would read as 1970.
func timestamp(out *Sink, desc *Desc, t time.Time, labelValues ...string) {
	if t.IsZero() {
		return
	}
	out.gauge(desc, unixSeconds(t), labelValues...)
}

// milliCoresToCores converts the API's cpu_millis (thousandths of a core)
// to cores.
func milliCoresToCores(millis apiclient.Int) float64 { return float64(millis) / 1000 }

// gigabytesToBytes converts the API's memory_gbs to bytes, reading GB as GiB
// (2^30 bytes), the unit cloud providers size memory in.
func gigabytesToBytes(gbs apiclient.Int) float64 { return float64(gbs) * (1 << 30) }
