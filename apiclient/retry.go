package apiclient

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// retryable decides whether a failed attempt is tried again and after how
// long. attempt counts from 0 for the first try.
//
// Reads are retried on transport errors and on 429/500/502/503/504, after
// the server's Retry-After when it sends one within MaxRetryAfter. Writes
// are retried only on 429: the server refused them before doing anything,
// while after a 5xx or a lost connection a write may have taken effect and
// repeating it could, say, create a second service.
// A read is what the catalog says is one, whatever its method: the usage
// series operation is a POST that reads.
func (c *Client) retryable(ctx context.Context, read bool, err error, attempt int) (time.Duration, bool) {
	if ctx.Err() != nil {
		// The caller gave up; per-attempt timeouts leave ctx alive.
		return 0, false
	}
	var apiErr *APIError
	var tErr *TransportError
	switch {
	case errors.As(err, &apiErr):
		switch apiErr.StatusCode {
		case http.StatusTooManyRequests:
		case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			if !read {
				return 0, false
			}
		default:
			return 0, false
		}
		if apiErr.RetryAfter > 0 && (apiErr.StatusCode == http.StatusTooManyRequests || apiErr.StatusCode == http.StatusServiceUnavailable) {
			// A wait longer than the cap, or than the caller's deadline
			// allows, is not slept on: the call fails at once and the
			// caller, who sees RetryAfter in the error, tries again no
			// earlier than the server asked. Sleeping would stall a poll
			// cycle for as long as a server cares to say.
			if apiErr.RetryAfter > c.maxRetryAfter {
				return 0, false
			}
			if deadline, ok := ctx.Deadline(); ok && c.now().Add(apiErr.RetryAfter).After(deadline) {
				return 0, false
			}
			return apiErr.RetryAfter, true
		}
	case errors.As(err, &tErr):
		if !read {
			return 0, false
		}
	default:
		// Decode errors, oversized bodies, bad requests: trying again
		// would get the same answer.
		return 0, false
	}
	return c.backoff(attempt), true
}

// backoff is exponential backoff with full jitter: a random time in
// [0, min(RetryMaxDelay, RetryBaseDelay*2^attempt)). Full jitter spreads
// retries of many clients that failed together.
func (c *Client) backoff(attempt int) time.Duration {
	ceiling := c.retryMaxDelay
	if attempt < 62 {
		if d := c.retryBaseDelay << attempt; d > 0 && d>>attempt == c.retryBaseDelay && d < ceiling {
			ceiling = d
		}
	}
	if ceiling <= 0 {
		return 0
	}
	return time.Duration(c.jitter(int64(ceiling)))
}

// maxRetryAfter clamps absurd Retry-After values in either form instead of
// overflowing; callers cap them far lower anyway.
const maxRetryAfter = 365 * 24 * time.Hour

// parseRetryAfter reads a Retry-After header: delta-seconds or an HTTP-date.
// It returns 0 when the header is absent, malformed or in the past.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		return time.Duration(min(secs, int64(maxRetryAfter/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return min(d, maxRetryAfter)
		}
	}
	return 0
}
