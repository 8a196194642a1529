// Package e2e holds the whole-binary tests: they build the exporter and the
// standalone simulator (cmd/cloudsim), run them as processes on loopback,
// and check what a user sees: startup errors, /metrics, the admin surface
// (over TLS too), config reloads, and a real Prometheus loading the shipped
// rules and dashboards' queries. The helpers live in internal/testbin. The
// whole package is skipped under -short.
//
// Every test runs in parallel (t.Parallel): each starts its own processes
// on free loopback ports, with its own simulator, files and environment,
// so none depends on another. Scenarios that happen over minutes in
// production run with short intervals and small call budgets that still
// force the same rounds; their logic is proved on the fake clock in the
// unit tests (poller/budget_test.go).
package e2e

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

// parallel is how many tests run at once unless -parallel says otherwise.
// The tests mostly wait for the processes they start (poll cycles, timeouts,
// Prometheus' evaluations), so more of them than CPUs (go test's default)
// can share this machine's cores.
const parallel = 8

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("e2e: whole-binary tests skipped under -short")
		os.Exit(0)
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", fmt.Sprint(parallel)); err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			os.Exit(2)
		}
	}
	os.Exit(m.Run())
}
