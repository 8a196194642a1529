package e2e

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

const acceptPrometheus3 = "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1"

// TestFleetExpositionForms scrapes the exporter over a fleet of thousands
// of services in every form while poll cycles go on: the gzip body, spliced
// from pieces compressed chunk by chunk, is one well-formed gzip member
// holding the same resource series as the uncompressed body, and every
// service is there.
func TestFleetExpositionForms(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	const services = 3000
	sim := testbin.StartSim(t, "--scenario=fleet", "--project-id="+testbin.SimProject,
		"--fleet.services="+strconv.Itoa(services), "--fleet.vpcs=30")
	_, url := testbin.StartExporter(t, testbin.ExporterEnv(sim),
		"--api.rate-limit=100000", "--api.rate-burst=1000", "--collect.interval=3s")

	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	get := func(accept string, gz bool) []byte {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, url+"/metrics", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", accept)
		if gz {
			req.Header.Set("Accept-Encoding", "gzip")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(body)) {
			t.Errorf("Content-Length %s, body %d bytes", cl, len(body))
		}
		if !gz {
			return body
		}
		if resp.Header.Get("Content-Encoding") != "gzip" {
			t.Fatal("no Content-Encoding: gzip")
		}
		br := bytes.NewReader(body)
		zr, err := gzip.NewReader(br)
		if err != nil {
			t.Fatal(err)
		}
		// One member, nothing after it: a client that reads one member
		// only must see everything.
		zr.Multistream(false)
		plain, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("gzip body: %v", err)
		}
		if br.Len() != 0 {
			t.Errorf("%d bytes after the gzip member", br.Len())
		}
		return plain
	}
	// resources keeps the resource series, which change only with the
	// fleet (static here), not the self-metrics.
	resources := func(body []byte) string {
		var keep []string
		for line := range strings.SplitSeq(string(body), "\n") {
			if strings.HasPrefix(line, "clouddb_") && !strings.HasPrefix(line, "clouddb_exporter_") {
				keep = append(keep, line)
			}
		}
		return strings.Join(keep, "\n")
	}

	for round := range 3 {
		for _, accept := range []string{acceptPrometheus3, "text/plain;version=0.0.4"} {
			// A poll may publish between two scrapes: compare a gzip body
			// with the plain bodies scraped just before and after it, once
			// those two agree.
			var plain, gz string
			testbin.WaitFor(t, 30*time.Second, "a gzip scrape between two equal plain ones", func() bool {
				before := resources(get(accept, false))
				gz = resources(get(accept, true))
				plain = resources(get(accept, false))
				return before == plain
			})
			if plain != gz {
				t.Errorf("round %d, %s: the gzip body's resource series differ from the plain body's", round, accept[:20])
			}
			if n := strings.Count(plain, "clouddb_service_info{"); n != services {
				t.Errorf("round %d, %s: %d clouddb_service_info series, want %d", round, accept[:20], n, services)
			}
		}
		// Read without parsing: parsing this exposition in a -race test
		// binary takes seconds of CPU. It is parsed once, below.
		if _, ok := testbin.SampleValue(url, "go_goroutines"); !ok {
			t.Error("no Go metrics")
		}
		before, _ := testbin.SampleValue(url, "clouddb_exporter_snapshot_timestamp_seconds")
		testbin.WaitFor(t, 30*time.Second, "the next poll cycle", func() bool {
			v, _ := testbin.SampleValue(url, "clouddb_exporter_snapshot_timestamp_seconds")
			return v > before
		})
	}
	// After cycles that re-rendered chunks, the whole exposition parses.
	testbin.Scrape(t, url)
}
