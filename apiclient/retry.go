package apiclient

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// retryable retries a read (by the catalog) on transport errors and 429/5xx, a write only on 429:
// after a 5xx or a lost connection a write may have taken effect, and a repeat could do it twice.
func (c *Client) retryable(ctx context.Context, read bool, err error, attempt int) (time.Duration, bool) {
	if ctx.Err() != nil {
		// The caller gave up; per-attempt timeouts leave ctx alive.
		return 0, false
	}
	switch apiErr, isAPI := errors.AsType[*APIError](err); {
	case isAPI:
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
			// Not slept on: the caller sees RetryAfter; sleeping would stall a cycle as long as a server says.
			if deadline, ok := ctx.Deadline(); apiErr.RetryAfter > c.maxRetryAfter || ok && c.now().Add(apiErr.RetryAfter).After(deadline) {
				return 0, false
			}
			return apiErr.RetryAfter, true
		}
	case !read || !errors.As(err, new(*TransportError)):
		return 0, false
	}
	return c.backoff(attempt), true
}

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

const maxRetryAfter = 365 * 24 * time.Hour

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
