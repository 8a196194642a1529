// Package httplimit bounds what a client can hold on the exporter's
// listeners: how long it may take to send a request, stay idle between
// requests, or leave an answer unread, and how many requests may be served
// at once. A client that never reads pins the answer being written to it,
// so the bounds on time and count are what bound that memory.
package httplimit

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/alecthomas/kingpin/v2"
)

// Timeouts are what a listener allows a client: how long it may take to
// send a request, stay idle between requests, or leave an answer unread.
type Timeouts struct {
	// ReadHeader bounds sending the request line and headers.
	ReadHeader time.Duration
	// Read bounds sending the whole request, body included: the largest
	// body taken is the admin surface's 64 KiB.
	Read time.Duration
	// Idle closes a keep-alive connection without a request for this
	// long; a Prometheus scraping less often reconnects each time.
	Idle time.Duration
	// Write bounds a request from the end of its headers to the end of its
	// answer, the handler's own time included (the admin surface's
	// upstream calls are bounded at 1 minute).
	Write time.Duration
	// WriteIdle is how long a client may leave the answer unread: every
	// WriteChunk written must be taken by the client within it.
	WriteIdle time.Duration
}

// DefaultTimeouts are those of both listeners. They are generous for a
// scrape or an admin call on a slow link, and short enough that a client
// cannot hold a connection, a file descriptor or an answer for long.
var DefaultTimeouts = Timeouts{
	ReadHeader: 10 * time.Second,
	Read:       30 * time.Second,
	Idle:       60 * time.Second,
	Write:      2 * time.Minute,
	WriteIdle:  10 * time.Second,
}

// WriteChunk is the piece of an answer each write deadline applies to:
// each costs a deadline and a system call. At 64 KiB, a gzip scrape of
// 10k services (4.4 MB) took 68 of each and about 1.25x the time of a
// server writing the same bytes in one call (BenchmarkScrapeVsBytes in
// e2e/); at 1 MiB, 5 and about 1.03x. A client must still take 1 MiB
// every WriteIdle (100 KB/s) or be disconnected.
const WriteChunk = 1 << 20

// AddFlags registers the timeouts as hidden flags (--web.timeout.*) on app,
// with DefaultTimeouts as defaults; Check validates them after parsing.
//
// They exist for the whole-binary tests, which prove that the listeners
// close idle, trickling and non-reading clients: at the defaults each such
// test waits a minute. Hidden, because the defaults are the bound the
// exporter promises (docs/security.md) and loosening them only serves
// clients that hold resources; flags rather than an environment variable,
// so that a changed bound shows on the command line (ps, the Pod spec) and
// a bad value is a startup error naming the flag, like every setting.
func AddFlags(app *kingpin.Application) *Timeouts {
	t := &Timeouts{}
	for _, f := range []struct {
		name string
		dst  *time.Duration
		def  time.Duration
	}{
		{"read-header", &t.ReadHeader, DefaultTimeouts.ReadHeader},
		{"read", &t.Read, DefaultTimeouts.Read},
		{"idle", &t.Idle, DefaultTimeouts.Idle},
		{"write", &t.Write, DefaultTimeouts.Write},
		{"write-idle", &t.WriteIdle, DefaultTimeouts.WriteIdle},
	} {
		app.Flag("web.timeout."+f.name, "Listener timeout (for tests; see internal/httplimit).").
			Hidden().Default(f.def.String()).DurationVar(f.dst)
	}
	return t
}

// Check reports a timeout that is not positive, naming its flag: 0 would
// mean no bound at all in net/http.
func (t Timeouts) Check() error {
	for name, d := range map[string]time.Duration{
		"read-header": t.ReadHeader, "read": t.Read, "idle": t.Idle, "write": t.Write, "write-idle": t.WriteIdle,
	} {
		if d <= 0 {
			return fmt.Errorf("--web.timeout.%s must be positive", name)
		}
	}
	return nil
}

// Server sets the timeouts on srv and routes its errors (failed accepts,
// TLS handshakes) through logger instead of the standard log package.
func Server(srv *http.Server, t Timeouts, logger *slog.Logger) *http.Server {
	srv.ReadHeaderTimeout = t.ReadHeader
	srv.ReadTimeout = t.Read
	srv.IdleTimeout = t.Idle
	srv.WriteTimeout = t.Write
	srv.ErrorLog = slog.NewLogLogger(logger.With("component", "http").Handler(), slog.LevelWarn)
	return srv
}

// Answer to a request beyond the requests in flight allowed.
const (
	TooManyCode    = "TOO_MANY_REQUESTS_IN_FLIGHT"
	TooManyMessage = "more requests in flight than --web.max-requests; retry later"
)

// InFlight bounds the requests served at once.
type InFlight struct{ sem chan struct{} }

// NewInFlight allows limit requests at once; 0 means no limit.
func NewInFlight(limit int) *InFlight {
	if limit <= 0 {
		return &InFlight{}
	}
	return &InFlight{sem: make(chan struct{}, limit)}
}

// Acquire takes a place without waiting; ok is false when none is free.
// release gives it back.
func (l *InFlight) Acquire() (release func(), ok bool) {
	if l.sem == nil {
		return func() {}, true
	}
	select {
	case l.sem <- struct{}{}:
		return func() { <-l.sem }, true
	default:
		return nil, false
	}
}

// Handler wraps h: beyond maxRequests requests in flight (0: no limit) it
// answers 503 at once, and it writes answers as Deadlines does.
func Handler(h http.Handler, maxRequests int, t Timeouts) http.Handler {
	limit := NewInFlight(maxRequests)
	h = Deadlines(h, t)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		release, ok := limit.Acquire()
		if !ok {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"code":"` + TooManyCode + `","message":"` + TooManyMessage + `"}` + "\n"))
			return
		}
		defer release()
		h.ServeHTTP(w, r)
	})
}

// Deadlines wraps h so that it writes answers in chunks, each of which the
// client must take within t.WriteIdle (and all before t.Write): a client
// that stops reading is disconnected, and releases what it held.
func Deadlines(h http.Handler, t Timeouts) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), idle: t.WriteIdle, end: time.Now().Add(t.Write)}, r)
	})
}

// deadlineWriter sets a write deadline before each chunk it writes.
type deadlineWriter struct {
	http.ResponseWriter
	rc   *http.ResponseController
	idle time.Duration
	end  time.Time
}

func (w *deadlineWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		n := min(len(p), WriteChunk)
		// An error means the connection cannot take deadlines (a test
		// recorder, say): the server's WriteTimeout still applies.
		_ = w.rc.SetWriteDeadline(earlier(time.Now().Add(w.idle), w.end))
		m, err := w.ResponseWriter.Write(p[:n])
		written += m
		if err != nil {
			return written, err
		}
		p = p[n:]
	}
	return written, nil
}

// Unwrap lets http.ResponseController reach the underlying writer (for
// Flush, say).
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush implements http.Flusher for handlers that assert it.
func (w *deadlineWriter) Flush() { _ = w.rc.Flush() }

// earlier returns the earlier of two times.
func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
