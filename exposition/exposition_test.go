package exposition

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/apimetrics"
	"github.com/clouddb/clouddb_exporter/dataplane"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/collectortest"
	"github.com/clouddb/clouddb_exporter/internal/dataplanetest"
	"github.com/clouddb/clouddb_exporter/internal/fleettest"
)

// Accept headers that Prometheus servers send.
const (
	acceptPrometheus3 = "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1"
	acceptPrometheus2 = "application/openmetrics-text;version=1.0.0;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2"
	acceptText        = "text/plain;version=0.0.4;q=1,*/*;q=0.1"
	acceptProtobuf    = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited"
)

// newTestExposition returns an Exposition over testSnapshots whose self
// registry holds APIMetrics with a few deterministic observations.
func newTestExposition(t *testing.T, logger *slog.Logger) (*Handler, *apimetrics.Metrics) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	m := apimetrics.New(reg)
	o := m.Observer("proj-a")
	o.ObserveRequest(apiclient.OpListServices, "200", 120*time.Millisecond)
	o.ObserveRequest(apiclient.OpListServices, "503", 2*time.Second)
	o.ObserveRetry(apiclient.OpListServices)
	o.ObserveRateLimitWait(apiclient.OpListServices, 250*time.Millisecond)
	e := New(reg, logger)
	for _, s := range dataplanetest.Snapshots() {
		e.SetSnapshot(s)
	}
	return e, m
}

// scrape calls h as Prometheus would and returns the response.
func scrape(t *testing.T, h http.Handler, accept, acceptEncoding string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if acceptEncoding != "" {
		req.Header.Set("Accept-Encoding", acceptEncoding)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	resp := rec.Result()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	return resp
}

func readBody(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(b)) {
		t.Errorf("Content-Length %q, body is %d bytes", cl, len(b))
	}
	return b
}

// scrapeText returns the uncompressed text exposition of h.
func scrapeText(t *testing.T, h http.Handler) string {
	t.Helper()
	return string(readBody(t, scrape(t, h, acceptText, "")))
}

// parseText parses a text exposition, failing the test if it is invalid
// (a HELP or TYPE line twice for a family is invalid).
func parseText(t *testing.T, body []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("exposition does not parse: %v\n%s", err, body)
	}
	return mfs
}

var update = flag.Bool("update", false, "rewrite the golden files in testdata from the current output")

// readGolden returns a golden file, first rewriting it with got when the
// test runs with -update.
func readGolden(t *testing.T, name string, got []byte) []byte {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./exposition -update to create it)", err)
	}
	return want
}

// zeroRetries are the series every operation of the catalog starts with;
// the goldens leave them out so that a new operation does not rewrite
// them, and TestExpositionSelfMetricsAfterObserver checks them instead.
var zeroRetries = regexp.MustCompile(`(?m)^clouddb_exporter_api_retries_total\{operation="\w+",project_id="[^"]*"\} 0(\.0)?\n`)

// pinnedHelp puts fleettest.PinnedHelpText in the HELP of the families of
// fleettest.PinnedHelp, which grows with the registered data-plane parts.
func pinnedHelp(body []byte) []byte {
	for name := range fleettest.PinnedHelp {
		re := regexp.MustCompile(`(?m)^# HELP ` + name + ` .*$`)
		body = re.ReplaceAll(body, []byte("# HELP "+name+" "+fleettest.PinnedHelpText))
	}
	return body
}

func TestExpositionGolden(t *testing.T) {
	e, _ := newTestExposition(t, nil)
	for _, tc := range []struct {
		golden, accept string
	}{
		{"exposition.prom", acceptText},
		{"exposition_openmetrics.txt", acceptPrometheus3},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			got := pinnedHelp(zeroRetries.ReplaceAll(cutPinned(t, readBody(t, scrape(t, e, tc.accept, ""))), nil))
			want := readGolden(t, tc.golden, got)
			if !bytes.Equal(got, want) {
				t.Errorf("exposition differs from %s (run with -update and review the diff):\n%s", tc.golden, got)
			}
		})
	}
}

// cutPinned removes the families of fleettest.PinnedLabels from an
// exposition, from their HELP to the next family's: their HELP and labels
// grow with the API. TestRenderMatchesRegistry holds their rendering to
// expfmt's, the collector's tests their labels.
func cutPinned(t *testing.T, body []byte) []byte {
	t.Helper()
	for name := range fleettest.PinnedLabels {
		start := bytes.Index(body, []byte("\n# HELP "+name+" ")) + 1
		if start == 0 {
			t.Errorf("exposition has no %s", name)
			continue
		}
		end := len(body)
		for _, next := range []string{"\n# HELP ", "\n# EOF\n"} {
			if i := bytes.Index(body[start:], []byte(next)); i >= 0 {
				end = min(end, start+i+1)
			}
		}
		body = slices.Concat(body[:start], body[end:])
	}
	return body
}

func TestExpositionParsesAndLints(t *testing.T) {
	e, _ := newTestExposition(t, nil)
	body := []byte(scrapeText(t, e))
	mfs := parseText(t, body)
	for _, name := range append(familyNames(dataplane.PartUsage, dataplane.PartLogs), "clouddb_exporter_api_requests_total", "clouddb_exporter_api_request_duration_seconds",
		"clouddb_exporter_api_retries_total", "clouddb_exporter_api_rate_limit_wait_seconds_total") {
		if mfs[name] == nil {
			t.Errorf("exposition has no %s", name)
		}
	}
	problems, err := promlint.New(bytes.NewReader(body)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// The cached exposition holds exactly what a registry with the
// FleetCollector serves.
func TestExpositionMatchesRegistry(t *testing.T) {
	e := New(nil, nil)
	for _, s := range dataplanetest.Snapshots() {
		e.SetSnapshot(s)
	}
	got := parseText(t, []byte(scrapeText(t, e)))
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectortest.NewFleetCollectorOf(dataplanetest.Snapshots()...))
	want, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Errorf("%d families, the registry has %d", len(got), len(want))
	}
	for _, w := range want {
		var a, b bytes.Buffer
		if _, err := expfmt.MetricFamilyToText(&a, w); err != nil {
			t.Fatal(err)
		}
		g := got[w.GetName()]
		if g == nil {
			t.Errorf("no %s", w.GetName())
			continue
		}
		if _, err := expfmt.MetricFamilyToText(&b, g); err != nil {
			t.Fatal(err)
		}
		// Series order within a family is free: the exposition keeps
		// projects together, the registry sorts by label values.
		if sortedLines(a.String()) != sortedLines(b.String()) {
			t.Errorf("%s differs:\nexposition:\n%s\nregistry:\n%s", w.GetName(), b.String(), a.String())
		}
	}
}

func sortedLines(s string) string {
	lines := strings.Split(s, "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

func TestExpositionNegotiation(t *testing.T) {
	e, _ := newTestExposition(t, nil)
	for _, tc := range []struct {
		name, accept string
		contentType  string // media type and version
		openMetrics  bool
	}{
		{"none", "", "text/plain; version=0.0.4", false},
		{"text", acceptText, "text/plain; version=0.0.4", false},
		{"prometheus 2", acceptPrometheus2, "application/openmetrics-text; version=1.0.0", true},
		{"prometheus 3", acceptPrometheus3, "application/openmetrics-text; version=1.0.0", true},
		{"openmetrics without version", "application/openmetrics-text", "application/openmetrics-text; version=0.0.1", true},
		{"protobuf only", acceptProtobuf, "text/plain; version=0.0.4", false},
		{"protobuf first", acceptProtobuf + ";q=0.6,text/plain;version=0.0.4;q=0.3", "text/plain; version=0.0.4", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := scrape(t, e, tc.accept, "")
			body := readBody(t, resp)
			ct := resp.Header.Get("Content-Type")
			if !strings.HasPrefix(ct, tc.contentType+"; charset=utf-8") {
				t.Errorf("Content-Type %q, want %q", ct, tc.contentType)
			}
			eofs := bytes.Count(body, []byte("# EOF"))
			if tc.openMetrics {
				if eofs != 1 || !bytes.HasSuffix(body, []byte("\n# EOF\n")) {
					t.Errorf("OpenMetrics body has %d \"# EOF\" and ends with %q", eofs, body[max(0, len(body)-40):])
				}
				// OpenMetrics names a counter family without _total.
				if !bytes.Contains(body, []byte("# TYPE clouddb_exporter_api_requests counter\n")) {
					t.Error("no OpenMetrics counter family clouddb_exporter_api_requests")
				}
			} else {
				if eofs != 0 {
					t.Errorf("text body has %d \"# EOF\"", eofs)
				}
				parseText(t, body)
			}
			for _, want := range []string{"clouddb_service_info{", "clouddb_exporter_api_requests_total{"} {
				if !bytes.Contains(body, []byte(want)) {
					t.Errorf("body has no %s", want)
				}
			}
		})
	}
}

func TestExpositionGzip(t *testing.T) {
	e, m := newTestExposition(t, nil)
	for _, accept := range []string{acceptText, acceptPrometheus3} {
		t.Run(accept[:strings.IndexByte(accept, ';')], func(t *testing.T) {
			identity := readBody(t, scrape(t, e, accept, ""))
			// Twice: the first gzip scrape compresses the cached part, the
			// second reuses it.
			for i := range 2 {
				resp := scrape(t, e, accept, "gzip")
				if ce := resp.Header.Get("Content-Encoding"); ce != "gzip" {
					t.Fatalf("Content-Encoding %q", ce)
				}
				checkGzip(t, readBody(t, resp), identity)
				if i == 0 && len(identity) < 1000 {
					t.Fatalf("identity body is only %d bytes", len(identity))
				}
			}
			// Live self-metrics change between scrapes: the fresh part
			// must follow.
			m.Observer("proj-c")
			identity = readBody(t, scrape(t, e, accept, ""))
			checkGzip(t, readBody(t, scrape(t, e, accept, "gzip")), identity)
			// A new snapshot must not be served from the old compressed form.
			changed := dataplanetest.Snapshots()[1]
			changed.Services[0].Name = "renamed"
			e.SetSnapshot(changed)
			identity = readBody(t, scrape(t, e, accept, ""))
			if !bytes.Contains(identity, []byte(`name="renamed"`)) {
				t.Fatal("new snapshot not served")
			}
			checkGzip(t, readBody(t, scrape(t, e, accept, "deflate, gzip;q=0.8, br")), identity)
		})
	}
}

// checkGzip asserts that gz is exactly one gzip member that decodes to want,
// both with a reader that stops after one member and with the default one.
func checkGzip(t *testing.T, gz, want []byte) {
	t.Helper()
	r := bytes.NewReader(gz)
	zr, err := gzip.NewReader(r)
	if err != nil {
		t.Fatal(err)
	}
	zr.Multistream(false)
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("single-member read: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("gzip body decodes to %d bytes that differ from the %d-byte identity body", len(got), len(want))
	}
	if r.Len() != 0 {
		t.Errorf("%d bytes after the gzip member", r.Len())
	}
	zr2, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	got, err = io.ReadAll(zr2)
	if err != nil {
		t.Fatalf("multistream read: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("multistream gzip read differs from the identity body")
	}
	if bytes.HasPrefix(want, []byte("# HELP")) && !bytes.Contains(want, []byte("# EOF")) {
		parseText(t, got)
	}
}

func TestExpositionGzipRefused(t *testing.T) {
	e, _ := newTestExposition(t, nil)
	for _, ae := range []string{"", "gzip;q=0", "identity", "br", "*;q=0", "gzip;q=0, *"} {
		resp := scrape(t, e, acceptText, ae)
		if ce := resp.Header.Get("Content-Encoding"); ce != "" {
			t.Errorf("Accept-Encoding %q: Content-Encoding %q", ae, ce)
		}
		parseText(t, readBody(t, resp))
	}
}

func TestAcceptsGzip(t *testing.T) {
	for header, want := range map[string]bool{
		"":                        false,
		"gzip":                    true,
		"GZIP":                    true,
		"x-gzip":                  true,
		"gzip, deflate, br":       true,
		"deflate;q=1, gzip;q=0.1": true,
		"br":                      false,
		"gzip;q=0":                false,
		"gzip; q=0.0":             false,
		"*":                       true,
		"*;q=0":                   false,
		"gzip;q=0, *":             false,
		"identity;q=1, *;q=0.5":   true,
	} {
		if got := acceptsGzip(header); got != want {
			t.Errorf("acceptsGzip(%q) = %v, want %v", header, got, want)
		}
	}
}

func TestExpositionSelfMetricsAfterObserver(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := apimetrics.New(reg)
	e := New(reg, nil)
	e.SetSnapshot(dataplanetest.Snapshots()[0])
	// The usage reader's values rejected are the data's, not the client's.
	if body := scrapeText(t, e); strings.Contains(strings.ReplaceAll(body, "clouddb_exporter_api_values_rejected_total", ""), "clouddb_exporter_api_") {
		t.Fatalf("API metrics before any Observer:\n%s", body)
	}
	o := m.Observer("proj-a")
	mfs := parseText(t, []byte(scrapeText(t, e)))
	var retried []string
	for _, m := range mfs["clouddb_exporter_api_retries_total"].GetMetric() {
		if m.GetCounter().GetValue() != 0 {
			t.Errorf("a fresh Observer's retries: %v", m)
		}
		for _, l := range m.GetLabel() {
			if l.GetName() == "operation" {
				retried = append(retried, l.GetValue())
			}
		}
	}
	if !slices.Equal(slices.Sorted(slices.Values(retried)), slices.Sorted(slices.Values(apiclient.Operations))) {
		t.Errorf("clouddb_exporter_api_retries_total after Observer has operations %v, want one series per operation %v", retried, apiclient.Operations)
	}
	if n := len(mfs["clouddb_exporter_api_rate_limit_wait_seconds_total"].GetMetric()); n != 1 {
		t.Errorf("%d clouddb_exporter_api_rate_limit_wait_seconds_total series, want 1", n)
	}
	o.ObserveRequest(apiclient.OpListVPCs, "200", 80*time.Millisecond)
	body := scrapeText(t, e)
	for _, want := range []string{
		`clouddb_exporter_api_requests_total{code="200",operation="listVPCs",project_id="proj-a"} 1`,
		`clouddb_exporter_api_request_duration_seconds_bucket{operation="listVPCs",project_id="proj-a",le="0.1"} 1`,
		`clouddb_service_info{`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %s in\n%s", want, body)
		}
	}
}

func TestExpositionSetSnapshotAndRemoveProject(t *testing.T) {
	e := New(nil, nil)
	if body := scrapeText(t, e); body != "" {
		t.Errorf("no snapshot yet, body %q", body)
	}
	snaps := dataplanetest.Snapshots()
	for _, s := range snaps {
		e.SetSnapshot(s)
	}
	body := scrapeText(t, e)
	for _, want := range []string{`service_id="svc-1"`, `service_id="svc-2"`, `service_id="svc-9"`, `rs-2`, `peer-2`} {
		if !strings.Contains(body, want) {
			t.Errorf("no %s", want)
		}
	}
	// Both projects' services are under one HELP and TYPE.
	if n := strings.Count(body, "# TYPE clouddb_service_info gauge\n"); n != 1 {
		t.Errorf("%d TYPE lines for clouddb_service_info, want 1", n)
	}

	// A new snapshot of proj-a in which svc-2, rs-2 and peer-2 vanished
	// and svc-1 changed status.
	a := dataplanetest.Snapshots()[0]
	a.Services = a.Services[:1]
	a.Services[0].Status = apiclient.ServiceUpgrading
	a.ReplicaSets = a.ReplicaSets[:1]
	a.Peerings = []fleet.Peering{a.Peerings[0], a.Peerings[2]}
	e.SetSnapshot(a)
	body = scrapeText(t, e)
	for _, gone := range []string{`service_id="svc-2"`, `replica_set_id="rs-2"`, `peering_id="peer-2"`, `status="MIGRATING"`, `status="rebuilding"`} {
		if strings.Contains(body, gone) {
			t.Errorf("%s still served after it vanished from the snapshot", gone)
		}
	}
	for _, want := range []string{
		`clouddb_service_status{project_id="proj-a",service_id="svc-1",status="UPGRADING"} 1`,
		`clouddb_service_status{project_id="proj-a",service_id="svc-1",status="READY"} 0`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("no %s", want)
		}
	}
	if !slices.ContainsFunc(strings.Split(body, "\n"), func(l string) bool {
		return strings.HasPrefix(l, "clouddb_service_info{") && strings.Contains(l, `service_id="svc-9"`)
	}) {
		t.Error("proj-b's clouddb_service_info vanished with proj-a's change")
	}

	e.RemoveProject("proj-a")
	body = scrapeText(t, e)
	if strings.Contains(body, `project_id="proj-a"`) {
		t.Error("proj-a series served after RemoveProject")
	}
	// Only proj-a had auth info: its families must vanish with their
	// HELP and TYPE, not stay as empty headers.
	if strings.Contains(body, "clouddb_api_key_info") || strings.Contains(body, "clouddb_vpc_info") {
		t.Errorf("families of proj-a only are still announced:\n%s", body)
	}
	if !strings.Contains(body, `project_id="proj-b"`) {
		t.Error("proj-b vanished with proj-a")
	}
	parseText(t, []byte(body))
	e.RemoveProject("proj-b")
	e.RemoveProject("never-seen")
	if body := scrapeText(t, e); body != "" {
		t.Errorf("every project removed, body %q", body)
	}
	if body := string(readBody(t, scrape(t, e, acceptPrometheus3, ""))); body != "# EOF\n" {
		t.Errorf("every project removed, OpenMetrics body %q", body)
	}
}

// A label value that is not valid UTF-8 costs its own series only.
func TestExpositionInvalidSeries(t *testing.T) {
	logs := &countingHandler{}
	e := New(nil, slog.New(logs))
	s := dataplanetest.Snapshots()[1]
	s.Services[0].Name = "bad\xff"
	e.SetSnapshot(s)
	body := scrapeText(t, e)
	if strings.Contains(body, "clouddb_service_info{") {
		t.Error("invalid clouddb_service_info series served")
	}
	if !strings.Contains(body, `clouddb_service_paused{project_id="proj-b",service_id="svc-9"} 0`) {
		t.Error("the valid series of the service are missing")
	}
	parseText(t, []byte(body))
	if logs.count.Load() != 1 {
		t.Errorf("%d log records, want 1", logs.count.Load())
	}
}

// failingGatherer returns one family and an error, as a registry does when
// one collector fails.
type failingGatherer struct{ fail atomic.Bool }

func (g *failingGatherer) Gather() ([]*dto.MetricFamily, error) {
	mf := &dto.MetricFamily{
		Name: new("clouddb_exporter_build_info"), Help: new("Build."), Type: dto.MetricType_GAUGE.Enum(),
		Metric: []*dto.Metric{{Gauge: &dto.Gauge{Value: new(1.0)}}},
	}
	if g.fail.Load() {
		return []*dto.MetricFamily{mf}, errors.New("collector exploded")
	}
	return []*dto.MetricFamily{mf}, nil
}

// countingHandler counts the log records at error level.
type countingHandler struct{ count atomic.Int32 }

func (h *countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countingHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		h.count.Add(1)
	}
	return nil
}
func (h *countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countingHandler) WithGroup(string) slog.Handler      { return h }

func TestExpositionSelfGatherFailure(t *testing.T) {
	logs := &countingHandler{}
	g := &failingGatherer{}
	g.fail.Store(true)
	e := New(g, slog.New(logs))
	e.SetSnapshot(dataplanetest.Snapshots()[0])
	for range 3 {
		for _, accept := range []string{acceptText, acceptPrometheus3} {
			body := readBody(t, scrape(t, e, accept, "gzip"))
			zr, err := gzip.NewReader(bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			plain, err := io.ReadAll(zr)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{"clouddb_service_info{", "clouddb_exporter_build_info 1"} {
				if !bytes.Contains(plain, []byte(want)) {
					t.Errorf("failing self gather: no %s", want)
				}
			}
		}
	}
	if n := logs.count.Load(); n != 1 {
		t.Errorf("a lasting failure logged %d times, want once", n)
	}
	g.fail.Store(false)
	scrapeText(t, e)
	g.fail.Store(true)
	scrapeText(t, e)
	if n := logs.count.Load(); n != 2 {
		t.Errorf("a failure after recovery: %d log records in all, want 2", n)
	}
}

// Scrapes running while snapshots change always see a whole exposition.
// Run with -race to check the synchronisation.
func TestExpositionConcurrent(t *testing.T) {
	e, m := newTestExposition(t, nil)
	snaps := dataplanetest.Snapshots()
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			for j := range 20 {
				switch (i + j) % 3 {
				case 0:
					e.SetSnapshot(snaps[j%2])
				case 1:
					m.Observer("proj-a").ObserveRetry(apiclient.OpGetVPC)
				default:
					resp := scrape(t, e, acceptText, "gzip")
					zr, err := gzip.NewReader(resp.Body)
					if err != nil {
						t.Error(err)
						return
					}
					body, err := io.ReadAll(zr)
					if err != nil {
						t.Error(err)
						return
					}
					p := expfmt.NewTextParser(model.UTF8Validation)
					if _, err := p.TextToMetricFamilies(bytes.NewReader(body)); err != nil {
						t.Error(err)
					}
				}
			}
		})
	}
	wg.Wait()
}

func FuzzAcceptsGzip(f *testing.F) {
	for _, seed := range []string{"", "gzip", "gzip;q=0", "*;q=0.5", "deflate, gzip;q=1.0, *;q=0.5", "gzip;q=x", ";;,,", "GZip ; Q=0.001"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, header string) {
		if acceptsGzip(header) && !strings.Contains(strings.ToLower(header), "gzip") && !strings.Contains(header, "*") {
			t.Errorf("acceptsGzip(%q) without gzip or *", header)
		}
	})
}

// TestExpositionDropsOutOfOrderSnapshots: publishers run outside the
// poller's lock, so a numbered snapshot may arrive after a newer one; it
// must not replace it. A removed project starts afresh.
func TestExpositionDropsOutOfOrderSnapshots(t *testing.T) {
	e := New(nil, nil)
	older, newer := dataplanetest.Snapshots()[0], dataplanetest.Snapshots()[0]
	older.Seq, newer.Seq = 1, 2
	newer.Services = newer.Services[:1]
	newer.Services[0].Status = apiclient.ServiceUpgrading
	const upgrading = `clouddb_service_status{project_id="proj-a",service_id="svc-1",status="UPGRADING"} 1`

	e.SetSnapshot(newer)
	e.SetSnapshot(older)
	if body := scrapeText(t, e); !strings.Contains(body, upgrading) || strings.Contains(body, `service_id="svc-2"`) {
		t.Errorf("an older snapshot replaced a newer one:\n%s", body)
	}
	same := dataplanetest.Snapshots()[0]
	same.Seq = 2
	e.SetSnapshot(same)
	if body := scrapeText(t, e); !strings.Contains(body, upgrading) {
		t.Error("a snapshot with the installed number replaced it")
	}
	// Another project's numbers are its own.
	b := dataplanetest.Snapshots()[1]
	b.Seq = 1
	e.SetSnapshot(b)
	if body := scrapeText(t, e); !strings.Contains(body, `project_id="proj-b"`) {
		t.Error("proj-b's first snapshot dropped because of proj-a's numbers")
	}
	e.RemoveProject("proj-a")
	e.SetSnapshot(older)
	if body := scrapeText(t, e); !strings.Contains(body, `service_id="svc-2"`) {
		t.Error("a removed project's numbers were kept")
	}
}

// TestDroppedFieldsAreNotZero: a field the API sent that did not decode is
// unknown: its series is left out rather than exported as 0, and the rest
// of the resource stays.
func TestDroppedFieldsAreNotZero(t *testing.T) {
	s := dataplanetest.Snapshots()[0]
	s.Services[0].Dropped = []apiclient.FieldError{{Field: "resources.1.spec.cpu_millis", Err: "bad"}}
	s.ReplicaSets[0].Dropped = []apiclient.FieldError{{Field: "nodes", Err: "bad"}, {Field: "memory_gbs", Err: "bad"}}
	e := New(nil, nil)
	e.SetSnapshot(s)
	body := scrapeText(t, e)
	for _, gone := range []string{
		`clouddb_service_cpu_cores{project_id="proj-a",resource_id="res-2"`,
		`clouddb_replica_set_nodes{project_id="proj-a",replica_set_id="rs-1"`,
		`clouddb_replica_set_memory_bytes{project_id="proj-a",replica_set_id="rs-1"`,
	} {
		if strings.Contains(body, gone) {
			t.Errorf("%s exported from a value that did not decode", gone)
		}
	}
	for _, kept := range []string{
		`clouddb_service_cpu_cores{project_id="proj-a",resource_id="res-1"`,
		`clouddb_service_memory_bytes{project_id="proj-a",resource_id="res-2"`,
		`clouddb_replica_set_cpu_cores{project_id="proj-a",replica_set_id="rs-1"`,
		`clouddb_replica_set_nodes{project_id="proj-a",replica_set_id="rs-2"`,
	} {
		if !strings.Contains(body, kept) {
			t.Errorf("%s lost with a sibling field", kept)
		}
	}
}

// Tests that render chunks without a Handler read the collector as New
// does.
func init() { loadCollector() }

// Series of a removed project that the scheduled self-metrics gather holds
// (the change counters) go with the project, not a gather interval later.
func TestRemoveProjectRefreshesScheduledSelfMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	perProject := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "clouddb_changes_total", Help: "h"}, []string{"project_id"})
	reg.MustRegister(perProject)
	e := New(SelfGatherer(apimetrics.New(nil), reg), nil)
	defer e.Close()
	for _, s := range dataplanetest.Snapshots() {
		e.SetSnapshot(s)
		perProject.WithLabelValues(s.ProjectID).Set(1)
	}
	if body := scrapeText(t, e); !strings.Contains(body, `clouddb_changes_total{project_id="proj-a"} 1`) {
		t.Fatalf("no self-metric of proj-a before the removal:\n%s", body)
	}
	perProject.DeleteLabelValues("proj-a")
	e.RemoveProject("proj-a")
	body := scrapeText(t, e)
	if strings.Contains(body, `project_id="proj-a"`) {
		t.Error("proj-a's self-metric served after RemoveProject")
	}
	if !strings.Contains(body, `clouddb_changes_total{project_id="proj-b"} 1`) {
		t.Error("proj-b's self-metric vanished with proj-a")
	}
}
