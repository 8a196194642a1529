package apiclient

import (
	"cmp"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"
)

type credentials struct {
	bearer string // full Authorization header value for /auth/info, "" if none
	// Authorization header values: Basic for the service API, bearer as a header.
	basicHeader, bearerHeader []string
	keys                      []string
	redactor                  *Redactor
}

// New validates cfg, applies defaults and returns a Client.
func New(cfg Config) (*Client, error) {
	switch err := CheckBaseURL(cfg.BaseURL); {
	case err != nil:
		return nil, fmt.Errorf("apiclient: BaseURL %w", err)
	case cfg.ProjectID != "" && strings.TrimSpace(cfg.ProjectID) == "":
		// Empty is allowed: a Client of no project lists projects and reads the auth info.
		return nil, errors.New("apiclient: ProjectID must not be blank")
	case cfg.AccessKey == "":
		return nil, errors.New("apiclient: AccessKey must not be empty")
	case cfg.SecretKey == "":
		return nil, errors.New("apiclient: SecretKey must not be empty")
	case cfg.Timeout < 0, cfg.RetryBaseDelay < 0, cfg.RetryMaxDelay < 0, cfg.MaxRetryAfter < 0, cfg.MaxBodyBytes < 0, cfg.MaxValueBytes < 0, cfg.MaxListLength < 0:
		return nil, errors.New("apiclient: durations, MaxBodyBytes, MaxValueBytes and MaxListLength must not be negative")
	case cfg.RateLimit < 0 || math.IsNaN(cfg.RateLimit):
		return nil, errors.New("apiclient: RateLimit must not be negative")
	case cfg.TrackingShare < 0 || cfg.TrackingShare > 1 || math.IsNaN(cfg.TrackingShare):
		return nil, errors.New("apiclient: TrackingShare must be between 0 and 1")
	case cfg.Burst < 0:
		return nil, errors.New("apiclient: Burst must not be negative")
	}

	u, _ := url.Parse(cfg.BaseURL)
	c := &Client{
		base:            strings.TrimRight(u.String(), "/"),
		projectID:       cfg.ProjectID,
		userAgentHeader: []string{cmp.Or(cfg.UserAgent, DefaultUserAgent)},
		http:            cfg.HTTPClient,
		observer:        cmp.Or[Observer](cfg.Observer, nopObserver{}),
		timeout:         cmp.Or(cfg.Timeout, DefaultTimeout),
		maxRetries:      max(cmp.Or(cfg.MaxRetries, DefaultMaxRetries), 0), // negative: none
		retryBaseDelay:  cmp.Or(cfg.RetryBaseDelay, DefaultRetryBaseDelay),
		retryMaxDelay:   cmp.Or(cfg.RetryMaxDelay, DefaultRetryMaxDelay),
		maxRetryAfter:   cmp.Or(cfg.MaxRetryAfter, DefaultMaxRetryAfter),
		maxBodyBytes:    cmp.Or(cfg.MaxBodyBytes, DefaultMaxBodyBytes),
		maxValueBytes:   cmp.Or(cfg.MaxValueBytes, DefaultMaxValueBytes),
		maxListLength:   cmp.Or(cfg.MaxListLength, DefaultMaxListLength),
		logger:          cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)),
		jitter:          rand.Int64N,
		sleep:           sleepCtx,
		now:             time.Now,
		skew:            &clockSkew{},
	}
	c.limiter = rate.NewLimiter(rate.Limit(cmp.Or(cfg.RateLimit, DefaultRateLimit)), max(cfg.Burst, 1))
	c.trackLimiter = rate.NewLimiter(c.limiter.Limit()*rate.Limit(cmp.Or(cfg.TrackingShare, DefaultTrackingShare)), 1)
	if c.http == nil {
		c.http = newHTTPClient(cmp.Or(cfg.Concurrency, DefaultConcurrency))
		t := c.http.Transport.(*http.Transport)
		if cfg.TLSConfig != nil {
			t.TLSClientConfig = cfg.TLSConfig
		}
		if cfg.Proxy != nil {
			t.Proxy = cfg.Proxy
		}
	} else if cfg.TLSConfig != nil || cfg.Proxy != nil {
		return nil, errors.New("apiclient: TLSConfig and Proxy apply to the default client only: configure HTTPClient's transport instead")
	}

	var cur atomic.Pointer[credentials]
	cur.Store(newCredentials(cfg.AccessKey, cfg.SecretKey, cfg.APIKey, nil))
	c.creds = cur.Load
	c.setCreds = cur.Store
	c.onUnauthorized = cfg.OnUnauthorized
	return c, nil
}

// The redaction also removes prev's keys: an answer to a request sent before a rotation may echo them.
func newCredentials(access, secret, apiKey Secret, prev []string) *credentials {
	encoded := base64.StdEncoding.EncodeToString([]byte(access.Reveal() + ":" + secret.Reveal()))
	keys := []string{access.Reveal(), secret.Reveal(), apiKey.Reveal()}
	cr := &credentials{
		basicHeader: []string{"Basic " + encoded},
		keys:        keys,
		redactor:    newRedactor(append(keys, prev...)...),
	}
	if apiKey != "" {
		cr.bearer = "Bearer " + apiKey.Reveal()
	}
	cr.bearerHeader = []string{cr.bearer}
	return cr
}

// SetCredentials replaces the keys for the next requests; requests under way keep theirs. It reports
// whether anything changed; empty access or secret keys are refused, as by New.
func (c *Client) SetCredentials(access, secret, apiKey Secret) (bool, error) {
	if access == "" || secret == "" {
		return false, errors.New("apiclient: AccessKey and SecretKey must not be empty")
	}
	old := c.creds()
	if slices.Equal(old.keys, []string{access.Reveal(), secret.Reveal(), apiKey.Reveal()}) {
		return false, nil
	}
	c.setCreds(newCredentials(access, secret, apiKey, old.keys[:3]))
	return true, nil
}

// CheckBaseURL checks raw as New does (absolute http(s), no user info, query or fragment), for the
// configuration checks. Errors never quote raw: it may hold a password, or a token in its query.
func CheckBaseURL(raw string) error {
	if raw == "" {
		return errors.New("must not be empty")
	}
	u, err := url.Parse(raw)
	if err != nil {
		// url.Parse errors quote the input, even inner ones (a misparsed password can become a "port").
		return errors.New("is not a valid URL")
	}
	shown := *u
	shown.RawQuery, shown.ForceQuery, shown.Fragment, shown.RawFragment = "", false, "", ""
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%s: must be an absolute http or https URL", shown.Redacted())
	case u.Host == "":
		return fmt.Errorf("%s: host must not be empty", shown.Redacted())
	case u.User != nil:
		return fmt.Errorf("%s: must not carry credentials (user info): use the access and secret keys", shown.Redacted())
	case u.RawQuery != "" || u.ForceQuery:
		return fmt.Errorf("%s: must not carry a query", shown.Redacted())
	case u.Fragment != "":
		return fmt.Errorf("%s: must not carry a fragment", shown.Redacted())
	}
	return nil
}

// DefaultConcurrency is the Concurrency assumed when none is given, the poller's default.
const DefaultConcurrency = 4

// Idle connections for every request that can be in flight (a poll cycle, a follow-up, admin writes), lest
// each cycle reopen some. A redirect would resend the credentials or, for a 307/308, repeat a write.
func newHTTPClient(concurrency int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 2*concurrency + 4
	t.MaxIdleConns = t.MaxIdleConnsPerHost
	t.IdleConnTimeout = 90 * time.Second
	return &http.Client{
		Transport: t,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
