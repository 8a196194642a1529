package e2e

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
)

// costPrices prices the demo fleet in sums a float holds exactly. eu-west-1
// lacks 8000/32 and us-west-2 is not listed: events-migration's compute and
// search-ai's compute and storage have no price. Storage is 0.1 a GB-hour in
// us-east-1 and 0.2 in eu-west-1.
const costPrices = `currency: EUR
effective_date: 2026-11-01
compute:
  us-east-1: {"500/2": 0.25, "1000/4": 0.5, "2000/8": 1, "4000/16": 2, "8000/32": 4}
  eu-west-1: {"500/2": 0.375, "2000/8": 1.5}
storage_gb_month: {us-east-1: 73, eu-west-1: 146}
ha_replica: 0.5
pooler: 0.125
`

// demoCosts is the demo fleet's cost per hour but storage, by service name:
// compute, ha, read_replicas, pooler; -1 where there is no price.
var demoCosts = map[string][4]float64{
	// 4000/16 with one HA replica, a pooler, replica sets of 2 x 2000/8
	// (with a pooler) and 1 x 1000/4.
	"metrics-prod": {2, 1, 2*1 + 0.5, 2 * 0.125},
	// 2000/8 with one replica set of 1 x 2000/8.
	"orders-db":   {1, 0, 1, 0},
	"embeddings":  {1.5, 0, 0, 0},
	"dev-sandbox": {0.375, 0, 0, 0},
	// PAUSED: storage only.
	"legacy-reports":   {0, 0, 0, 0},
	"events-migration": {-1, 0, 0, 0},
	"search-ai":        {-1, 0, 0, 0},
	// Revision 2026 only: a fork without HA, a shared-resource service.
	"metrics-prod-fork": {2, 0, 0, 0},
	"free-tier":         {0, 0, 0, 0},
}

var storageGBMonth = map[string]float64{"us-east-1": 73, "eu-west-1": 146}

// TestCostEstimate: with a price file, the exact cost of every component of
// the demo fleet (every size, HA replicas, replica sets, poolers, a paused
// and a shared-resource service) in both API revisions, and what has no
// price counted, not read as 0.
func TestCostEstimate(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator and the exporter")
	}
	t.Parallel()
	prices := filepath.Join(t.TempDir(), "prices.yml")
	if err := os.WriteFile(prices, []byte(costPrices), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, revision := range []string{"2026", "2024"} {
		t.Run("revision "+revision, func(t *testing.T) {
			t.Parallel()
			sim := testbin.StartSim(t, "--api.revision="+revision)
			_, addr := testbin.StartExporter(t, testbin.ExporterEnv(sim), "--collect.interval=1s",
				"--api.rate-limit=100", "--api.rate-burst=100", "--pricing.file="+prices)
			var problems []string
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("the last scrape's differences:\n%s", strings.Join(problems, "\n"))
				}
			})
			testbin.WaitFor(t, 60*time.Second, "the estimate of every service", func() bool {
				_, fams := testbin.Scrape(t, addr)
				problems = costProblems(fams, revision == "2026")
				return len(problems) == 0
			})
			code, body := testbin.Get(addr + "/metrics")
			if code != 200 || !strings.Contains(body, `clouddb_pricing_info{currency="EUR",effective_date="2026-11-01"} 1`) {
				t.Errorf("no clouddb_pricing_info for the file (%d)", code)
			}
		})
	}
}

// costProblems compares the exported estimate with demoCosts and the
// storage the same scrape shows; nil when all is as expected.
func costProblems(fams map[string]*dto.MetricFamily, revision2026 bool) []string {
	var problems []string
	unpriced := 0
	seen := 0
	for _, info := range fams["clouddb_service_info"].GetMetric() {
		name, id, region := label(info, "name"), label(info, "service_id"), label(info, "region_code")
		want, ok := demoCosts[name]
		if !ok {
			problems = append(problems, "a service the test does not know: "+name)
			continue
		}
		seen++
		for i, component := range []string{"compute", "ha", "read_replicas", "pooler"} {
			got, has := sampleOf(fams, "clouddb_service_estimated_cost_per_hour", "service_id", id, "component", component)
			if want[i] < 0 {
				unpriced++
				if has {
					problems = append(problems, fmt.Sprintf("%s %s = %v; want no price", name, component, got))
				}
			} else if !has || got != want[i] {
				problems = append(problems, fmt.Sprintf("%s %s = %v (%v); want %v", name, component, got, has, want[i]))
			}
		}
		bytes, hasBytes := sampleOf(fams, "clouddb_service_storage_usage_bytes", "service_id", id)
		price, hasPrice := storageGBMonth[region]
		got, has := sampleOf(fams, "clouddb_service_estimated_cost_per_hour", "service_id", id, "component", "storage")
		switch {
		case !hasBytes || !hasPrice:
			unpriced++
			if has {
				problems = append(problems, fmt.Sprintf("%s storage = %v; want no price", name, got))
			}
		// storage_mb / 1024 GB at the monthly price over 730 hours, to a billionth.
		case !has || got != math.Round(bytes/(1<<20)/1024*price/730*1e9)/1e9:
			problems = append(problems, fmt.Sprintf("%s storage = %v (%v); want %v GB at %v a month", name, got, has, bytes/(1<<30), price))
		}
	}
	if want := 7 + map[bool]int{true: 2}[revision2026]; seen != want {
		problems = append(problems, fmt.Sprintf("%d services, want %d", seen, want))
	}
	if got, _ := sampleOf(fams, "clouddb_pricing_unpriced_resources"); got != float64(unpriced) {
		problems = append(problems, fmt.Sprintf("clouddb_pricing_unpriced_resources %v; want %d", got, unpriced))
	}
	return problems
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// sampleOf returns the value of name's series with the given labels.
func sampleOf(fams map[string]*dto.MetricFamily, name string, match ...string) (float64, bool) {
	for _, m := range fams[name].GetMetric() {
		ok := true
		for i := 0; i+1 < len(match); i += 2 {
			ok = ok && label(m, match[i]) == match[i+1]
		}
		if ok {
			return m.GetGauge().GetValue(), true
		}
	}
	return 0, false
}
