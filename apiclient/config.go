package apiclient

import (
	"net/http"
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
	DefaultMaxBodyBytes   = 64 << 20
)

// Config configures a Client. Credentials are Secrets so that printing a
// Config never shows them.
type Config struct {
	// BaseURL is the API base address, ending in the version segment
	// (for example https://api.example.net/v1). Operation paths are
	// appended to it.
	BaseURL string
	// ProjectID is the project every call of the Client addresses.
	ProjectID string
	// AccessKey and SecretKey authenticate the service API (HTTP Basic).
	AccessKey Secret
	SecretKey Secret
	// APIKey authenticates GET /auth/info (Bearer). Empty disables getAuthInfo.
	APIKey Secret

	// Timeout bounds each HTTP attempt (not the retries together).
	Timeout time.Duration
	// RateLimit is the token bucket rate in requests per second shared by all
	// calls of the Client; Burst is its size (at least 1).
	RateLimit float64
	Burst     int
	// MaxRetries is how many times a retryable request is tried again;
	// 0 means DefaultMaxRetries, a negative value disables retries.
	MaxRetries int
	// RetryBaseDelay and RetryMaxDelay shape the exponential backoff with
	// full jitter: attempt n sleeps a random time in [0, min(max, base*2^n)).
	RetryBaseDelay time.Duration
	RetryMaxDelay  time.Duration
	// MaxRetryAfter caps how long a Retry-After header may make us wait.
	MaxRetryAfter time.Duration
	// MaxBodyBytes limits how much of a response body is read.
	MaxBodyBytes int64

	// HTTPClient is used for requests; nil means a client with sane
	// transport defaults. Its Timeout is not used: Timeout above is.
	HTTPClient *http.Client
	// UserAgent is sent with every request.
	UserAgent string
	// Observer receives instrumentation events; nil means none.
	Observer Observer
}

// Observer receives instrumentation events from a Client. Implementations
// must be safe for concurrent use and fast: they run on the request path.
type Observer interface {
	// ObserveRequest is called once per HTTP attempt. code is the HTTP
	// status code as a string, or "error" for a transport error or timeout.
	ObserveRequest(operation, code string, duration time.Duration)
	// ObserveRetry is called each time an attempt is about to be retried.
	ObserveRetry(operation string)
	// ObserveRateLimitWait is called with the time a request waited for the
	// token bucket, when it waited at all.
	ObserveRateLimitWait(operation string, wait time.Duration)
}
