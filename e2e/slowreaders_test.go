package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// neverReader sends a GET for path on a new connection (repeat times,
// pipelined, so that the answers surely outgrow the socket buffers) and
// never reads the answer; the connection is closed when the test ends.
func neverReader(t *testing.T, addr, path string, repeat ...int) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(4 << 10) // keep what the kernel takes for us small
	}
	n := 1
	if len(repeat) > 0 {
		n = repeat[0]
	}
	if _, err := io.WriteString(c, strings.Repeat(fmt.Sprintf("GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path), n)); err != nil {
		t.Fatal(err)
	}
	return c
}

// snapshotTime reads clouddb_exporter_snapshot_timestamp_seconds (0 when
// there is none yet).
func snapshotTime(url string) float64 {
	v, _ := testbin.SampleValue(url, "clouddb_exporter_snapshot_timestamp_seconds")
	return v
}

// TestSlowReadersMemoryBounded: clients that request /metrics and /sd/*
// and never read, each arriving after a new snapshot so that each could
// pin a rendering of its own, must not grow the exporter's memory with
// their number (without the bounds of docs/security.md, 40 such clients at
// 2,000 services took RSS from 94 MB to 1.1 GB). They are disconnected once they stop reading
// for the write deadline, and those beyond --web.max-requests get a 503.
func TestSlowReadersMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator and the exporter")
	}
	t.Parallel()
	sim := startFleetSim(t, 2000, 10)
	// A snapshot a second: each client waits for a new one.
	p, url := startPolling(t, sim, "--collect.interval=1s")
	addr := strings.TrimPrefix(url, "http://")
	testbin.WaitFor(t, 2*time.Minute, "the first snapshot", func() bool { return snapshotTime(url) > 0 })
	base := vmStatus(t, p.PID(), "VmRSS")
	const clients = 40
	last := 0.0
	for i := range clients {
		testbin.WaitFor(t, 2*time.Minute, "a new snapshot", func() bool {
			now := snapshotTime(url)
			if now > last {
				last = now
				return true
			}
			return false
		})
		neverReader(t, addr, "/metrics")
		neverReader(t, addr, []string{"/sd/services", "/sd/replica-sets", "/sd/poolers"}[i%3])
	}
	rss, peak := vmStatus(t, p.PID(), "VmRSS"), vmStatus(t, p.PID(), "VmHWM")
	t.Logf("RSS %d MiB before the slow readers, %d MiB after %d of them (peak %d MiB)", base>>20, rss>>20, 2*clients, peak>>20)
	if limit := base + 256<<20; peak > limit {
		t.Errorf("peak RSS %d MiB with %d clients that never read, want at most %d MiB (RSS before them + 256 MiB)", peak>>20, 2*clients, limit>>20)
	}
	// The exporter still answers a client that reads.
	if code, _ := testbin.Get(url + "/-/healthy"); code != http.StatusOK {
		t.Errorf("/-/healthy: %d after the slow readers", code)
	}
}

// TestMaxRequestsInFlight: beyond --web.max-requests (default 40)
// requests in flight the main listener answers 503 at once.
func TestMaxRequestsInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	sim := startFleetSim(t, 2000, 10)
	_, url := startPolling(t, sim, "--web.max-requests=3")
	addr := strings.TrimPrefix(url, "http://")
	testbin.WaitFor(t, 2*time.Minute, "the first snapshot", func() bool { return snapshotTime(url) > 0 })
	for range 3 {
		neverReader(t, addr, "/metrics", 2000)
	}
	testbin.WaitFor(t, 30*time.Second, "a 503 beyond 3 requests in flight", func() bool {
		resp, err := http.Get(url + "/metrics")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode == http.StatusServiceUnavailable
	})
}
