package apiclient

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSeriesIsARead checks that the usage series operation, a POST, is a
// read for everything that follows from the catalog: no admin write, in
// the reads of the operation list, retried on 5xx and dropped connections
// like a GET.
func TestSeriesIsARead(t *testing.T) {
	o, ok := byName[OpGetServiceMetricsSeries]
	if !ok || o.Write || o.Method != http.MethodPost {
		t.Fatalf("catalog entry = %+v, %v; want a POST read", o, ok)
	}
	reads := Operations[:slices.Index(Operations, OpCreateService)]
	for _, op := range []string{OpGetServiceMetricsSeries, OpGetServiceMetricsAvailableSeries, OpGetServiceLogs} {
		if !slices.Contains(reads, op) {
			t.Errorf("%s is not among the reads of Operations", op)
		}
	}
	for _, f := range []failure{{status: 500}, {status: 503}, {drop: true}} {
		srv, n := scriptedServer(t, []failure{f}, 200, `[{"labels":{"role":"primary"},"data":[{"time":"2026-01-01T00:00:00Z","value":1}]}]`)
		c, _, obs := newTestClient(t, srv, nil)
		got, err := c.GetServiceMetricsSeries(t.Context(), "s1", SeriesRequest{Name: "x_database_qps"})
		if err != nil || len(got) != 1 || !got[0].Data[0].Value.Valid {
			t.Fatalf("%+v: series = %+v, %v; want the answer after one retry", f, got, err)
		}
		if n.Load() != 2 || len(obs.retries) != 1 {
			t.Errorf("%+v: server saw %d requests, observer %d retries; want 2 and 1", f, n.Load(), len(obs.retries))
		}
	}
}

// TestGoldenUsageAndLogs decodes the simulator's answers (recorded from
// cloudsim, demo scenario) and hand-written variants: unknown series names,
// extra and non-string labels, null and unreadable buckets, unknown
// severities and the deprecated logs shape all decode.
func TestGoldenUsageAndLogs(t *testing.T) {
	srv := fixtureServer(t, "revision2026", map[string]string{
		"/svc-a/metrics/available-series": "available_series.json",
		"/svc-a/metrics/series":           "series.json",
		"/svc-b/metrics/series":           "series_variants.json",
		"/svc-a/logs":                     "logs.json",
		"/svc-b/logs":                     "logs_deprecated.json",
	})
	c, _, obs := newTestClient(t, srv, nil)
	ctx := t.Context()

	names, err := c.GetServiceMetricsAvailableSeries(ctx, "svc-a")
	if err != nil || len(names) < len(UsageSeriesSuffixes) {
		t.Fatalf("available series = %v, %v", names, err)
	}
	for _, suffix := range UsageSeriesSuffixes {
		if !slices.ContainsFunc(names, func(n string) bool { return len(n) > len(suffix) && n[len(n)-len(suffix):] == suffix }) {
			t.Errorf("available series lack *%s", suffix)
		}
	}

	series, err := c.GetServiceMetricsSeries(ctx, "svc-a", SeriesRequest{Name: "cloudsim_system_cpu_usage_millicores"})
	if err != nil || len(series) != 2 {
		t.Fatalf("series: %d label sets, %v; want primary and replica", len(series), err)
	}
	for _, s := range series {
		if s.Labels[LabelRole] == "" || s.Labels[LabelOrdinal] == "" || len(s.Data) == 0 {
			t.Errorf("series %v: %d buckets", s.Labels, len(s.Data))
		}
		if last := s.Data[len(s.Data)-1]; last.Value.Valid {
			t.Errorf("series %v: newest bucket %v is not null (the recording's newest bucket is still open)", s.Labels, last)
		}
	}

	variants, err := c.GetServiceMetricsSeries(ctx, "svc-b", SeriesRequest{Name: "acme_database_job_success"})
	if err != nil {
		t.Fatalf("variants: %v", err)
	}
	want := []Series{
		{Labels: SeriesLabels{"job_id": "1001", "role": "primary", "ordinal": "0", "shard": "true"}, Data: []SeriesPoint{
			{Time: Time{time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC)}, Value: NullableFloat{Value: 1, Valid: true}},
			{Time: Time{time.Date(2026, 1, 2, 3, 5, 0, 0, time.UTC)}, Value: NullableFloat{Value: 0.5, Valid: true}},
			{Time: Time{time.Date(2026, 1, 2, 3, 6, 0, 0, time.UTC)}},
			{Time: Time{time.Date(2026, 1, 2, 3, 7, 0, 0, time.UTC)}},
			{Value: NullableFloat{Value: 2, Valid: true}},
		}},
		{Labels: nil, Data: nil},
	}
	if !reflect.DeepEqual(variants, want) {
		t.Errorf("variants decoded\n%+v\nwant\n%+v", variants, want)
	}

	page, err := c.GetServiceLogs(ctx, "svc-a", LogsQuery{})
	if err != nil || len(page.Entries) == 0 || page.LastCursor == "" {
		t.Fatalf("logs = %+v, %v", page, err)
	}
	for i, e := range page.Entries {
		if e.Timestamp.IsZero() || e.Severity == "" {
			t.Errorf("entry %d = %+v", i, e)
		}
		if i > 0 && e.Timestamp.After(page.Entries[i-1].Timestamp.Time) {
			t.Errorf("entry %d is newer than the one before: not newest first", i)
		}
	}

	old, err := c.GetServiceLogs(ctx, "svc-b", LogsQuery{})
	if err != nil {
		t.Fatalf("deprecated logs: %v", err)
	}
	wantOld := []LogEntry{
		{Timestamp: Time{time.Date(2026, 1, 2, 3, 4, 5, 678000000, time.UTC)}, Severity: "ERROR", Message: "relation \"x\" does not exist"},
		{Timestamp: Time{time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}, Severity: "SHOUT", Message: "unknown severity"},
		{Message: "a line without timestamp or severity"},
	}
	if !reflect.DeepEqual(old.Entries, wantOld) || old.LastCursor != "old-cursor" {
		t.Errorf("deprecated logs read as %+v (cursor %q), want %+v", old.Entries, old.LastCursor, wantOld)
	}
	if len(obs.decodeErrors) != 0 {
		t.Errorf("decode errors observed: %v", obs.decodeErrors)
	}
}

// TestNullableFloat: a bucket value that is no finite number (NaN or an
// infinity, as a string or out of range) is an empty bucket, never a value;
// numbers, numeric strings and negative values are kept as given.
func TestNullableFloat(t *testing.T) {
	for _, c := range []struct {
		in    string
		want  float64
		valid bool
	}{
		{`12.5`, 12.5, true},
		{`"7"`, 7, true},
		{`-3`, -3, true},
		{`0`, 0, true},
		{`null`, 0, false},
		{`"NaN"`, 0, false},
		{`"Inf"`, 0, false},
		{`"-Infinity"`, 0, false},
		{`"+inf"`, 0, false},
		{`1e999`, 0, false},
		{`true`, 0, false},
		{`{"v":1}`, 0, false},
		{`"12 cores"`, 0, false},
	} {
		var f NullableFloat
		if err := json.Unmarshal([]byte(c.in), &f); err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if f.Valid != c.valid || f.Value != c.want {
			t.Errorf("%s decodes as %+v, want value %v valid %v", c.in, f, c.want, c.valid)
		}
	}
}

// TestBadSeriesCostsOnlyItself: a series of a usage answer that does not
// decode (its buckets no list, itself no object) is left out and counted as
// a decode error, as a bad element of a resource list is; the other series
// are kept, and values that are no finite number (NaN, a string, a number
// out of range) cost only their bucket.
func TestBadSeriesCostsOnlyItself(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, `[
			{"labels":{"role":"primary"},"data":"NaN"},
			{"labels":{"role":"replica","ordinal":"1"},"data":[{"time":"2026-01-01T00:00:00Z","value":"NaN"},{"time":"2026-01-01T00:01:00Z","value":1e999},{"time":"2026-01-01T00:02:00Z","value":"many"},{"time":"2026-01-01T00:03:00Z","value":7}]},
			{"labels":{"role":"replica","ordinal":"2"},"data":{"time":"2026-01-01T00:00:00Z","value":1}},
			12345678901234567890123,
			{"labels":{"role":"replica","ordinal":"3"},"data":[{"time":"2026-01-01T00:00:00Z","value":3}]}
		]`)
	})
	c, _, obs := newTestClient(t, srv, nil)
	got, err := c.GetServiceMetricsSeries(t.Context(), "s1", SeriesRequest{Name: "x_database_qps"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Labels["ordinal"] != "1" || got[1].Labels["ordinal"] != "3" {
		t.Fatalf("series %+v: want ordinals 1 and 3", got)
	}
	var valid []float64
	for _, p := range got[0].Data {
		if p.Value.Valid {
			valid = append(valid, p.Value.Value)
		}
	}
	if len(got[0].Data) != 4 || !reflect.DeepEqual(valid, []float64{7}) {
		t.Errorf("buckets %+v: want four, only the last with a value", got[0].Data)
	}
	if want := []string{OpGetServiceMetricsSeries, OpGetServiceMetricsSeries, OpGetServiceMetricsSeries}; !reflect.DeepEqual(obs.decodeErrors, want) {
		t.Errorf("decode errors observed %v, want one per series left out", obs.decodeErrors)
	}
}

// TestSeriesDecodeOwnsItsParts: a series of more buckets than the decoder
// holds on its stack keeps them all, in order, in a slice of their number;
// its labels are still redacted and cut, the clean ones as they came.
func TestSeriesDecodeOwnsItsParts(t *testing.T) {
	long := strings.Repeat("x", 2*MaxTextBytes)
	var points []string
	for m := range 20 {
		points = append(points, fmt.Sprintf(`{"time":"2026-11-24T01:%02d:00Z","value":%d}`, m, m))
	}
	body := `[{"labels":{"role":"primary","ordinal":"0","note":"` + long + `","key":"v ` + testAccessKey + `"},"data":[` + strings.Join(points, ",") + `]},` +
		`{"labels":{"role":"replica","ordinal":"1"},"data":[` + points[3] + `]}]`
	var got []Series
	cuts := 0
	red := newRedactor(testAccessKey, testSecretKey, testAPIKey)
	if err := decodeStream("x", strings.NewReader(body), &got, func(FieldError) {}, red, func() ([]byte, bool) { return nil, false },
		streamOptions{maxValue: 1 << 20, cut: func() { cuts++ }}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got[0].Data) != 20 || cap(got[0].Data) != 20 || len(got[1].Data) != 1 || got[1].Data[0].Value.Value != 3 {
		t.Fatalf("got %+v", got)
	}
	for m, p := range got[0].Data {
		if p.Time.Minute() != m || p.Value.Value != float64(m) {
			t.Errorf("bucket %d is %+v", m, p)
		}
	}
	l := got[0].Labels
	if cuts != 1 || !strings.HasSuffix(l["note"], TruncatedMark) || strings.Contains(l["key"], testAccessKey) || l[LabelRole] != "primary" || got[1].Labels[LabelOrdinal] != "1" {
		t.Errorf("labels %v, %v (%d cut): want the note cut, the key redacted, the others kept", l, got[1].Labels, cuts)
	}
}
