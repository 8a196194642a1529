package httplimit

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

func TestMaxRequests(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 2)
	srv := httptest.NewServer(Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		entered <- struct{}{}
		<-release
		_, _ = w.Write([]byte("ok"))
	}), 1))
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
// fails after WriteIdleTimeout, and the handler returns, releasing the
// answer it held.
func TestClientThatNeverReads(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the write deadline")
	}
	answer := bytes.Repeat([]byte("x"), 64<<20)
	done := make(chan error, 1)
	srv := httptest.NewUnstartedServer(Handler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, err := w.Write(answer)
		done <- err
	}), 0))
	Server(srv.Config, slog.New(slog.DiscardHandler))
	srv.Start()
	defer srv.Close()
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Errorf("write error %v, want a timeout", err)
		}
	case <-time.After(WriteIdleTimeout + time.Minute):
		t.Fatal("the write to a client that never reads did not end")
	}
}
