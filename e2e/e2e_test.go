// Package e2e holds the whole-binary tests: they build the exporter and the
// standalone simulator (cmd/cloudsim), run them as processes on loopback,
// and check what a user sees: startup errors, /metrics, the admin surface
// (over TLS too), config reloads, and a real Prometheus loading the shipped
// rules and dashboards' queries. The helpers live in internal/testbin. The
// whole package is skipped under -short.
package e2e

import (
	"flag"
	"fmt"
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		fmt.Println("e2e: whole-binary tests skipped under -short")
		os.Exit(0)
	}
	os.Exit(m.Run())
}
