package apiclient

import (
	"cmp"
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
	DefaultTrackingShare  = 0.1
	DefaultMaxBodyBytes   = 512 << 20
	DefaultMaxValueBytes  = 1 << 20
	DefaultMaxListLength  = 150_000
)

// Config configures a Client; credentials are Secrets, so that a printed Config never shows them.
type Config struct {
	// Ending in the version segment (https://api.example.net/v1).
	BaseURL string
	// Empty gives a Client that can only ListProjects and GetAuthInfo.
	ProjectID string
	AccessKey Secret
	SecretKey Secret
	// Bearer authentication of GET /auth/info.
	APIKey Secret

	Timeout        time.Duration
	RateLimit      float64
	Burst          int
	TrackingShare  float64
	MaxRetries     int
	RetryBaseDelay time.Duration
	RetryMaxDelay  time.Duration
	MaxRetryAfter  time.Duration
	MaxBodyBytes   int64
	MaxValueBytes  int64
	MaxListLength  int

	Concurrency int
	// nil means sane transport defaults; its Timeout is not used.
	HTTPClient *http.Client
	TLSConfig  *tls.Config
	Proxy      func(*http.Request) (*url.URL, error)
	UserAgent  string
	// OnUnauthorized is called on a 401 while the keys are those sent; it may SetCredentials and reports whether it did.
	OnUnauthorized func() bool
	Observer       Observer
	Logger         *slog.Logger
}

// Codes of ObserveRequest other than HTTP status codes.
const (
	CodeTransportError = "error"
	CodeDecodeError    = "decode_error"
)

// Observer receives a Client's events; it must be safe for concurrent use and fast (the request path).
type Observer interface {
	ObserveRequest(operation, code string, duration time.Duration)
	ObserveRetry(operation string)
	ObserveRateLimitWait(operation string, wait time.Duration)
	ObserveDecodeError(operation string)
	ObserveListTooLong(operation string)
	ObserveTextTruncated(operation string)
}

// String describes the Config, showing only whether credentials are set.
func (c Config) String() string {
	set := func(s Secret) string { return cmp.Or(s.String(), "unset") }
	return fmt.Sprintf("apiclient.Config{BaseURL:%s ProjectID:%s AccessKey:%s SecretKey:%s APIKey:%s Timeout:%s RateLimit:%g Burst:%d MaxRetries:%d}",
		redactURL(c.BaseURL), c.ProjectID, set(c.AccessKey), set(c.SecretKey), set(c.APIKey), c.Timeout, c.RateLimit, c.Burst, c.MaxRetries)
}

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
