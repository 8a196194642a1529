package e2e

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestConnectionLimit: with --web.max-connections and
// --admin.max-connections at 4, 4 idle keep-alive connections fill a
// listener; 20 more are not accepted (they wait in the kernel's accept
// queue, which /proc/net/tcp shows, and take no descriptor of the
// process), and a scrape sent behind them is answered once the idle ones
// close. Before the limits, every connection was accepted: 24,000 idle
// ones exhausted the file descriptors of both listeners.
func TestConnectionLimit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	t.Parallel()
	const limit, extra = 4, 20
	e := startAdmin(t, nil, "--web.max-connections=4", "--admin.max-connections=4")
	// Connections the helpers left in the default client's pool would
	// hold places.
	http.DefaultClient.CloseIdleConnections()
	for _, l := range []struct{ name, addr, path string }{
		{"main", e.Addr, "/metrics"},
		{"admin", strings.TrimPrefix(e.AdminURL, "http://"), "/api/v1/operations"},
	} {
		t.Run(l.name, func(t *testing.T) {
			dial := func() net.Conn {
				t.Helper()
				c, err := net.Dial("tcp", l.addr)
				if err != nil {
					t.Fatal(err)
				}
				// Against a hang, not a timing assertion.
				_ = c.SetDeadline(time.Now().Add(time.Minute))
				return c
			}
			var idle, waiting []net.Conn
			for range limit {
				c := dial()
				if code := get(t, c, l.path); code == 0 {
					t.Fatal("no answer")
				}
				idle = append(idle, c)
			}
			fds := openFDs(t, e.PID())
			for range extra {
				waiting = append(waiting, dial())
			}
			scrape := dial()
			if _, err := fmt.Fprintf(scrape, "GET %s HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\nConnection: close\r\n\r\n", l.path, e.AdminAuth); err != nil {
				t.Fatal(err)
			}
			testbin.WaitFor(t, 20*time.Second, "the connections beyond the limit to wait in the accept queue", func() bool {
				return acceptQueue(t, l.addr) >= extra+1
			})
			if n := openFDs(t, e.PID()); n > fds+extra/2 {
				t.Errorf("open descriptors went from %d to %d with %d connections waiting", fds, n, extra+1)
			}
			for _, c := range append(idle, waiting...) {
				_ = c.Close()
			}
			if code := readStatus(t, scrape); code != http.StatusOK {
				t.Errorf("the scrape behind the limit: %d, want 200 once the idle connections closed", code)
			}
			_ = scrape.Close()
		})
	}
}

// get sends one request on c, reads its answer and returns its status (0
// when none came); c stays open.
func get(t *testing.T, c net.Conn, path string) int {
	t.Helper()
	if _, err := fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path); err != nil {
		t.Fatal(err)
	}
	return readStatus(t, c)
}

func readStatus(t *testing.T, c net.Conn) int {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Log(err)
		return 0
	}
	defer resp.Body.Close()
	_, _ = bufio.NewReader(resp.Body).WriteTo(devNull{})
	return resp.StatusCode
}

type devNull struct{}

func (devNull) Write(p []byte) (int, error) { return len(p), nil }

// openFDs counts the descriptors process pid has open.
func openFDs(t *testing.T, pid int) int {
	t.Helper()
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}

// acceptQueue is the number of connections waiting to be accepted on the
// listening socket at addr: for a socket in LISTEN (state 0A),
// /proc/net/tcp's rx_queue.
func acceptQueue(t *testing.T, addr string) int {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		t.Fatal(err)
	}
	suffix := fmt.Sprintf(":%04X", p)
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 5 || !strings.HasSuffix(f[1], suffix) || f[3] != "0A" {
				continue
			}
			_, rx, _ := strings.Cut(f[4], ":")
			n, err := strconv.ParseInt(rx, 16, 64)
			if err != nil {
				t.Fatal(err)
			}
			return int(n)
		}
	}
	t.Fatalf("no listening socket on %s in /proc/net/tcp", addr)
	return 0
}

// TestAdminConnectionsPerClient: one address holding 530 idle connections
// made every other admin caller wait 7-9 s. An address holds at most 64:
// the one after is closed at once, and another address's request is
// answered while the 64 stay open.
func TestAdminConnectionsPerClient(t *testing.T) {
	if testing.Short() {
		t.Skip("whole-binary test")
	}
	t.Parallel()
	e := startAdmin(t, nil)
	addr := strings.TrimPrefix(e.AdminURL, "http://")
	dial := func(local string) net.Conn {
		t.Helper()
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		// Against a hang, not a timing assertion.
		_ = c.SetDeadline(time.Now().Add(time.Minute))
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	// The helpers' pooled connections (at most 2 idle a host) count too.
	http.DefaultClient.CloseIdleConnections()
	served := 0
	for ; served < 70; served++ {
		code := get(t, dial("127.0.0.1"), "/api/v1/operations")
		if code == 0 {
			break
		}
		if code != http.StatusUnauthorized {
			t.Fatalf("an idle connection's request: %d, want 401", code)
		}
	}
	if served > 64 || served < 62 {
		t.Errorf("%d connections from one address served at once, want 64 (62 if the helpers' 2 were still open)", served)
	}
	if code := get(t, dial("127.0.0.1"), "/api/v1/operations"); code != 0 {
		t.Errorf("a connection from a full address was served (%d), want it closed", code)
	}
	other := dial("127.0.0.2")
	if _, err := fmt.Fprintf(other, "GET /api/v1/operations HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\n\r\n", e.AdminAuth); err != nil {
		t.Fatal(err)
	}
	if code := readStatus(t, other); code != http.StatusOK {
		t.Errorf("another address's request: %d, want 200", code)
	}
}
