package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// TestCostReloadUnderSimulate: under --simulate, whose project never
// changes, SIGHUP still re-reads --pricing.file; a price the file lacks is
// named in one WARN, not one per poll.
func TestCostReloadUnderSimulate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the exporter")
	}
	t.Parallel()
	prices := filepath.Join(t.TempDir(), "prices.yml")
	write := func(currency string) {
		t.Helper()
		// us-west-2 is not listed: search-ai has no compute price.
		content := "currency: " + currency + `
effective_date: 2026-11-01
compute:
  us-east-1: {"500/2": 0.045, "1000/4": 0.09, "2000/8": 0.18, "4000/16": 0.36, "8000/32": 0.72}
  eu-west-1: {"500/2": 0.05, "1000/4": 0.1, "2000/8": 0.2, "4000/16": 0.4, "8000/32": 0.8}
storage_gb_month: {us-east-1: 0.15, eu-west-1: 0.165, us-west-2: 0.15}
ha_replica: 1.0
pooler: 0.01
`
		if err := os.WriteFile(prices, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("USD")
	p, url := testbin.StartExporter(t, nil, "--simulate", "--collect.interval=1s", "--pricing.file="+prices)
	info := func(currency string) func() bool {
		return func() bool {
			_, body := testbin.Get(url + "/metrics")
			return strings.Contains(body, `clouddb_pricing_info{currency="`+currency+`",effective_date="2026-11-01"} 1`)
		}
	}
	testbin.WaitFor(t, 30*time.Second, "the prices of the file", info("USD"))
	const warning = `msg="A resource has no price in the price file; its cost is left out of the estimate" key="compute.us-west-2.\"1000/4\""`
	testbin.WaitFor(t, 30*time.Second, "a WARN naming the missing price", func() bool { return strings.Contains(p.Output(), warning) })

	write("EUR")
	if err := p.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testbin.WaitFor(t, 30*time.Second, "SIGHUP to reload the price file", info("EUR"))
	if strings.Contains(p.Output(), "Ignoring SIGHUP") {
		t.Errorf("SIGHUP ignored:\n%s", p.Output())
	}
	// Polls after the reload price search-ai again, each without a WARN.
	lists := func() float64 {
		_, fams := testbin.Scrape(t, url)
		n := 0.0
		for _, m := range fams["clouddb_exporter_api_requests_total"].GetMetric() {
			if label(m, "operation") == "listServices" {
				n += m.GetCounter().GetValue()
			}
		}
		return n
	}
	after := lists()
	testbin.WaitFor(t, 30*time.Second, "three more polls", func() bool { return lists() >= after+3 })
	if n := strings.Count(p.Output(), warning); n != 1 {
		t.Errorf("the missing price was warned about %d times; want once:\n%s", n, p.Output())
	}
}
