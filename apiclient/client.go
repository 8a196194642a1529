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

// ErrNoAPIKey is returned by GetAuthInfo, sending nothing, without an API key.
var ErrNoAPIKey = errors.New("no API key configured")

// ErrInvalidID is wrapped when an id is empty, "." or "..", which would address another resource.
var ErrInvalidID = errors.New("invalid id")

// ErrBodyTooLarge is wrapped when a success body exceeds Config.MaxBodyBytes.
var ErrBodyTooLarge = errors.New("response body too large")

// ErrValueTooLarge is wrapped when one value of a read's body exceeds Config.MaxValueBytes.
var ErrValueTooLarge = errors.New("response value too large")

// ErrTooManyResources is wrapped when a list exceeds Config.MaxListLength.
var ErrTooManyResources = errors.New("too many resources")

// ErrMostlyInvalid is wrapped when over half a list's elements, past the first 100, did not decode.
var ErrMostlyInvalid = errors.New("most list elements did not decode")

// Client calls the API for one project. It is safe for concurrent use; its calls share one token bucket.
type Client struct {
	base            string // BaseURL without trailing slash
	projectID       string
	userAgentHeader []string
	// A closure, so that a reflective print shows no keys; a new pointer when the keys change (see do).
	creds                 func() *credentials
	setCreds              func(*credentials)
	onUnauthorized        func() bool
	http                  *http.Client
	limiter, trackLimiter *rate.Limiter
	observer              Observer

	timeout, retryBaseDelay, retryMaxDelay, maxRetryAfter time.Duration
	maxRetries, maxListLength                             int
	maxBodyBytes, maxValueBytes                           int64
	logger                                                *slog.Logger

	jitter func(n int64) int64
	sleep  func(ctx context.Context, d time.Duration) error
	now    func() time.Time

	basicAuthInfoRefused int32 // read and written with sync/atomic; not an atomic.Bool, so that Client stays printable by value
	cutLogged            int32 // read and written with sync/atomic
	// skew: a pointer, so that Client stays printable by value (see clock.go).
	skew *clockSkew
}

// ProjectID returns the project the Client addresses.
func (c *Client) ProjectID() string { return c.projectID }

// ReadsAuthInfo reports whether GetAuthInfo can be called: with the API key, or with Basic until refused.
func (c *Client) ReadsAuthInfo() bool {
	return c.creds().bearer != "" || atomic.LoadInt32(&c.basicAuthInfoRefused) == 0
}

// String describes the Client without its credentials.
func (c *Client) String() string {
	return fmt.Sprintf("apiclient.Client{base_url=%s project_id=%s reads_auth_info=%t}", c.base, c.projectID, c.ReadsAuthInfo())
}

// Format prints String for every verb, so that none walks to the keys.
func (c *Client) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, c.String()) }

// requestURL is the base URL, tmpl with its ids escaped, then query. An empty, "." or ".." id would
// address the collection, or a parent after path cleaning.
func (c *Client) requestURL(tmpl, query string, ids ...string) (string, error) {
	var b strings.Builder
	b.Grow(len(c.base) + 2*len(tmpl) + len(query)) // one allocation while the ids are no longer than tmpl
	b.WriteString(c.base)
	for {
		before, rest, found := strings.Cut(tmpl, "{")
		if b.WriteString(before); !found {
			break
		}
		var name string
		name, tmpl, _ = strings.Cut(rest, "}")

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
	b.WriteString(query)
	return b.String(), nil
}

type call struct {
	op      string
	ids     []string // values for the template's placeholders after {project_id}
	body    any      // request body, marshalled to JSON; nil for none
	payload []byte   // body encoded by do, for each attempt; nil for none
	query   string   // "?" and the encoded query parameters; "" for none
	out     any      // decode target; nil to ignore the body
	begin   func()
	each    func(elem any)

	method string // filled by do from the catalog
	want   int    // filled by do from the catalog
	write  bool   // filled by do from the catalog: retried and decoded as a write
}

func doValue[T any](ctx context.Context, c *Client, cl call) (*T, error) {
	var v T
	cl.out = &v
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	return &v, nil
}

func doList[T any](ctx context.Context, c *Client, cl call) ([]T, error) {
	v, err := doValue[[]T](ctx, c, cl)
	if err != nil {
		return nil, err
	}
	if *v == nil {
		return []T{}, nil
	}
	return *v, nil
}

func (c *Client) do(ctx context.Context, cl call) error {
	o, ok := byName[cl.op]
	if !ok {
		panic("apiclient: operation " + cl.op + " is not in the catalog") // programming error, covered by tests
	}
	cl.method, cl.want, cl.write = o.Method, o.Success, o.Write
	target, err := c.requestURL(o.Path, cl.query, cl.ids...)
	if err != nil {
		return fmt.Errorf("apiclient: %s: %w", cl.op, err)
	}
	if cl.body != nil {
		if cl.payload, err = json.Marshal(cl.body); err != nil {
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
			err = c.attempt(ctx, cl, target, sent)
		}
		if err == nil {
			return nil
		}
		if IsUnauthorized(err) && !refreshed {
			// A 401 changed nothing upstream: when the keys rotated since sending, retry once, outside the budget.
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

func (c *Client) attempt(ctx context.Context, cl call, target string, cr *credentials) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()

	var body io.Reader
	if cl.payload != nil {
		body = bytes.NewReader(cl.payload)
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, target, body)
	if err != nil {
		return fmt.Errorf("apiclient: %s: building request: %w", cl.op, err)
	}
	if cl.payload == nil && cl.method == http.MethodGet {
		// Go's transport resends an idempotent request, unseen, on a failed reused connection, outside
		// the retry budget; a body that cannot rewind stops it.
		req.Body, req.GetBody = emptyBody{}, nil
	}
	// Values made once and shared (nothing writes into a request's values): Set made each anew.
	req.Header["Accept"] = jsonHeader
	req.Header["User-Agent"] = c.userAgentHeader
	if cl.payload != nil {
		req.Header["Content-Type"] = jsonHeader
	}
	if cl.op == OpGetAuthInfo && cr.bearer != "" {
		req.Header["Authorization"] = cr.bearerHeader
	} else {
		req.Header["Authorization"] = cr.basicHeader
	}

	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		c.observer.ObserveRequest(cl.op, CodeTransportError, time.Since(start))
		return &TransportError{Operation: cl.op, Err: err}
	}
	defer resp.Body.Close()
	c.noteDate(resp.Header, start, time.Now())

	if resp.StatusCode != cl.want {
		data, err := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody+1))
		c.observer.ObserveRequest(cl.op, strconv.Itoa(resp.StatusCode), time.Since(start))
		if err != nil && len(data) == 0 {
			return &TransportError{Operation: cl.op, Err: fmt.Errorf("reading response body: %w", err)}
		}
		return c.newAPIError(cl, target[len(c.base):], resp, data)
	}
	if _, relay := ctx.Value(answerKey{}).(*[]byte); cl.write || relay {
		return c.readWhole(ctx, cl, resp, start)
	}
	rb := &limitedBody{r: resp.Body, remaining: c.maxBodyBytes}
	defer rb.release()
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

const maxWholeBody = 32 << 20

var jsonHeader = []string{"application/json"}

func answerCode(resp *http.Response, err error) string {
	if _, ok := errors.AsType[*DecodeError](err); ok || errors.Is(err, ErrValueTooLarge) || errors.Is(err, ErrBodyTooLarge) || errors.Is(err, ErrTooManyResources) {
		return CodeDecodeError
	}
	return strconv.Itoa(resp.StatusCode)
}

// emptyBody is a GET's body that cannot rewind, and a pooled decoder's input between answers.
type emptyBody struct{}

func (emptyBody) Read([]byte) (int, error) { return 0, io.EOF }
func (emptyBody) Close() error             { return nil }

// An answer documented without a body succeeds whatever it carries: the API accepted the write.
func (c *Client) readWhole(ctx context.Context, cl call, resp *http.Response, start time.Time) error {
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
	derr := decodeStream(cl.op, bytes.NewReader(data), cl.out, drop, c.creds().redactor, func() ([]byte, bool) {
		return data[:min(len(data), snippetPrefix)], len(data) > snippetPrefix
	}, streamOptions{cut: func() { c.cutText(cl.op) }})
	c.observer.ObserveRequest(cl.op, answerCode(resp, derr), time.Since(start))
	return derr
}

func (c *Client) cutText(op string) {
	c.observer.ObserveTextTruncated(op)
	if atomic.CompareAndSwapInt32(&c.cutLogged, 0, 1) {
		c.logger.Warn("The API sent a text longer than the exporter keeps; it was cut, and later ones are only counted",
			"operation", op, "max_bytes", MaxTextBytes)
	}
}

type trackingKey struct{}

// Tracking marks ctx so that the Client's calls with it take a token of the tracking share first.
func Tracking(ctx context.Context) context.Context {
	return context.WithValue(ctx, trackingKey{}, true)
}

func (c *Client) wait(ctx context.Context, op string) error {
	if ctx.Value(trackingKey{}) != nil {
		if err := c.take(ctx, c.trackLimiter, op); err != nil {
			return err
		}
	}
	return c.take(ctx, c.limiter, op)
}

func (c *Client) take(ctx context.Context, l *rate.Limiter, op string) error {
	if l.Allow() { // a token at once, as Reserve would give, without allocating a Reservation
		return nil
	}
	r := l.Reserve()
	if d := r.Delay(); d > 0 {
		c.observer.ObserveRateLimitWait(op, d)
		if err := c.sleep(ctx, d); err != nil {
			r.Cancel() // give the token back: no request was sent
			return err
		}
	}
	return nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d): // collected once unreachable, fired or not (Go 1.23)
		return nil
	}
}

var secretResponses = map[string]bool{OpCreateService: true, OpForkService: true}

// Redactor returns the redaction of the Client's credentials, for other text the server sent.
func (c *Client) Redactor() *Redactor { return c.creds().redactor }

type nopObserver struct{}

func (nopObserver) ObserveRequest(string, string, time.Duration) {}
func (nopObserver) ObserveRetry(string)                          {}
func (nopObserver) ObserveRateLimitWait(string, time.Duration)   {}
func (nopObserver) ObserveDecodeError(string)                    {}
func (nopObserver) ObserveListTooLong(string)                    {}
func (nopObserver) ObserveTextTruncated(string)                  {}
