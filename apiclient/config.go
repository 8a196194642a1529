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
	// DefaultTrackingShare is the share of the rate limit that calls
	// marked by Tracking may use: what the poll cycle's budget (90%)
	// leaves.
	DefaultTrackingShare = 0.1
	// DefaultMaxBodyBytes fits a list of 100,000 services at about 5 KiB
	// each (the simulator's are 0.85 KiB). It bounds time, not memory:
	// answers are decoded as they stream in.
	DefaultMaxBodyBytes = 512 << 20
	// DefaultMaxValueBytes bounds one value of an answer, what the decoder
	// holds at once: a service is 1 to 5 KiB.
	DefaultMaxValueBytes = 1 << 20
	// DefaultMaxListLength is 1.5 times the largest fleet measured and
	// supported (100,000 services, docs/performance.md): room to grow,
	// while a list twice that size, which took 410 MB, fails instead.
	DefaultMaxListLength = 150_000
)

// Config configures a Client. Credentials are Secrets so that printing a
// Config never shows them.
type Config struct {
	// BaseURL is the API base address, ending in the version segment
	// (for example https://api.example.net/v1). Operation paths are
	// appended to it.
	BaseURL string
	// ProjectID is the project every call of the Client addresses. Empty
	// gives a Client that can only ListProjects and GetAuthInfo (project
	// discovery): the other calls fail with ErrInvalidID, sending nothing.
	ProjectID string
	// AccessKey and SecretKey authenticate the service API (HTTP Basic).
	AccessKey Secret
	SecretKey Secret
	// APIKey authenticates GET /auth/info (Bearer). Empty disables getAuthInfo.
	APIKey Secret

	// Timeout bounds each HTTP attempt (not the retries together).
	Timeout time.Duration
	// RateLimit is the token bucket rate in requests per second shared by all
	// calls of the Client; Burst is its size (at least 1). 0 means
	// DefaultRateLimit; float64(rate.Inf) disables limiting.
	RateLimit float64
	Burst     int
	// TrackingShare is the share of RateLimit that calls marked by
	// Tracking may use (0 means DefaultTrackingShare).
	TrackingShare float64
	// MaxRetries is how many times a retryable request is tried again;
	// 0 means DefaultMaxRetries, a negative value disables retries.
	MaxRetries int
	// RetryBaseDelay and RetryMaxDelay shape the exponential backoff with
	// full jitter: attempt n sleeps a random time in [0, min(max, base*2^n)).
	RetryBaseDelay time.Duration
	RetryMaxDelay  time.Duration
	// MaxRetryAfter caps how long a Retry-After header may make us wait.
	MaxRetryAfter time.Duration
	// MaxBodyBytes limits how much of a success answer's body is read; a
	// larger one fails the call with ErrBodyTooLarge. Bodies are decoded as
	// a stream, so memory follows what is kept, not this limit. Error
	// answers are read up to 64 KiB, whatever this limit.
	MaxBodyBytes int64
	// MaxValueBytes limits one value of a read's success answer as it is
	// decoded: a list element, a lone token, or a run of white space,
	// which the decoder holds whole; a larger one fails the call with
	// ErrValueTooLarge. This, not MaxBodyBytes, bounds the memory a
	// hostile answer costs.
	MaxValueBytes int64
	// MaxListLength bounds the resources one list answer may hold
	// (services, VPCs, a service's replica sets, a VPC's peerings): a
	// longer one fails the call with ErrTooManyResources once that many
	// were read. Every resource costs series on /metrics; 0 means
	// DefaultMaxListLength.
	MaxListLength int

	// Concurrency is how many requests the caller keeps in flight at
	// once (--collect.concurrency); it sizes the idle connection pool of
	// the default HTTP client, so that a cycle reuses its connections
	// instead of closing and opening them. 0 means DefaultConcurrency.
	Concurrency int
	// HTTPClient is used for requests; nil means a client with sane
	// transport defaults. Its Timeout is not used: Timeout above is.
	HTTPClient *http.Client
	// TLSConfig and Proxy, when set, replace the TLS settings and the proxy
	// (by default from the environment) of the default client's transport;
	// they are not used with HTTPClient.
	TLSConfig *tls.Config
	Proxy     func(*http.Request) (*url.URL, error)
	// UserAgent is sent with every request.
	UserAgent string
	// OnUnauthorized, when set, is called when an answer is a 401 and the
	// Client's keys are still those the request was sent with: it may
	// re-read rotated credentials and install them with SetCredentials,
	// and reports whether it did. Whenever the keys differ from those the
	// refused request carried (installed by this hook or by anyone else
	// meanwhile), the request is tried once more at once with them.
	OnUnauthorized func() bool
	// Observer receives instrumentation events; nil means none.
	Observer Observer
	// Logger receives the Client's few warnings (a text cut to
	// MaxTextBytes); nil means none.
	Logger *slog.Logger
}

// Codes of ObserveRequest other than HTTP status codes.
const (
	// CodeTransportError: no complete answer (see Observer).
	CodeTransportError = "error"
	// CodeDecodeError: a success status whose body was not decoded.
	CodeDecodeError = "decode_error"
)

// Observer receives instrumentation events from a Client. Implementations
// must be safe for concurrent use and fast: they run on the request path.
type Observer interface {
	// ObserveRequest is called once per HTTP request sent, so once per
	// request the API sees (the transport never sends one again on its
	// own: see Client). code is the HTTP status code as a string;
	// CodeTransportError when no complete answer came (no connection, a
	// dropped connection, a body that broke off, a timeout);
	// CodeDecodeError when the answer has the success status but its body
	// was not decoded (malformed, cut short, or beyond MaxBodyBytes or
	// MaxValueBytes): a failed request, not a success.
	ObserveRequest(operation, code string, duration time.Duration)
	// ObserveRetry is called each time an attempt is about to be retried.
	ObserveRetry(operation string)
	// ObserveRateLimitWait is called with the time a request waited for the
	// token bucket, when it waited at all.
	ObserveRateLimitWait(operation string, wait time.Duration)
	// ObserveDecodeError is called for each field (or list element) of a
	// successful answer that did not decode and was left out while the
	// rest of the answer was kept. An answer that does not decode at all
	// is not reported here but as a request with CodeDecodeError.
	ObserveDecodeError(operation string)
	// ObserveListTooLong is called for each list answer that held more
	// than MaxListLength resources (the call fails).
	ObserveListTooLong(operation string)
	// ObserveTextTruncated is called for each text of an answer cut to
	// MaxTextBytes.
	ObserveTextTruncated(operation string)
}

// String describes the Config without its credentials, which only show
// whether they are set.
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

// GoString implements fmt.GoStringer so that %#v shows no credentials.
func (c Config) GoString() string { return c.String() }

// Format implements fmt.Formatter: every verb prints String, so that no
// verb walks the struct.
func (c Config) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(c.String())) }

// redactURL hides a password or query (which may hold a token) that a
// BaseURL may wrongly carry; an unparsable one is hidden entirely, since it
// cannot be redacted reliably.
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
