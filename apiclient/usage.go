package apiclient

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// Usage series suffixes (revision 2026, a preview): accounts prefix the names, so match by suffix.
const (
	SeriesCPUUsage         = "_system_cpu_usage_millicores"
	SeriesCPUTotal         = "_system_cpu_total_millicores"
	SeriesMemoryUsage      = "_system_memory_usage_bytes"
	SeriesMemoryTotal      = "_system_memory_total_bytes"
	SeriesDiskUsage        = "_system_disk_usage_bytes"
	SeriesDiskIOReadBytes  = "_system_disk_io_read_bytes"
	SeriesDiskIOWriteBytes = "_system_disk_io_write_bytes"
	SeriesDiskIOTotalBytes = "_system_disk_io_total_bytes"
	SeriesDiskIOReadOps    = "_system_disk_io_read_ops"
	SeriesDiskIOWriteOps   = "_system_disk_io_write_ops"
	SeriesDiskIOTotalOps   = "_system_disk_io_total_ops"
	SeriesQPS              = "_database_qps"
	SeriesConnections      = "_database_num_connections"
	SeriesJobDuration      = "_database_job_duration_usecs"
	SeriesJobSuccess       = "_database_job_success"
)

// UsageSeriesSuffixes is every documented usage series suffix.
var UsageSeriesSuffixes = []string{
	SeriesCPUTotal, SeriesCPUUsage, SeriesMemoryTotal, SeriesMemoryUsage, SeriesDiskUsage,
	SeriesDiskIOReadBytes, SeriesDiskIOWriteBytes, SeriesDiskIOTotalBytes,
	SeriesDiskIOReadOps, SeriesDiskIOWriteOps, SeriesDiskIOTotalOps,
	SeriesQPS, SeriesConnections, SeriesJobDuration, SeriesJobSuccess,
}

// Labels of usage series.
const (
	LabelRole    = "role"
	LabelOrdinal = "ordinal"
	LabelJobID   = "job_id"
)

// MinBucketSeconds is the smallest bucket the series operation accepts.
const MinBucketSeconds = 60

// SeriesFilter narrows a series request to points whose label key has value.
type SeriesFilter struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// SeriesRequest is the body of getServiceMetricsSeries; From and To are required.
type SeriesRequest struct {
	Name          string         `json:"name"`
	From          Time           `json:"from"`
	To            Time           `json:"to"`
	BucketSeconds int            `json:"bucket_seconds,omitempty"`
	Fn            string         `json:"fn,omitempty"`
	Filters       []SeriesFilter `json:"filters,omitempty"`
}

// Series is one label set of a usage series and its buckets, in any order.
type Series struct {
	Labels SeriesLabels  `json:"labels"`
	Data   []SeriesPoint `json:"data"`
}

// UnmarshalJSONFrom decodes as json would, the buckets at their number; null leaves s as it was.
func (s *Series) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	if k := dec.PeekKind(); k != '{' && k != 'n' && k != 0 { // 0: SkipValue returns the syntax error
		return fmt.Errorf("cannot unmarshal %v into a series", k)
	}
	return membersFrom(dec, seriesFields, func(field int, _ string) (err error) {
		switch field {
		case 0:
			return s.Labels.UnmarshalJSONFrom(dec)
		case 1:
			s.Data, err = decodePoints(dec)
			return err
		}
		return dec.SkipValue()
	})
}

var seriesFields = []string{"labels", "data"}

// decodePoints reads the buckets into an array on the stack (a series has 7 at the default
// interval), then into a slice of their number.
func decodePoints(dec *jsontext.Decoder) ([]SeriesPoint, error) {
	if k := dec.PeekKind(); k == 'n' || k == 0 {
		return nil, dec.SkipValue()
	} else if k != '[' {
		return nil, fmt.Errorf("cannot unmarshal %v into a list of buckets", k)
	}
	_, err := dec.ReadToken()
	var stack [16]SeriesPoint
	points := stack[:0]
	for err == nil && dec.PeekKind() != ']' {
		points = append(points, SeriesPoint{})
		err = points[len(points)-1].UnmarshalJSONFrom(dec)
	}
	if err == nil {
		_, err = dec.ReadToken()
	}
	return append(make([]SeriesPoint, 0, len(points)), points...), err
}

// SeriesPoint is one bucket; a nil Value is an empty bucket, not 0.
type SeriesPoint struct {
	Time  Time          `json:"time"`
	Value NullableFloat `json:"value"`
}

// UnmarshalJSONFrom leaves a zero Time, which callers skip, for a time that does not decode.
func (p *SeriesPoint) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*p = SeriesPoint{}
	return members(dec, pointFields, func(field int, _ string, v jsontext.Value) {
		if field == 1 {
			_ = p.Value.UnmarshalJSON(v)
		} else if p.Time.UnmarshalJSON(v) != nil {
			p.Time = Time{}
		}
	})
}

var pointFields = []string{"time", "value"}

// UnmarshalJSON implements json.Unmarshaler for encoding/json.
func (p *SeriesPoint) UnmarshalJSON(b []byte) error { return fromBytes(b, p.UnmarshalJSONFrom) }

// NullableFloat is a number or null; anything else is null: an unreadable bucket is an empty one.
type NullableFloat struct {
	Value float64
	Valid bool
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *NullableFloat) UnmarshalJSON(b []byte) error {
	*f = NullableFloat{}
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, jsonNull) { // the common empty bucket, without ParseFloat's error
		return nil
	}
	text := string(b)
	if len(b) > 0 && b[0] == '"' {
		s, err := unquote(b)
		if err != nil {
			return nil
		}
		text = strings.TrimSpace(s)
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) { // no measurement is infinite
		return nil
	}
	*f = NullableFloat{Value: v, Valid: true}
	return nil
}

// MarshalJSON implements json.Marshaler: the number, or null.
func (f NullableFloat) MarshalJSON() ([]byte, error) {
	if !f.Valid {
		return jsonNull, nil
	}
	return stdjson.Marshal(f.Value)
}

// SeriesLabels are a series' labels: other values keep their JSON text, null and nested are left out.
type SeriesLabels map[string]string

// UnmarshalJSONFrom implements json.UnmarshalerFrom.
func (l *SeriesLabels) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*l = nil
	if k := dec.PeekKind(); k == 'n' || k == '{' {
		*l = SeriesLabels{}
	}
	return members(dec, nil, func(_ int, name string, v jsontext.Value) {
		switch v.Kind() {
		case 'n', '{', '[':
			delete(*l, name) // the last of duplicate names counts
		case '"':
			(*l)[name], _ = text(v)
		default:
			(*l)[name] = string(v)
		}
	})
}

// UnmarshalJSON implements json.Unmarshaler for encoding/json.
func (l *SeriesLabels) UnmarshalJSON(b []byte) error { return fromBytes(b, l.UnmarshalJSONFrom) }

// GetServiceMetricsAvailableSeries lists a service's usage series names (revision 2026, a preview).
func (c *Client) GetServiceMetricsAvailableSeries(ctx context.Context, serviceID string) ([]string, error) {
	names, err := doList[seriesName](ctx, c, call{op: OpGetServiceMetricsAvailableSeries, ids: []string{serviceID}})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(names))
	for _, n := range names {
		if n != "" {
			out = append(out, string(n))
		}
	}
	return out, nil
}

// A name that is not a string is left out, not a failed answer.
type seriesName string

// UnmarshalJSON implements json.Unmarshaler.
func (n *seriesName) UnmarshalJSON(b []byte) error {
	s, err := unquote(bytes.TrimSpace(b))
	if err != nil {
		s = ""
	}
	*n = seriesName(s)
	return nil
}

// GetServiceMetricsSeries reads one usage series over a window; a POST that reads, retried as a read.
func (c *Client) GetServiceMetricsSeries(ctx context.Context, serviceID string, req SeriesRequest) ([]Series, error) {
	return doList[Series](ctx, c, call{op: OpGetServiceMetricsSeries, ids: []string{serviceID}, body: req})
}
