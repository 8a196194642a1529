package e2e

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// acceptPrometheus is what a Prometheus 3 server sends.
const acceptPrometheus = "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1"

// BenchmarkScrapeVsBytes measures a gzip scrape of the built exporter
// polling a 10k-service fleet (1000 VPCs) against a server that writes the
// same bytes, with the same headers, from one []byte: pairs of requests
// (one to each, keep-alive, the client reading with a 1 MiB buffer and
// not decompressing), alternated so that both see the same load. It
// reports the median ratio of a pair (x_baseline) with its 10th and 90th
// percentiles, and the medians of both. scripts/bench.sh runs it; a ratio
// on a shared machine says more than either time.
func BenchmarkScrapeVsBytes(b *testing.B) {
	const services = 10000
	sim := testbin.StartSim(b, "--scenario=fleet", "--log.level=warn", "--fleet.services="+strconv.Itoa(services),
		"--fleet.replica-sets-per-service=1", "--fleet.vpcs="+strconv.Itoa(services/10), "--fleet.peerings-per-vpc=2")
	// One cycle, then none during the measurement: the scrape alone.
	_, base := testbin.StartExporter(b, testbin.ExporterEnv(sim), "--log.level=warn",
		"--api.rate-limit=2000", "--api.rate-burst=2000", "--collect.concurrency=8", "--collect.interval=10m")

	client := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 1}}
	buf := make([]byte, 1<<20)
	get := func(url string) ([]byte, http.Header) {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			b.Fatal(err)
		}
		req.Header.Set("Accept", acceptPrometheus)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		var body []byte
		for {
			n, err := resp.Body.Read(buf)
			body = append(body, buf[:n]...)
			if err == io.EOF {
				return body, resp.Header
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	// read reads url's answer to its end through buf, keeping nothing.
	read := func(url string) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Accept", acceptPrometheus)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := resp.Body.Read(buf); err != nil {
				if err != io.EOF {
					b.Fatal(err)
				}
				break
			}
		}
		resp.Body.Close()
	}

	// The exporter's answer once the fleet is in: the baseline's bytes.
	var body []byte
	var header http.Header
	testbin.WaitFor(b, 2*time.Minute, "the whole fleet on /metrics", func() bool {
		body, header = get(base + "/metrics")
		return len(body) > 1<<20
	})
	// The byte server is a process of its own, as the exporter is: a
	// server in the client's process would be woken more cheaply.
	dir := b.TempDir()
	bodyFile := filepath.Join(dir, "body")
	if err := os.WriteFile(bodyFile, body, 0o600); err != nil {
		b.Fatal(err)
	}
	addr := testbin.FreeAddr(b)
	server := exec.Command(os.Args[0], "-test.run=^TestBytesServer$")
	server.Env = append(os.Environ(), "BYTES_SERVER_ADDR="+addr, "BYTES_SERVER_FILE="+bodyFile,
		"BYTES_SERVER_CONTENT_TYPE="+header.Get("Content-Type"), "BYTES_SERVER_CONTENT_ENCODING="+header.Get("Content-Encoding"))
	if err := server.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { _ = server.Process.Kill(); _ = server.Wait() }()
	bytesURL := "http://" + addr + "/metrics"
	testbin.WaitFor(b, 30*time.Second, "the byte server", func() bool {
		code, _ := testbin.Get(bytesURL)
		return code == http.StatusOK
	})
	read(base + "/metrics")
	read(bytesURL)

	var ratios []float64
	var scrape, bytes []time.Duration
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		start := time.Now()
		read(base + "/metrics")
		mid := time.Now()
		read(bytesURL)
		end := time.Now()
		scrape, bytes = append(scrape, mid.Sub(start)), append(bytes, end.Sub(mid))
		ratios = append(ratios, float64(mid.Sub(start))/float64(end.Sub(mid)))
	}
	slices.Sort(ratios)
	slices.Sort(scrape)
	slices.Sort(bytes)
	at := func(q float64) float64 { return ratios[int(q*float64(len(ratios)-1))] }
	b.ReportMetric(at(0.5), "x_baseline")
	b.ReportMetric(at(0.1), "x_p10")
	b.ReportMetric(at(0.9), "x_p90")
	b.ReportMetric(float64(scrape[len(scrape)/2].Microseconds())/1000, "scrape_ms")
	b.ReportMetric(float64(bytes[len(bytes)/2].Microseconds())/1000, "bytes_ms")
}

// TestBytesServer is BenchmarkScrapeVsBytes's byte server when run as its
// helper process (BYTES_SERVER_ADDR set): it writes the file's bytes from
// one []byte, with the exporter's headers, until killed. Otherwise it is
// skipped.
func TestBytesServer(t *testing.T) {
	addr := os.Getenv("BYTES_SERVER_ADDR")
	if addr == "" {
		t.Skip("the helper process of BenchmarkScrapeVsBytes")
	}
	body, err := os.ReadFile(os.Getenv("BYTES_SERVER_FILE"))
	if err != nil {
		t.Fatal(err)
	}
	contentType, encoding := os.Getenv("BYTES_SERVER_CONTENT_TYPE"), os.Getenv("BYTES_SERVER_CONTENT_ENCODING")
	t.Fatal(http.ListenAndServe(addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Vary", "Accept-Encoding")
		if r.Header.Get("Accept-Encoding") != "" {
			w.Header().Set("Content-Encoding", encoding)
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	})))
}
