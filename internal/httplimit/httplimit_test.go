package httplimit

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kingpin/v2"
)

func TestMaxRequests(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 2)
	srv := httptest.NewServer(Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		entered <- struct{}{}
		<-release
		_, _ = w.Write([]byte("ok"))
	}), 1, DefaultTimeouts))
	defer srv.Close()
	first := make(chan int)
	go func() {
		resp, err := http.Get(srv.URL)
		if err != nil {
			first <- 0
			return
		}
		resp.Body.Close()
		first <- resp.StatusCode
	}()
	<-entered
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("second request in flight: %d, want 503", resp.StatusCode)
	}
	close(release)
	if code := <-first; code != http.StatusOK {
		t.Errorf("first request: %d, want 200", code)
	}
	select {
	case <-entered:
		t.Error("the refused request reached the handler")
	default:
	}
}

// TestClientThatNeverReads: the write to a client that reads nothing
// fails after the write idle timeout (short here), and the handler
// returns, releasing the answer it held.
func TestClientThatNeverReads(t *testing.T) {
	timeouts := DefaultTimeouts
	timeouts.WriteIdle = 200 * time.Millisecond
	answer := bytes.Repeat([]byte("x"), 64<<20)
	done := make(chan error, 1)
	srv := httptest.NewUnstartedServer(Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, err := w.Write(answer)
		done <- err
	}), 0, timeouts))
	Server(srv.Config, timeouts, slog.New(slog.DiscardHandler))
	srv.Start()
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	if _, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("write error %v, want a timeout", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the write to a client that never reads did not end")
	}
}

// TestTimeoutFlags: the hidden flags default to DefaultTimeouts, set each
// timeout, stay out of --help, and a non-positive one is refused by name.
func TestTimeoutFlags(t *testing.T) {
	parse := func(args ...string) (*Timeouts, *kingpin.Application) {
		t.Helper()
		app := kingpin.New("test", "")
		timeouts := AddFlags(app)
		if _, err := app.Parse(args); err != nil {
			t.Fatal(err)
		}
		return timeouts, app
	}
	got, app := parse()
	if *got != DefaultTimeouts || got.Check() != nil {
		t.Errorf("defaults %+v (%v), want %+v", *got, got.Check(), DefaultTimeouts)
	}
	var help bytes.Buffer
	app.UsageWriter(&help)
	app.Usage(nil)
	if strings.Contains(help.String(), "web.timeout") {
		t.Errorf("the test timeouts are in --help:\n%s", help.String())
	}
	got, _ = parse("--web.timeout.read-header=1s", "--web.timeout.read=2s", "--web.timeout.idle=3s", "--web.timeout.write=4s", "--web.timeout.write-idle=5s")
	if want := (Timeouts{time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second, 5 * time.Second}); *got != want {
		t.Errorf("set %+v, want %+v", *got, want)
	}
	got, _ = parse("--web.timeout.idle=0s")
	if err := got.Check(); err == nil || !strings.Contains(err.Error(), "--web.timeout.idle") {
		t.Errorf("idle 0: %v, want an error naming --web.timeout.idle", err)
	}
}
