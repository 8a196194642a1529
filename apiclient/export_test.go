package apiclient

import (
	"context"
	"testing"
	"time"
)

// SetSleepForTest replaces the Client's sleeps (backoff, Retry-After and the
// token bucket) for the external tests in package apiclient_test, which run
// against the simulator and must not wait.
func SetSleepForTest(c *Client, sleep func(ctx context.Context, d time.Duration) error) {
	c.sleep = sleep
}

// CallWriteForTest calls a write operation's Client method with the ids
// idOf gives and, when it takes one, an empty request, for the external
// tests of every write against the simulator.
func CallWriteForTest(t *testing.T, c *Client, o Operation, idOf func(name string) string) error {
	t.Helper()
	m, args, _ := writeMethod(t, c, o, idOf)
	_, err := callWrite(m, args)
	return err
}
