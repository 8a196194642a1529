// Package admin is the exporter's guarded surface for the API's write
// operations: checked in a fixed order, audited, then tracked to the end.
package admin

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/httplimit"
)

const apiPrefix = "/api/v1"

// Defaults for Options fields left at their zero value.
const (
	DefaultOperationTimeout = 30 * time.Minute
	DefaultRequestTimeout   = time.Minute
	defaultTrackInterval    = 10 * time.Second
	refreshTimeout          = 30 * time.Second
	// shutdownMargin lets a write answer and audit its outcome past its upstream bound.
	shutdownMargin = 10 * time.Second
)

// Error codes of the surface's own answers; upstream errors keep theirs.
const (
	codeUnauthorized          = "UNAUTHORIZED"
	codeOperationNotAllowed   = "OPERATION_NOT_ALLOWED"
	codeProjectNotConfigured  = "PROJECT_NOT_CONFIGURED"
	codeInvalidRequest        = "INVALID_REQUEST"
	codeConfirmationRequired  = "CONFIRMATION_REQUIRED"
	codeIdempotencyKeyReused  = "IDEMPOTENCY_KEY_REUSED"
	codeIdempotencyInProgress = "IDEMPOTENCY_KEY_IN_PROGRESS"
	codeNotFound              = "NOT_FOUND"
	codeMethodNotAllowed      = "METHOD_NOT_ALLOWED"
	codeUpstreamTimeout       = "UPSTREAM_TIMEOUT"
	codeUpstreamUnavailable   = "UPSTREAM_UNAVAILABLE"
	codeUpstreamBadResponse   = "UPSTREAM_BAD_RESPONSE"
	codeUpstreamUnauthorized  = "UPSTREAM_UNAUTHORIZED"
	codeUpstreamError         = "UPSTREAM_ERROR"
	codeInternal              = "INTERNAL_ERROR"
	codeRateLimited           = "RATE_LIMITED"
)

const (
	opListOperations = "listOperations"
	opGetOperation   = "getOperation"
	opUnknown        = "unknown"
)

// Poller is the part of *poller.Poller the admin surface uses.
type Poller interface {
	RefreshService(ctx context.Context, serviceID string) error
	RefreshReplicaSets(ctx context.Context, serviceID string) error
	RefreshVPC(ctx context.Context, vpcID string) error
	RefreshPeering(ctx context.Context, vpcID, peeringID string) error
	Snapshot() *fleet.Snapshot
}

// Project is a configured project the surface may address.
type Project struct {
	Client        *apiclient.Client
	Poller        Poller
	TrackInterval time.Duration
}

// Options configure a Server.
type Options struct {
	// Projects looks up a running project: the surface addresses nothing else.
	Projects func(id string) (Project, bool)
	// Allow lists the permitted operations; nil means DefaultAllow.
	Allow []string
	// Exactly one of Token and BasicAuthUsers (user name to bcrypt hash) is set.
	Token          string
	BasicAuthUsers map[string]string
	AuditLog       io.Writer
	// OperationTimeout is how long an asynchronous operation is tracked.
	OperationTimeout time.Duration
	// TrackInterval, when positive, overrides every Project.TrackInterval.
	TrackInterval  time.Duration
	RequestTimeout time.Duration
	// AuditFailOpen lets writes go on when the audit log cannot be written.
	AuditFailOpen bool
	// MaxRequests bounds the requests served at once; 0 means no limit.
	MaxRequests int
	Timeouts    httplimit.Timeouts
	// RateLimit, if not nil, is each authenticated caller's own budget.
	RateLimit  *RateLimit
	Registerer prometheus.Registerer
	Logger     *slog.Logger
	// Writes, when set, learns of every write the API accepted (the change
	// timeline names its caller as the actor of what follows).
	Writes WriteObserver

	// Test seams.
	catalog   []apiclient.Operation
	endpoints []*endpoint
	now       func() time.Time
}

// WriteObserver learns of a write the API accepted: its project, the ids of
// the objects it addressed or made, and the authenticated caller.
type WriteObserver interface {
	ObserveWrite(projectID string, objectIDs []string, caller string)
}

// Server is the admin surface, an http.Handler.
type Server struct {
	ctx    context.Context
	opts   Options
	logger *slog.Logger
	auth   *authenticator
	allow  map[string]bool
	mux    *http.ServeMux
	// patterns maps route patterns to operation names.
	patterns      map[string]string
	inFlight      *httplimit.InFlight
	idem          *idempotencyStore
	recent        *operationStore
	metrics       *metrics
	audit         *auditor
	idempotentOps []string
	// background counts the refresh and tracking goroutines.
	background sync.WaitGroup
	rates      *keyedLimiter // nil without a rate_limit
	unauth     *unauthAudit
	// stop ends ctx, and with it the background work; swept is closed
	// once the unauthenticated summaries' last sweep is written.
	stop  context.CancelFunc
	swept chan struct{}
}

// New returns the admin surface; its refreshes and tracking stop with ctx
// or Close.
func New(ctx context.Context, opts Options) (*Server, error) {
	if opts.Projects == nil {
		return nil, errors.New("admin: Options.Projects is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.OperationTimeout <= 0 {
		opts.OperationTimeout = DefaultOperationTimeout
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	if opts.Timeouts == (httplimit.Timeouts{}) {
		opts.Timeouts = httplimit.DefaultTimeouts
	}
	if opts.catalog == nil {
		opts.catalog = apiclient.Catalog()
	}
	if opts.endpoints == nil {
		opts.endpoints = endpoints()
	}
	if opts.now == nil {
		opts.now = time.Now
	}
	routes, err := bind(opts.catalog, opts.endpoints)
	if err != nil {
		return nil, fmt.Errorf("admin: %w", err)
	}
	if opts.Allow == nil {
		opts.Allow = defaultAllow(opts.catalog, opts.endpoints)
	}
	if err := checkAllow("allow list", opts.Allow, opts.catalog); err != nil {
		return nil, fmt.Errorf("admin: %w", err)
	}
	logger := opts.Logger.With("component", "admin")
	auth, err := newAuthenticator(opts.Token, opts.BasicAuthUsers, logger)
	if err != nil {
		return nil, fmt.Errorf("admin: %w", err)
	}
	m, err := newMetrics(opts.Registerer, opts.Allow)
	if err != nil {
		return nil, fmt.Errorf("admin: %w", err)
	}
	s := &Server{
		opts:     opts,
		logger:   logger,
		auth:     auth,
		allow:    map[string]bool{},
		mux:      http.NewServeMux(),
		patterns: map[string]string{},
		inFlight: httplimit.NewInFlight(opts.MaxRequests),
		idem:     newIdempotencyStore(time.Now, maxIdempotencyKeys),
		recent:   &operationStore{max: maxOperations},
		metrics:  m,
		audit:    &auditor{logger: logger, w: opts.AuditLog},
	}
	if opts.RateLimit != nil {
		s.rates = newKeyedLimiter(opts.RateLimit.Interval, opts.RateLimit.Burst)
	}
	s.startBackground(ctx)
	for _, op := range opts.Allow {
		s.allow[op] = true
	}
	for _, e := range routes {
		s.mux.Handle(e.pattern(), s.write(e))
		s.patterns[e.pattern()] = e.op
		if e.idempotent {
			s.idempotentOps = append(s.idempotentOps, e.op)
		}
	}
	s.mux.HandleFunc("GET "+apiPrefix+"/operations", s.listOperations)
	s.patterns["GET "+apiPrefix+"/operations"] = opListOperations
	s.mux.HandleFunc("GET "+apiPrefix+"/operations/{id}", s.getOperation)
	s.patterns["GET "+apiPrefix+"/operations/{id}"] = opGetOperation
	return s, nil
}

// startBackground starts the unauthenticated summaries' sweeps, on the
// context that the tracking and the refreshes run in too.
func (s *Server) startBackground(ctx context.Context) {
	s.unauth = newUnauthAudit(s.audit, s.opts.now)
	s.ctx, s.stop = context.WithCancel(ctx)
	s.swept = make(chan struct{})
	go func() {
		defer close(s.swept)
		s.unauth.run(s.ctx)
	}()
}

// Close stops the surface's background work (tracking, refreshes, the
// unauthenticated summaries) and waits for it: once it returns, nothing of
// the surface writes to the audit log, which can then be closed. Call it
// when no request is served any more (after http.Server.Shutdown).
func (s *Server) Close() {
	s.stop()
	s.background.Wait()
	<-s.swept
}

// apiError is an answer with an error status and a {code, message} body.
type apiError struct {
	status        int
	code, message string
	// details relays the upstream error's: its JSON when whole, else as a string.
	details json.RawMessage
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// ServeHTTP routes a request, and audits and counts it whatever happens.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &auditRecord{
		Time:       start.UTC(),
		RequestID:  newID(),
		RemoteAddr: r.RemoteAddr,
		UserAgent:  r.UserAgent(),
		Method:     r.Method,
		Operation:  opUnknown,
	}
	sw := &statusWriter{ResponseWriter: w}
	sw.Header().Set("X-Request-Id", rec.RequestID)
	authenticated := false
	defer func() {
		if v := recover(); v != nil {
			if err, ok := v.(error); ok && errors.Is(err, http.ErrAbortHandler) {
				panic(v)
			}
			s.logger.Error("Admin handler panicked", "request_id", rec.RequestID, "operation", rec.Operation, "panic", fmt.Sprint(v))
			if sw.status == 0 {
				s.writeError(sw, r, &apiError{status: http.StatusInternalServerError, code: codeInternal, message: "internal error; see the exporter's log for request " + rec.RequestID})
			}
		}
		if sw.status == 0 {
			sw.WriteHeader(http.StatusOK)
		}
		rec.Status = sw.status
		rec.Duration = time.Since(start).Seconds()
		if authenticated {
			_ = s.audit.write(eventOutcome, rec) // logged; the answer is already sent
		} else {
			s.unauth.refused(rec)
			s.metrics.unauthenticated.Inc()
		}
		s.metrics.requests.WithLabelValues(rec.Operation, strconv.Itoa(rec.Status)).Inc()
	}()
	r = r.WithContext(withRecord(r.Context(), rec))

	_, pattern := s.mux.Handler(r)
	if op, ok := s.patterns[pattern]; ok {
		rec.Operation = op
	}
	// Authentication comes first: a flood of wrong credentials must not
	// take the places in flight or the rate budget of legitimate callers.
	caller, res := s.auth.authenticate(r)
	if res != authOK {
		s.refuseUnauthenticated(sw, r, res)
		return
	}
	rec.Caller, authenticated = caller, true
	if s.rates != nil && !s.rates.allow(caller, time.Now()) {
		sw.Header().Set("Retry-After", "1")
		s.writeError(sw, r, &apiError{status: http.StatusTooManyRequests, code: codeRateLimited,
			message: "more requests than the rate_limit of --admin.web-config.file; retry later"})
		return
	}
	release, ok := s.inFlight.Acquire()
	if !ok {
		sw.Header().Set("Retry-After", "1")
		s.writeError(sw, r, &apiError{status: http.StatusServiceUnavailable, code: httplimit.TooManyCode, message: httplimit.TooManyMessage})
		return
	}
	defer release()
	if pattern == "" || path.Clean(r.URL.Path) != r.URL.Path {
		s.notRouted(sw, r)
		return
	}
	s.mux.ServeHTTP(sw, r)
}

func (s *Server) refuseUnauthenticated(w http.ResponseWriter, r *http.Request, res authResult) {
	switch res {
	case authThrottled:
		w.Header().Set("Retry-After", strconv.Itoa(int(authFailureEvery.Seconds())))
		s.writeError(w, r, &apiError{status: http.StatusTooManyRequests, code: codeRateLimited,
			message: "too many failed authentications from this address; retry later"})
	case authBusy:
		w.Header().Set("Retry-After", "1")
		s.writeError(w, r, &apiError{status: http.StatusServiceUnavailable, code: httplimit.TooManyCode,
			message: "too many password checks in progress; retry later"})
	default:
		w.Header().Set("WWW-Authenticate", s.auth.scheme())
		s.writeError(w, r, &apiError{status: http.StatusUnauthorized, code: codeUnauthorized, message: "authentication required"})
	}
}

// notRouted answers 405 where the path takes other methods, else 404.
func (s *Server) notRouted(w http.ResponseWriter, r *http.Request) {
	if path.Clean(r.URL.Path) == r.URL.Path {
		var allowed []string
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodDelete} {
			probe := r.Clone(r.Context())
			probe.Method = m
			if _, pattern := s.mux.Handler(probe); pattern != "" {
				allowed = append(allowed, m)
			}
		}
		if len(allowed) > 0 {
			w.Header().Set("Allow", strings.Join(allowed, ", "))
			s.writeError(w, r, &apiError{status: http.StatusMethodNotAllowed, code: codeMethodNotAllowed,
				message: "method " + r.Method + " is not allowed here; allowed: " + strings.Join(allowed, ", ")})
			return
		}
	}
	s.writeError(w, r, &apiError{status: http.StatusNotFound, code: codeNotFound, message: "no such route; see docs/admin.md for the admin surface's routes"})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := marshal(v)
	if err != nil {
		status, body = http.StatusInternalServerError, []byte(`{"code":"INTERNAL_ERROR","message":"cannot encode the answer"}`+"\n")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// marshal does not escape HTML: messages say ">= 1", not "\u003e= 1".
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, e *apiError) {
	recordOf(r.Context()).ErrorCode = e.code
	writeJSON(w, e.status, apiclient.ErrorBody{Code: e.code, Message: e.message, Details: e.details})
}

// fail answers an *apiError as it is, and anything else (a bug) as a logged 500.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	var e *apiError
	if !errors.As(err, &e) {
		rec := recordOf(r.Context())
		s.logger.Error("Admin request failed unexpectedly", "request_id", rec.RequestID, "operation", rec.Operation, "err", err)
		e = &apiError{status: http.StatusInternalServerError, code: codeInternal, message: "internal error; see the exporter's log for request " + rec.RequestID}
	}
	s.writeError(w, r, e)
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (s *Server) listOperations(w http.ResponseWriter, r *http.Request) {
	if err := checkNoQuery(r); err != nil {
		s.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"operations": s.recent.list()})
}

func (s *Server) getOperation(w http.ResponseWriter, r *http.Request) {
	if err := checkNoQuery(r); err != nil {
		s.fail(w, r, err)
		return
	}
	op, ok := s.recent.get(r.PathValue("id"))
	if !ok {
		s.writeError(w, r, &apiError{status: http.StatusNotFound, code: codeNotFound, message: "no recent operation with this id"})
		return
	}
	writeJSON(w, http.StatusOK, op)
}

func (s *Server) allowedOps() []string {
	var out []string
	for op := range s.allow {
		out = append(out, op)
	}
	slices.Sort(out)
	return out
}
