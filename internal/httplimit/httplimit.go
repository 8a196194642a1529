// Package httplimit bounds what a client can hold on the exporter's
// listeners: a client that never reads pins the answer written to it.
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
	Read       time.Duration
	Idle       time.Duration
	// Write includes the handler (admin upstream calls take up to 1 minute).
	Write time.Duration
	// WriteIdle applies to each WriteChunk.
	WriteIdle time.Duration
}

// DefaultTimeouts are those of both listeners.
var DefaultTimeouts = Timeouts{
	ReadHeader: 10 * time.Second,
	Read:       30 * time.Second,
	Idle:       60 * time.Second,
	Write:      2 * time.Minute,
	WriteIdle:  10 * time.Second,
}

// WriteChunk is the piece of an answer each write deadline applies to.
const WriteChunk = 1 << 20

// AddFlags registers hidden flags for tests; docs/security.md promises the defaults.
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

// Check refuses a non-positive timeout: net/http reads 0 as no bound.
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

// Server sets the timeouts on srv and logs its errors through logger.
func Server(srv *http.Server, t Timeouts, logger *slog.Logger) *http.Server {
	srv.ReadHeaderTimeout = t.ReadHeader
	srv.ReadTimeout = t.Read
	srv.IdleTimeout = t.Idle
	srv.WriteTimeout = t.Write
	srv.ErrorLog = slog.NewLogLogger(logger.With("component", "http").Handler(), slog.LevelWarn)
	return srv
}

// The answer to a request beyond the limit in flight.
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

// Handler answers 503 beyond maxRequests in flight (0: no limit) and writes as Deadlines does.
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

// Deadlines disconnects a client that leaves a chunk unread for t.WriteIdle.
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
		// Fails without deadlines (a test recorder): WriteTimeout still applies.
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

func (w *deadlineWriter) Flush() { _ = w.rc.Flush() }

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
