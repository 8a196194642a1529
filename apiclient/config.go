package apiclient

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"
)

// Defaults for Config fields left at their zero value.
const (
	DefaultTimeout        = 30 * time.Second
	DefaultRateLimit      = 5 // requests per second
	DefaultMaxRetries     = 3
	DefaultRetryBaseDelay = 500 * time.Millisecond
	DefaultRetryMaxDelay  = 30 * time.Second
	DefaultMaxRetryAfter  = 2 * time.Minute
	// DefaultTrackingShare is what the poll cycle's budget (90%) leaves.
	DefaultTrackingShare = 0.1
	// DefaultMaxBodyBytes fits 100,000 services of 5 KiB. It bounds time, not
	// memory: answers are decoded as they stream in.
	DefaultMaxBodyBytes = 512 << 20
	// DefaultMaxValueBytes bounds what the decoder holds at once; a service is
	// 1 to 5 KiB.
	DefaultMaxValueBytes = 1 << 20
	// DefaultMaxListLength is 1.5 times the largest supported fleet
	// (docs/performance.md); a list twice that took 410 MB.
	DefaultMaxListLength = 150_000
)

// Config configures a Client. Credentials are Secrets so that printing a
// Config never shows them.
type Config struct {
	// Ending in the version segment (https://api.example.net/v1).
	BaseURL string
	// Empty gives a Client that can only ListProjects and GetAuthInfo.
	ProjectID string
	// Basic authentication of the service API.
	AccessKey Secret
	SecretKey Secret
	// Bearer authentication of GET /auth/info.
	APIKey Secret

	// Bounds each HTTP attempt, not the retries together.
	Timeout time.Duration
	// Requests per second shared by all calls; 0 means DefaultRateLimit,
	// float64(rate.Inf) none.
	RateLimit float64
	Burst     int
	// Share of RateLimit that calls marked by Tracking may use.
	TrackingShare float64
	// 0 means DefaultMaxRetries, a negative value no retries.
	MaxRetries int
	// Exponential backoff with full jitter: attempt n sleeps in [0, min(max, base*2^n)).
	RetryBaseDelay time.Duration
	RetryMaxDelay  time.Duration
	MaxRetryAfter  time.Duration
	// Bodies stream, so this bounds time, not memory; error answers are read up
	// to 64 KiB.
	MaxBodyBytes int64
	// One value of a read's answer (a list element, a token, a run of white
	// space), which the decoder holds whole: this bounds a hostile answer's memory.
	MaxValueBytes int64
	// Every resource costs series on /metrics; 0 means DefaultMaxListLength.
	MaxListLength int

	// Requests in flight (--collect.concurrency): sizes the idle pool.
	Concurrency int
	// nil means sane transport defaults; its Timeout is not used.
	HTTPClient *http.Client
	// Replace the default transport's TLS settings and proxy; unused with HTTPClient.
	TLSConfig *tls.Config
	Proxy     func(*http.Request) (*url.URL, error)
	UserAgent string
	// OnUnauthorized is called on a 401 while the keys are still those sent: it
	// may install rotated ones with SetCredentials and reports whether it did.
	// Whenever the keys differ from those refused, the request is retried once.
	OnUnauthorized func() bool
	Observer       Observer
	// Receives the Client's few warnings; nil means none.
	Logger *slog.Logger
}

// Codes of ObserveRequest other than HTTP status codes.
const (
	// CodeTransportError: no complete answer.
	CodeTransportError = "error"
	// CodeDecodeError: a success status whose body was not decoded.
	CodeDecodeError = "decode_error"
)

// Observer receives a Client's instrumentation events. Implementations must
// be safe for concurrent use and fast: they run on the request path.
type Observer interface {
	// ObserveRequest is called once per HTTP request sent (the transport never
	// resends one on its own). code is the status, CodeTransportError without
	// a complete answer, or CodeDecodeError for a success whose body did not
	// decode: a failed request.
	ObserveRequest(operation, code string, duration time.Duration)
	// ObserveRetry is called each time an attempt is about to be retried.
	ObserveRetry(operation string)
	// ObserveRateLimitWait is called with a request's wait for the token bucket.
	ObserveRateLimitWait(operation string, wait time.Duration)
	// ObserveDecodeError is called for each field or list element left out of a
	// kept answer; an answer that does not decode at all is CodeDecodeError.
	ObserveDecodeError(operation string)
	// ObserveListTooLong is called for each list over MaxListLength.
	ObserveListTooLong(operation string)
	// ObserveTextTruncated is called for each text cut to MaxTextBytes.
	ObserveTextTruncated(operation string)
}

// String describes the Config, showing only whether credentials are set.
func (c Config) String() string {
	set := func(s Secret) string {
		if s == "" {
			return "unset"
		}
		return redacted
	}
	return fmt.Sprintf("apiclient.Config{BaseURL:%s ProjectID:%s AccessKey:%s SecretKey:%s APIKey:%s Timeout:%s RateLimit:%g Burst:%d MaxRetries:%d}",
		redactURL(c.BaseURL), c.ProjectID, set(c.AccessKey), set(c.SecretKey), set(c.APIKey), c.Timeout, c.RateLimit, c.Burst, c.MaxRetries)
}

// GoString shows no credentials for %#v.
func (c Config) GoString() string { return c.String() }

// Format prints String for every verb, so that none walks the struct.
func (c Config) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(c.String())) }

// An unparsable URL is hidden entirely: it cannot be redacted reliably.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return redacted
	}
	if u.RawQuery != "" {
		u.RawQuery = redacted
	}
	return u.Redacted()
}
