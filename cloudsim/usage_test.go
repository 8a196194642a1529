package cloudsim

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

func seriesPath(id string) string { return servicesPath + "/" + id + "/metrics/series" }

func (e *env) series(id, name string, from, to time.Time, extra map[string]any, opts ...reqOpt) []apiclient.Series {
	e.t.Helper()
	body := map[string]any{"name": name, "from": from.Format(time.RFC3339), "to": to.Format(time.RFC3339)}
	for k, v := range extra {
		body[k] = v
	}
	return decode[[]apiclient.Series](e.t, e.must(http.StatusOK, "POST", seriesPath(id), body, opts...))
}

func TestUsageSeries(t *testing.T) {
	e := newEnvRev(t, Timings{}, Revision2026)
	svc := create2026(e, "main", "2000", "8", map[string]any{"replica_count": 2})
	id := svc.ServiceID
	e.clock.Advance(3 * time.Hour)

	names := decode[[]string](t, e.must(http.StatusOK, "GET", servicesPath+"/"+id+"/metrics/available-series", nil))
	for _, suf := range apiclient.UsageSeriesSuffixes {
		if !contains(names, SeriesPrefix+suf) {
			t.Errorf("available series %v lack %s%s", names, SeriesPrefix, suf)
		}
	}
	if !contains(names, extraSeries) {
		t.Errorf("available series %v lack the undocumented one", names)
	}

	now := e.clock.Now()
	from := now.Add(-10 * time.Minute)
	usage := e.series(id, SeriesPrefix+sufCPUUsage, from, now, nil)
	if len(usage) != 3 {
		t.Fatalf("cpu usage: %d label sets, want primary and 2 replicas", len(usage))
	}
	inline := size(e.getService(id).Metrics.MilliCPU)
	for i, s := range usage {
		wantRole := "replica"
		if i == 0 {
			wantRole = "primary"
		}
		if s.Labels["role"] != wantRole || s.Labels["ordinal"] != string(rune('0'+i)) {
			t.Errorf("label set %d = %v", i, s.Labels)
		}
		if len(s.Data) != 10 {
			t.Errorf("%v: %d buckets, want every bucket of the 10-minute window", s.Labels, len(s.Data))
		}
		if s.Data[len(s.Data)-1].Value.Valid {
			t.Errorf("%v: the newest bucket has a value before it is a minute old", s.Labels)
		}
		var newest *apiclient.SeriesPoint
		for j := range s.Data {
			p := &s.Data[j]
			if j > 0 && p.Time.Sub(s.Data[j-1].Time.Time) != time.Minute {
				t.Errorf("buckets %d and %d are not a minute apart", j-1, j)
			}
			if p.Value.Valid {
				newest = p
			}
		}
		if newest == nil {
			t.Fatalf("%v: no value at all", s.Labels)
		}
		if v := newest.Value.Value; v <= 0 || v >= 2000 {
			t.Errorf("%v: cpu usage %v is not below the size 2000", s.Labels, v)
		}
		if i == 0 && (newest.Value.Value < float64(inline)*0.8 || newest.Value.Value > float64(inline)*1.2) {
			t.Errorf("primary cpu usage %v is not near the inline milli_cpu %d", newest.Value.Value, inline)
		}
	}
	total := e.series(id, SeriesPrefix+sufMemTotal, from, now, map[string]any{"filters": []map[string]string{{"key": "role", "value": "primary"}}})
	if len(total) != 1 || total[0].Data[0].Value.Value != 8*(1<<30) {
		t.Errorf("memory total of the primary = %+v, want 8 GiB", total)
	}
	if mem := e.series(id, SeriesPrefix+sufMemUsage, from, now, nil); mem[0].Data[0].Value.Value >= 8*(1<<30) {
		t.Errorf("memory usage %v is not below the total", mem[0].Data[0].Value.Value)
	}

	// The same request gives the same answer: the data is a function of
	// the service and the time.
	again := e.series(id, SeriesPrefix+sufCPUUsage, from, now, nil)
	if again[0].Data[3] != usage[0].Data[3] {
		t.Errorf("values changed between two reads: %v then %v", usage[0].Data[3], again[0].Data[3])
	}

	// Job series: one label set per job, on the primary.
	jobs := e.series(id, SeriesPrefix+sufJobSuccess, from, now, nil)
	if len(jobs) < 2 {
		t.Fatalf("a time-series service has %d jobs, want 2 or more", len(jobs))
	}
	for _, j := range jobs {
		if j.Labels["job_id"] == "" || j.Labels["role"] != "primary" {
			t.Errorf("job labels %v", j.Labels)
		}
	}

	// Paused: no CPU usage at all, the totals stay.
	e.must(http.StatusAccepted, "POST", servicesPath+"/"+id+"/stop", nil)
	for _, s := range e.series(id, SeriesPrefix+sufCPUUsage, from, now, nil) {
		for _, p := range s.Data {
			if p.Value.Valid {
				t.Fatalf("a paused service has cpu usage %v", p)
			}
		}
	}
	if got := e.series(id, SeriesPrefix+sufCPUTotal, from, now, nil); !got[0].Data[0].Value.Valid {
		t.Error("a paused service lost its cpu total")
	}
}

func TestUsageSeriesValidation(t *testing.T) {
	e := newEnvRev(t, Timings{}, Revision2026)
	id := create2026(e, "main", "1000", "4", nil).ServiceID
	now := e.clock.Now()
	ok := func() map[string]any {
		return map[string]any{"name": SeriesPrefix + sufQPS, "from": now.Add(-time.Hour).Format(time.RFC3339), "to": now.Format(time.RFC3339)}
	}
	for name, change := range map[string]func(map[string]any){
		"from after to":  func(b map[string]any) { b["from"], b["to"] = b["to"], b["from"] },
		"from equals to": func(b map[string]any) { b["from"] = b["to"] },
		"no from":        func(b map[string]any) { delete(b, "from") },
		"bad to":         func(b map[string]any) { b["to"] = "yesterday" },
		"bucket 59":      func(b map[string]any) { b["bucket_seconds"] = 59 },
		"fn":             func(b map[string]any) { b["fn"] = "avg" },
		"no name":        func(b map[string]any) { delete(b, "name") },
		"too many":       func(b map[string]any) { b["from"] = now.Add(-48 * time.Hour).Format(time.RFC3339) },
	} {
		b := ok()
		change(b)
		if got := e.mustError(http.StatusBadRequest, "INVALID_REQUEST", "POST", seriesPath(id), b); got.Message == "" {
			t.Errorf("%s: no message", name)
		}
	}
	b := ok()
	b["name"] = "other_database_qps"
	e.mustError(http.StatusNotFound, "NOT_FOUND", "POST", seriesPath(id), b)
	e.mustError(http.StatusNotFound, "NOT_FOUND", "POST", seriesPath("nope"), ok())
	// A read-only credential may read: the POST is a read.
	e.must(http.StatusOK, "POST", seriesPath(id), ok(), as(roCred))
	b = ok()
	b["bucket_seconds"] = 300
	if got := e.series(id, SeriesPrefix+sufQPS, now.Add(-time.Hour), now, map[string]any{"bucket_seconds": 300}); len(got[0].Data) != 12 {
		t.Errorf("5-minute buckets over an hour: %d, want 12", len(got[0].Data))
	}
}

func TestUsageNotInRevision2024(t *testing.T) {
	e := newEnvRev(t, Timings{}, Revision2024)
	id := e.createService("main")
	for _, r := range []struct{ method, path string }{
		{"GET", servicesPath + "/" + id + "/metrics/available-series"},
		{"POST", seriesPath(id)},
		{"GET", servicesPath + "/" + id + "/logs"},
	} {
		got := e.mustError(http.StatusNotFound, "NOT_FOUND", r.method, r.path, map[string]any{})
		if !strings.Contains(got.Message, "path") {
			t.Errorf("%s %s: %+v, want no such path", r.method, r.path, got)
		}
	}
}

// TestReplaceNode: after POST …/replaceNode a service of three nodes
// reports ordinals 1, 2, 3 (0 gone, 3 new, 1 the primary), lists as many
// resources, the departed one's id no longer among them, and a new one.
func TestReplaceNode(t *testing.T) {
	e := newEnvRev(t, Timings{}, Revision2026)
	svc := create2026(e, "main", "2000", "8", map[string]any{"replica_count": 2})
	id := svc.ServiceID
	e.clock.Advance(3 * time.Hour)
	before := e.getService(id).Resources
	e.must(http.StatusNoContent, "POST", "/_sim/projects/"+testProject+"/services/"+id+"/replaceNode", nil, noAuth)
	e.must(http.StatusNotFound, "POST", "/_sim/projects/"+testProject+"/services/nope/replaceNode", nil, noAuth)

	now := e.clock.Now()
	var got []string
	for _, s := range e.series(id, SeriesPrefix+sufMemTotal, now.Add(-10*time.Minute), now, nil) {
		got = append(got, s.Labels["role"]+"/"+s.Labels["ordinal"])
	}
	if want := "primary/1 replica/2 replica/3"; strings.Join(got, " ") != want {
		t.Errorf("nodes after the replacement: %v, want %s", got, want)
	}
	after := e.getService(id).Resources
	if len(after) != 3 || after[0].ID != before[1].ID || after[1].ID != before[2].ID || after[2].ID == before[0].ID {
		t.Errorf("resources %v after replacing the primary of %v", after, before)
	}
}
