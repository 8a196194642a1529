// Package httplimit bounds what a client can hold on the exporter's
// listeners: time to send a request, to stay idle, to leave an answer
// unread, and requests at once. A client that never reads pins the answer
// written to it, so these bounds are what bound that memory.
package httplimit

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/alecthomas/kingpin/v2"
)

// Timeouts are what a listener allows a client.
type Timeouts struct {
	ReadHeader time.Duration
	// The largest body taken is the admin surface's 64 KiB.
	Read time.Duration
	Idle time.Duration
	// From the end of the headers to the end of the answer, handler included
	// (admin upstream calls are bounded at 1 minute).
	Write time.Duration
	// How long a client may leave each WriteChunk unread.
	WriteIdle time.Duration
}

// DefaultTimeouts are those of both listeners: generous for a slow link,
// short enough that a client cannot hold a connection or an answer for long.
var DefaultTimeouts = Timeouts{
	ReadHeader: 10 * time.Second,
	Read:       30 * time.Second,
	Idle:       60 * time.Second,
	Write:      2 * time.Minute,
	WriteIdle:  10 * time.Second,
}

// WriteChunk is the piece of an answer each write deadline applies to. At
// 64 KiB a gzip scrape of 10k services took 1.25x the time of one write
// (BenchmarkScrapeVsBytes in e2e/); at 1 MiB, 1.03x.
const WriteChunk = 1 << 20

// AddFlags registers the timeouts as hidden flags (--web.timeout.*) with
// DefaultTimeouts as defaults; Check validates them after parsing.
//
// They exist so whole-binary tests need not wait a minute per slow client.
// Hidden, because the defaults are the bound docs/security.md promises;
// flags rather than an environment variable, so a change shows in ps.
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

// Server sets the timeouts on srv and routes its errors through logger
// instead of the standard log package.
func Server(srv *http.Server, t Timeouts, logger *slog.Logger) *http.Server {
	srv.ReadHeaderTimeout = t.ReadHeader
	srv.ReadTimeout = t.Read
	srv.IdleTimeout = t.Idle
	srv.WriteTimeout = t.Write
	srv.ErrorLog = slog.NewLogLogger(logger.With("component", "http").Handler(), slog.LevelWarn)
	return srv
}

// The answer to a request beyond the requests in flight allowed.
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

// Handler wraps h: beyond maxRequests in flight (0: no limit) it answers 503
// at once, and it writes answers as Deadlines does.
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

// Deadlines wraps h so that the client must take each chunk of an answer
// within t.WriteIdle (and all before t.Write), or be disconnected.
func Deadlines(h http.Handler, t Timeouts) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&deadlineWriter{ResponseWriter: w, rc: http.NewResponseController(w), idle: t.WriteIdle, end: time.Now().Add(t.Write)}, r)
	})
}

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
		// An error means the connection takes no deadlines (a test recorder):
		// WriteTimeout still applies.
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

// Unwrap lets http.ResponseController reach Flush.
func (w *deadlineWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush implements http.Flusher for handlers that assert it.
func (w *deadlineWriter) Flush() { _ = w.rc.Flush() }

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
