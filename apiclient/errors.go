package apiclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
)

const maxErrorSnippet = 256

// APIError is an answer other than the documented success status; its text holds no credentials.
type APIError struct {
	Operation  string
	Method     string
	Path       string // request path below the base URL, ids escaped
	StatusCode int
	Code       string
	Message    string
	Details    string
	Body       string
	RetryAfter time.Duration
}

// Error implements error.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiclient: %s %s %s: ", e.Operation, e.Method, e.Path)
	if e.StatusCode >= 200 && e.StatusCode < 300 {
		b.WriteString("unexpected status ")
	}
	fmt.Fprintf(&b, "%d", e.StatusCode)
	if t := http.StatusText(e.StatusCode); t != "" {
		b.WriteString(" " + t)
	}
	switch {
	case e.Code != "" || e.Message != "":
		fmt.Fprintf(&b, ": %s: %s", e.Code, e.Message)
	case e.Body != "":
		fmt.Fprintf(&b, ": body %q", e.Body)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	return b.String()
}

// The server's text is redacted, in case it echoes the credentials, before it is cut.
func (c *Client) newAPIError(cl call, path string, resp *http.Response, data []byte) *APIError {
	e := errorFromBody(c.creds().redactor, data)
	e.Operation, e.Method, e.Path, e.StatusCode = cl.op, cl.method, path, resp.StatusCode
	e.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), c.now())
	return e
}

func errorFromBody(red *Redactor, data []byte) *APIError {
	truncated := len(data) > maxErrorBody
	var body ErrorBody
	if !truncated {
		if err := json.Unmarshal(data, &body, decodeOptions); err == nil && (body.Code != "" || body.Message != "") {
			return &APIError{Code: red.Snippet([]byte(body.Code), maxErrorSnippet, false), Message: red.Snippet([]byte(body.Message), maxErrorSnippet, false),
				Details: red.Snippet(body.Details, maxErrorSnippet, false)}
		}
	}
	return &APIError{Body: red.Snippet(data, maxErrorSnippet, truncated)}
}

// TransportError is a failure to get an answer: connection refused or dropped, a timeout, ctx ending.
type TransportError struct {
	Operation string
	Err       error
}

// Error implements error.
func (e *TransportError) Error() string {
	return fmt.Sprintf("apiclient: %s: transport: %v", e.Operation, e.Err)
}

// Unwrap returns the underlying error.
func (e *TransportError) Unwrap() error { return e.Err }

// Timeout reports whether the failure was a timeout.
func (e *TransportError) Timeout() bool {
	if errors.Is(e.Err, context.DeadlineExceeded) {
		return true
	}
	var t interface{ Timeout() bool }
	return errors.As(e.Err, &t) && t.Timeout()
}

// DecodeError is a success answer whose body could not be decoded.
type DecodeError struct {
	Operation string
	// The start of the body; omitted for operations whose body carries a secret.
	Snippet string
	Err     error
}

// Error implements error.
func (e *DecodeError) Error() string {
	return fmt.Sprintf("apiclient: %s: decoding response: %v (body starts %q)", e.Operation, e.Err, e.Snippet)
}

// Unwrap returns the underlying JSON error.
func (e *DecodeError) Unwrap() error { return e.Err }

// StatusCode returns the HTTP status of the APIError in err's chain, or 0.
func StatusCode(err error) int {
	if e, ok := errors.AsType[*APIError](err); ok {
		return e.StatusCode
	}
	return 0
}

// IsUnauthorized reports whether err is a 401 answer (missing or wrong credentials).
func IsUnauthorized(err error) bool { return StatusCode(err) == http.StatusUnauthorized }

// IsForbidden reports whether err is a 403 answer (insufficient permissions).
func IsForbidden(err error) bool { return StatusCode(err) == http.StatusForbidden }

// IsNotFound reports whether err is a 404 answer.
func IsNotFound(err error) bool { return StatusCode(err) == http.StatusNotFound }

// IsTimeout reports whether err is a per-attempt timeout or the caller's deadline.
func IsTimeout(err error) bool {
	if t, ok := errors.AsType[*TransportError](err); ok && t.Timeout() {
		return true
	}
	return errors.Is(err, context.DeadlineExceeded)
}
