package collector

import (
	"strconv"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// endpointLabels returns "" for a missing endpoint: every series keeps one label set.
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

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// unixSeconds avoids UnixNano, which overflows past 2262 (a drifting API).
func unixSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}

// timestamp emits nothing for a zero t: 0 would read as 1970.
func timestamp(out *Sink, desc *Desc, t time.Time, labelValues ...string) {
	if t.IsZero() {
		return
	}
	out.gauge(desc, unixSeconds(t), labelValues...)
}

func milliCoresToCores(millis apiclient.Int) float64 { return float64(millis) / 1000 }

// gigabytesToBytes reads GB as GiB, the unit cloud providers size memory in.
func gigabytesToBytes(gbs apiclient.Int) float64 { return float64(gbs) * (1 << 30) }
