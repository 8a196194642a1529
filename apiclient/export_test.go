package apiclient

import (
	"context"
	"time"
)

// SetSleepForTest replaces the Client's sleeps (backoff, Retry-After and the
// token bucket) for the external tests in package apiclient_test, which run
// against the simulator and must not wait.
func SetSleepForTest(c *Client, sleep func(ctx context.Context, d time.Duration) error) {
	c.sleep = sleep
}
