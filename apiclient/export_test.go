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

// CallForTest calls an operation's Client method with the ids idOf gives
// and, when it takes one more, a read's catalog example or an empty write
// request, for the external tests of every operation against the simulator.
func CallForTest(t *testing.T, c *Client, o Operation, idOf func(name string) string) (any, error) {
	t.Helper()
	m, args, _ := opMethod(t, c, o, idOf)
	return callOp(m, args)
}

// CheckServicesDecodeForTest compares the decoding of services lists with
// encoding/json's on each answer and n mutations of them.
func CheckServicesDecodeForTest(t *testing.T, answers [][]byte, n int) {
	t.Helper()
	checkMutations(t, answers, n, 9, checkListDecode[Service])
}

// SeriesBodyForTest and LogPageBodyForTest are the decoding benchmarks'
// answers, for BenchmarkCall in package apiclient_test.
var SeriesBodyForTest, LogPageBodyForTest = seriesBody, logPageBody
