package pricing

import (
	"bytes"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/clouddb/clouddb_exporter/internal/fleettest"
)

// TestEstimatorWarnsOncePerMissingPrice: each price the file lacks is named
// in one WARN, whatever the number of services and polls that need it;
// what the API does not send (the first revision's storage) is not the
// file's to fix and is only counted.
func TestEstimatorWarnsOncePerMissingPrice(t *testing.T) {
	for _, c := range []struct {
		name, table string
		want        []string
	}{
		{"a region the file lacks", testTable, []string{`key="compute.eu-west-1.\"1000/4\"" region=eu-west-1 size=1000/4`}},
		{"no ha_replica nor pooler", `currency: EUR
effective_date: 2026-11-01
compute:
  us-east-1: {"500/2": 0.045, "1000/4": 0.09, "2000/8": 0.18}
  eu-west-1: {"1000/4": 0.1}
`, []string{"key=ha_replica", "key=pooler", "key=storage_gb_month.us-east-1 region=us-east-1"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			}}))
			e := NewEstimator(&fleettest.Recorder{}, nil, logger)
			e.SetTable(mustParse(t, c.table))
			for range 3 {
				e.SetSnapshot(estimateSnapshot())
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
				if !strings.Contains(line, "level=WARN") {
					t.Errorf("not a WARN: %s", line)
				}
				_, kv, _ := strings.Cut(line, "key=")
				kv, _, _ = strings.Cut(kv, " fix=")
				got = append(got, "key="+kv)
			}
			slices.Sort(got)
			if !slices.Equal(got, c.want) {
				t.Errorf("warned\n%s\nwant once each\n%s\nlog:\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"), buf.String())
			}
		})
	}
}
