package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

// DefaultUserAgent is sent when Config.UserAgent is empty.
const DefaultUserAgent = "clouddb_exporter-apiclient/1"

// ErrNoAPIKey is returned by GetAuthInfo when the Client has no API key; no
// request is sent then.
var ErrNoAPIKey = errors.New("no API key configured")

// ErrInvalidID is wrapped by the error returned when an operation is given an
// empty id (or "." or ".."), which would address a different resource; no
// request is sent then.
var ErrInvalidID = errors.New("invalid id")

// ErrBodyTooLarge is wrapped by the error returned when a successful
// response's body exceeds Config.MaxBodyBytes.
var ErrBodyTooLarge = errors.New("response body too large")

// ErrValueTooLarge is wrapped by the error returned when one value of a
// successful read's body (a list element, a lone token, or a run of white
// space) exceeds Config.MaxValueBytes.
var ErrValueTooLarge = errors.New("response value too large")

// ErrTooManyResources is wrapped by the error returned when a list answer
// holds more resources than Config.MaxListLength.
var ErrTooManyResources = errors.New("too many resources")

// ErrMostlyInvalid is wrapped by the DecodeError of a list answer of which
// more than half the elements, past the first 100, did not decode.
var ErrMostlyInvalid = errors.New("most list elements did not decode")

// Client calls the API for one project with one set of credentials. It is
// safe for concurrent use; all its calls share one token bucket.
type Client struct {
	base      string // BaseURL without trailing slash
	projectID string
	userAgent string
	// creds hides the keys inside a closure: a reflective print of a
	// Client value (whose unexported fields bypass Secret's methods, even
	// behind a pointer) shows only a func address.
	// creds returns the same pointer until the keys change, so that a
	// request can tell whether they did since it was sent.
	creds    func() *credentials
	setCreds func(*credentials)
	// onUnauthorized is Config.OnUnauthorized.
	onUnauthorized func() bool
	http           *http.Client
	limiter        *rate.Limiter
	// trackLimiter is the tracking share (see Tracking).
	trackLimiter *rate.Limiter
	observer     Observer

	timeout        time.Duration
	maxRetries     int
	retryBaseDelay time.Duration
	retryMaxDelay  time.Duration
	maxRetryAfter  time.Duration
	maxBodyBytes   int64
	maxValueBytes  int64
	maxListLength  int
	logger         *slog.Logger

	// Seams for tests: jitter returns a value in [0, n); sleep waits d or
	// until ctx is done, for backoff and for the token bucket; now tells the
	// time for HTTP-date Retry-After.
	jitter func(n int64) int64
	sleep  func(ctx context.Context, d time.Duration) error
	now    func() time.Time

	// basicAuthInfoRefused is set when /auth/info answered 401 to Basic:
	// a deployment of the first revision, which takes only a bearer key.
	basicAuthInfoRefused int32 // read and written with sync/atomic; not an atomic.Bool, so that Client stays printable by value
	// cutLogged is set once a cut text was logged (see cutText).
	cutLogged int32 // read and written with sync/atomic
}

// ProjectID returns the project the Client addresses.
func (c *Client) ProjectID() string { return c.projectID }

// ReadsAuthInfo reports whether GetAuthInfo can be called: with the bearer
// API key, or without one with Basic (revision 2026) until the API has
// refused Basic there with 401 (the first revision). It is true when no
// API key is set.
func (c *Client) ReadsAuthInfo() bool {
	return c.creds().bearer != "" || atomic.LoadInt32(&c.basicAuthInfoRefused) == 0
}

// String describes the Client without its credentials.
func (c *Client) String() string {
	return fmt.Sprintf("apiclient.Client{base_url=%s project_id=%s reads_auth_info=%t}", c.base, c.projectID, c.ReadsAuthInfo())
}

// GoString implements fmt.GoStringer so that %#v shows no credentials.
func (c *Client) GoString() string { return c.String() }

// Format implements fmt.Formatter: every verb prints String, so that no verb
// (not even %d or %x) walks the struct and reaches the keys.
func (c *Client) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, c.String()) }

// path fills the {name} placeholders of tmpl: {project_id} with the Client's
// project, the others in order with ids, each path-escaped. An id that is
// empty, "." or ".." is refused before anything is sent: it would address
// another resource (the collection, or a parent after path cleaning).
func (c *Client) path(tmpl string, ids ...string) (string, error) {
	var b strings.Builder
	for {
		open := strings.IndexByte(tmpl, '{')
		if open < 0 {
			b.WriteString(tmpl)
			break
		}
		end := strings.IndexByte(tmpl[open:], '}') + open
		name := tmpl[open+1 : end]
		b.WriteString(tmpl[:open])
		tmpl = tmpl[end+1:]

		v := c.projectID
		if name != "project_id" {
			if len(ids) == 0 {
				panic("apiclient: too few ids for path template") // programming error, covered by tests
			}
			v, ids = ids[0], ids[1:]
		}
		if strings.TrimSpace(v) == "" || v == "." || v == ".." {
			return "", fmt.Errorf("%s %q: %w", name, v, ErrInvalidID)
		}
		b.WriteString(url.PathEscape(v))
	}
	if len(ids) != 0 {
		panic("apiclient: too many ids for path template")
	}
	return b.String(), nil
}

// call describes one operation request; the method, path template and
// success status come from the operation's catalog entry.
type call struct {
	op    string
	ids   []string   // values for the template's placeholders after {project_id}
	body  any        // request body, marshalled to JSON; nil for none
	query url.Values // query parameters; nil for none
	out   any        // decode target; nil to ignore the body
	// begin and each, when each is set, take a list's elements as they
	// are decoded (see StreamServices): out is then left empty.
	begin func()
	each  func(elem any)

	method string // filled by do from the catalog
	want   int    // filled by do from the catalog
	write  bool   // filled by do from the catalog: retried and decoded as a write
}

// doValue runs cl and decodes the answer into a new T.
func doValue[T any](ctx context.Context, c *Client, cl call) (*T, error) {
	var v T
	cl.out = &v
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	return &v, nil
}

// doList runs cl and decodes a JSON array; null decodes to an empty slice
// so that callers can tell "nothing" from an error by err alone.
func doList[T any](ctx context.Context, c *Client, cl call) ([]T, error) {
	var v []T
	cl.out = &v
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	if v == nil {
		v = []T{}
	}
	return v, nil
}

// do is the one request path of every operation: it builds the request,
// waits for the rate limiter, runs attempts and retries them when that is
// safe, and types the errors.
func (c *Client) do(ctx context.Context, cl call) error {
	o, ok := byName[cl.op]
	if !ok {
		panic("apiclient: operation " + cl.op + " is not in the catalog") // programming error, covered by tests
	}
	cl.method, cl.want, cl.write = o.Method, o.Success, o.Write
	path, err := c.path(o.Path, cl.ids...)
	if err != nil {
		return fmt.Errorf("apiclient: %s: %w", cl.op, err)
	}
	if len(cl.query) > 0 {
		path += "?" + cl.query.Encode()
	}
	var payload []byte
	if cl.body != nil {
		if payload, err = json.Marshal(cl.body); err != nil {
			return fmt.Errorf("apiclient: %s: encoding request body: %w", cl.op, err)
		}
	}
	attempts := 1 + c.maxRetries
	refreshed := false
	for attempt := 0; ; attempt++ {
		var sent *credentials
		err := c.wait(ctx, cl.op)
		if err != nil {
			err = &TransportError{Operation: cl.op, Err: err}
		} else {
			sent = c.creds()
			err = c.attempt(ctx, cl, path, payload, sent)
		}
		if err == nil {
			return nil
		}
		if IsUnauthorized(err) && !refreshed {
			// Rejected keys may have been rotated under us: when the
			// keys changed since the request was sent (whoever installed
			// them: the file watch, a reload, another request's 401), or
			// the source has new ones, try once more with them at once,
			// counted as a retry but outside the retry budget (a 401
			// changed nothing upstream, so this is safe for writes).
			refreshed = true
			if c.creds() == sent && c.onUnauthorized != nil {
				c.onUnauthorized()
			}
			if c.creds() != sent {
				c.observer.ObserveRetry(cl.op)
				attempt--
				continue
			}
		}
		delay, retry := c.retryable(ctx, !cl.write, err, attempt)
		if !retry {
			return err
		}
		if attempt+1 >= attempts {
			if attempts == 1 {
				return err // retries are disabled: there was no budget to use up
			}
			return fmt.Errorf("apiclient: %s: giving up after %d attempts: %w", cl.op, attempts, err)
		}
		c.observer.ObserveRetry(cl.op)
		if serr := c.sleep(ctx, delay); serr != nil {
			return fmt.Errorf("apiclient: %s: stopped retrying after %d attempts: %w (last error: %w)", cl.op, attempt+1, serr, err)
		}
	}
}

// attempt sends one HTTP request with the keys cr and handles its answer.
func (c *Client) attempt(ctx context.Context, cl call, path string, payload []byte, cr *credentials) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()

	var body io.Reader
	if payload != nil {
		body = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("apiclient: %s: building request: %w", cl.op, err)
	}
	if payload == nil && cl.method == http.MethodGet {
		// Go's transport sends an idempotent request again, unasked and
		// unseen, when a reused connection fails after it was written:
		// the API sees a request this Client never counted, outside the
		// retry budget. A body it cannot rewind makes the read
		// non-replayable (as http.Transport documents); being empty, it
		// is dropped before an HTTP/1.1 request is written, and over
		// HTTP/2 only an empty DATA frame ends the stream. The retry
		// policy (retryable) is then the only one, and every request
		// sent is observed.
		req.Body, req.GetBody = noReplay{}, nil
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", c.userAgent)
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if cl.op == OpGetAuthInfo && cr.bearer != "" {
		req.Header.Set("Authorization", cr.bearer)
	} else {
		req.Header.Set("Authorization", cr.basic)
	}

	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		c.observer.ObserveRequest(cl.op, CodeTransportError, time.Since(start))
		return &TransportError{Operation: cl.op, Err: err}
	}
	defer resp.Body.Close()

	if resp.StatusCode != cl.want {
		// Even a too large error body yields an APIError: the status is
		// what callers and the retry policy act on.
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody+1))
		c.observer.ObserveRequest(cl.op, strconv.Itoa(resp.StatusCode), time.Since(start))
		if err != nil && len(data) == 0 {
			return &TransportError{Operation: cl.op, Err: fmt.Errorf("reading response body: %w", err)}
		}
		return c.newAPIError(cl, path, resp, data)
	}
	if _, relay := ctx.Value(answerKey{}).(*[]byte); cl.write || relay {
		return c.readWhole(ctx, cl, resp, start)
	}
	// A read is decoded as it streams in; its lenient decoding drops what
	// does not decode.
	rb := newLimitedBody(resp.Body, c.maxBodyBytes)
	derr := decodeStream(cl.op, rb, cl.out, func(FieldError) { c.observer.ObserveDecodeError(cl.op) }, c.creds().redactor, func() ([]byte, bool) {
		return rb.prefix, len(rb.prefix) == snippetPrefix
	}, streamOptions{maxValue: c.maxValueBytes, begin: cl.begin, each: cl.each, maxItems: c.maxListLength,
		tooLong: func() { c.observer.ObserveListTooLong(cl.op) }, cut: func() { c.cutText(cl.op) }})
	switch {
	case rb.tooLarge:
		c.observer.ObserveRequest(cl.op, CodeDecodeError, time.Since(start))
		return fmt.Errorf("apiclient: %s: %w: more than %d bytes (see --api.max-response-size)", cl.op, ErrBodyTooLarge, c.maxBodyBytes)
	case rb.readErr != nil:
		c.observer.ObserveRequest(cl.op, CodeTransportError, time.Since(start))
		return &TransportError{Operation: cl.op, Err: fmt.Errorf("reading response body: %w", rb.readErr)}
	}
	c.observer.ObserveRequest(cl.op, answerCode(resp, derr), time.Since(start))
	return derr
}

// maxWholeBody bounds an answer read whole (see readWhole) when
// Config.MaxValueBytes is smaller: a write's answer is one resource.
const maxWholeBody = 32 << 20

// answerCode is the code ObserveRequest reports for a complete answer:
// its status, or CodeDecodeError when it was not decoded (malformed, cut
// short, or beyond the size bounds).
func answerCode(resp *http.Response, err error) string {
	if errors.As(err, new(*DecodeError)) || errors.Is(err, ErrValueTooLarge) || errors.Is(err, ErrBodyTooLarge) || errors.Is(err, ErrTooManyResources) {
		return CodeDecodeError
	}
	return strconv.Itoa(resp.StatusCode)
}

// noReplay is an empty request body that cannot be rewound (see attempt).
type noReplay struct{}

func (noReplay) Read([]byte) (int, error) { return 0, io.EOF }
func (noReplay) Close() error             { return nil }

// readWhole handles the success answer of a write (or of a call whose
// answer is relayed, see WithAnswer): small, read whole within the limit,
// recorded as received, and decoded whole or not at all. An answer
// documented without a body succeeds whatever body it carries: the status
// is the answer, and a write the API accepted must not look failed.
func (c *Client) readWhole(ctx context.Context, cl call, resp *http.Response, start time.Time) error {
	// Held whole, so bounded by what one value may hold as well.
	limit := min(c.maxBodyBytes, max(c.maxValueBytes, maxWholeBody))
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	tooLarge := int64(len(data)) > limit
	if cl.out == nil {
		c.observer.ObserveRequest(cl.op, strconv.Itoa(resp.StatusCode), time.Since(start))
		if err == nil && !tooLarge {
			recordAnswer(ctx, data)
		}
		return nil
	}
	if err != nil {
		c.observer.ObserveRequest(cl.op, CodeTransportError, time.Since(start))
		return &TransportError{Operation: cl.op, Err: fmt.Errorf("reading response body: %w", err)}
	}
	if tooLarge {
		c.observer.ObserveRequest(cl.op, CodeDecodeError, time.Since(start))
		return fmt.Errorf("apiclient: %s: %w: more than %d bytes (see --api.max-response-size and --api.max-value-size)", cl.op, ErrBodyTooLarge, limit)
	}
	recordAnswer(ctx, data)
	var drop func(FieldError)
	if !cl.write {
		drop = func(FieldError) { c.observer.ObserveDecodeError(cl.op) }
	}
	// Already read whole: its values need no bound of their own.
	derr := decodeStream(cl.op, bytes.NewReader(data), cl.out, drop, c.creds().redactor, func() ([]byte, bool) {
		return data[:min(len(data), snippetPrefix)], len(data) > snippetPrefix
	}, streamOptions{cut: func() { c.cutText(cl.op) }})
	c.observer.ObserveRequest(cl.op, answerCode(resp, derr), time.Since(start))
	return derr
}

// cutText counts a text of op's answer cut to MaxTextBytes, and logs the
// first of the Client's: one line, not one per resource.
func (c *Client) cutText(op string) {
	c.observer.ObserveTextTruncated(op)
	if atomic.CompareAndSwapInt32(&c.cutLogged, 0, 1) {
		c.logger.Warn("The API sent a text longer than the exporter keeps; it was cut, and later ones are only counted",
			"operation", op, "max_bytes", MaxTextBytes)
	}
}

// trackingKey marks a context whose calls draw on the tracking share.
type trackingKey struct{}

// Tracking returns ctx marked so that the Client's calls made with it
// (following an admin operation until it settles, say) first wait for a
// token of the tracking share: a separate bucket of Config.TrackingShare
// of the rate limit. They still take their token from the shared bucket
// too, so the rate limit holds as a whole, and however many operations are
// followed they use at most that share of it: the poll cycle, which plans
// 90% of the rate, is never starved.
func Tracking(ctx context.Context) context.Context {
	return context.WithValue(ctx, trackingKey{}, true)
}

// wait takes a token from the shared bucket, reporting any wait; calls
// marked by Tracking take one from the tracking share first.
func (c *Client) wait(ctx context.Context, op string) error {
	if ctx.Value(trackingKey{}) != nil {
		if err := c.take(ctx, c.trackLimiter, op); err != nil {
			return err
		}
	}
	return c.take(ctx, c.limiter, op)
}

func (c *Client) take(ctx context.Context, l *rate.Limiter, op string) error {
	r := l.Reserve()
	d := r.Delay()
	if d <= 0 {
		return nil
	}
	c.observer.ObserveRateLimitWait(op, d)
	if err := c.sleep(ctx, d); err != nil {
		r.Cancel() // give the token back: no request was sent
		return err
	}
	return nil
}

// sleepCtx waits d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// secretResponses are operations whose success body carries a secret
// (initial_password): their bodies are never quoted in errors.
var secretResponses = map[string]bool{OpCreateService: true, OpForkService: true}

// decodeSnippet quotes the start of a body that did not decode, without
// the credentials.
func decodeSnippet(op string, data []byte, truncated bool, red *Redactor) string {
	if secretResponses[op] {
		return "<omitted: response carries a secret>"
	}
	return red.Snippet(data, 64, truncated)
}

// Redactor returns the redaction of the Client's credentials, for callers
// that print other text the server sent (see Redactor).
func (c *Client) Redactor() *Redactor { return c.creds().redactor }

type nopObserver struct{}

func (nopObserver) ObserveRequest(string, string, time.Duration) {}
func (nopObserver) ObserveRetry(string)                          {}
func (nopObserver) ObserveRateLimitWait(string, time.Duration)   {}
func (nopObserver) ObserveDecodeError(string)                    {}
func (nopObserver) ObserveListTooLong(string)                    {}
func (nopObserver) ObserveTextTruncated(string)                  {}
