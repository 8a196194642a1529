package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"github.com/clouddb/clouddb_exporter/internal/testbin"
	"github.com/clouddb/clouddb_exporter/shard"
)

// TestShardingSplitsTheFleet runs three shards and one unsharded process
// against one simulated project: the shards' resource series together are
// the single process's, none exported twice, and each shard makes about a
// third of the per-service calls.
func TestShardingSplitsTheFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts five processes")
	}
	t.Parallel()
	const services, vpcs, total = 300, 6, 3
	sim := startFleetSim(t, services, vpcs)
	// One cycle covers the fleet (rate limit), and nothing runs after it
	// (interval and transition follow-ups far beyond the test), so that the
	// request counts are those of exactly one cycle per process.
	args := []string{"--api.rate-limit=1000", "--collect.interval=30m", "--collect.transition-interval=30m"}
	env := sim.Env()
	_, single := testbin.StartExporter(t, env, args...)
	shards := make([]string, total)
	for i := range total {
		shardArgs := append(slices.Clone(args), fmt.Sprintf("--total-shards=%d", total))
		shardEnv := env
		if i == 0 {
			shardArgs = append(shardArgs, "--shard=0")
		} else {
			// The environment variable, as a Deployment per shard would set it.
			shardEnv = append(slices.Clone(env), fmt.Sprintf("CLOUDDB_SHARD=%d", i))
		}
		_, shards[i] = testbin.StartExporter(t, shardEnv, shardArgs...)
	}

	// Ready means the first cycle ended: every process has read all it owns.
	_, singleFams := testbin.Scrape(t, single)
	want := resourceSeries(singleFams)
	if n := len(testbin.LabelValues(singleFams, "clouddb_replica_set_info", "replica_set_id")); n != services {
		t.Fatalf("the single process exports %d replica sets, want %d", n, services)
	}
	owner := map[string]int{}
	calls := make([]float64, total)
	var sum float64
	for i, url := range shards {
		_, fams := testbin.Scrape(t, url)
		got := resourceSeries(fams)
		if len(got) == 0 || len(got) >= len(want) {
			t.Errorf("shard %d exports %d of %d resource series: not a split", i, len(got), len(want))
		}
		for _, s := range got {
			if prev, ok := owner[s]; ok {
				t.Errorf("%s is exported by shards %d and %d", s, prev, i)
			}
			owner[s] = i
		}
		calls[i] = value(t, fams, "clouddb_exporter_api_requests_total", "operation", "listReplicaSets", "code", "200")
		sum += calls[i]
		if lists := value(t, fams, "clouddb_exporter_api_requests_total", "operation", "listServices", "code", "200"); lists != 1 {
			t.Errorf("shard %d: %v listServices calls, want 1: every shard lists the services", i, lists)
		}
	}
	for _, s := range want {
		if _, ok := owner[s]; !ok {
			t.Errorf("%s is exported by the single process but by no shard", s)
		}
		delete(owner, s)
	}
	for s := range owner {
		t.Errorf("%s is exported by a shard but not by the single process", s)
	}
	for i, n := range calls {
		if n < services/total*0.7 || n > services/total*1.3 {
			t.Errorf("shard %d made %v of the %d listReplicaSets calls, want about a third (%v)", i, n, services, calls)
		}
	}
	if sum != services {
		t.Errorf("the shards made %v listReplicaSets calls in all, want one per service (%d)", sum, services)
	}
	// The simulator saw the same: the single process's calls and the shards'.
	if got := sim.Requests(t)["listReplicaSets"]; got != 2*services {
		t.Errorf("the simulator answered %d listReplicaSets calls, want %d: %d for the single process, %d for the shards together", got, 2*services, services, services)
	}

	// /sd serves each shard's own targets.
	for _, path := range []string{"/sd/services", "/sd/replica-sets"} {
		wantGroups := sdGroups(t, single+path)
		seen := map[string]int{}
		for i, url := range shards {
			for _, g := range sdGroups(t, url+path) {
				if prev, ok := seen[g]; ok {
					t.Errorf("%s: %s served by shards %d and %d", path, g, prev, i)
				}
				seen[g] = i
			}
		}
		if len(seen) != len(wantGroups) || len(wantGroups) == 0 {
			t.Errorf("%s: the shards serve %d target groups, the single process %d", path, len(seen), len(wantGroups))
		}
		for _, g := range wantGroups {
			if _, ok := seen[g]; !ok {
				t.Errorf("%s: %s served by no shard", path, g)
			}
		}
	}
}

// resourceSeries returns the identity (name and labels, not the value) of
// every series of a resource: those with a service_id or vpc_id label.
func resourceSeries(fams map[string]*dto.MetricFamily) []string {
	var out []string
	for name, f := range fams {
		if strings.HasPrefix(name, "clouddb_exporter_") {
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			resource := false
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
				resource = resource || l.GetName() == "service_id" || l.GetName() == "vpc_id"
			}
			if resource {
				sort.Strings(labels)
				out = append(out, name+"{"+strings.Join(labels, ",")+"}")
			}
		}
	}
	return out
}

// sdGroups returns the target groups of an /sd endpoint, each as JSON.
func sdGroups(t *testing.T, url string) []string {
	t.Helper()
	code, body := testbin.Get(url)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, code, body)
	}
	var groups []json.RawMessage
	if err := json.Unmarshal([]byte(body), &groups); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	out := make([]string, len(groups))
	for i, g := range groups {
		out[i] = string(g)
	}
	return out
}

// TestShardingStartupErrors: bad shard settings stop the exporter at
// startup (exit 2) with a message naming the flag.
func TestShardingStartupErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	t.Parallel()
	bin := testbin.Build(t, ".")
	env := []string{"CLOUDDB_API_URL=https://api.example.net/v1", "CLOUDDB_API_PROJECT_ID=p", "CLOUDDB_ACCESS_KEY=ak", "CLOUDDB_SECRET_KEY=sk"}
	cases := []struct {
		env  []string
		args []string
		want string
	}{
		{nil, []string{"--shard=3", "--total-shards=3"}, "--shard (CLOUDDB_SHARD) must be from 0 to --total-shards - 1 (2), not 3"},
		{[]string{"CLOUDDB_TOTAL_SHARDS=0"}, nil, "--total-shards (CLOUDDB_TOTAL_SHARDS) must be at least 1"},
		{[]string{"CLOUDDB_SHARD=one"}, nil, `--shard ($CLOUDDB_SHARD): "one" is not an integer`},
		{nil, []string{"--shard.from-hostname", "--shard=1", "--total-shards=3"}, "--shard and --shard.from-hostname contradict"},
		{nil, []string{"--shard=1", "--total-shards=3", "--admin.listen-address=127.0.0.1:0"}, "--admin.listen-address cannot be used with --total-shards above 1"},
	}
	if host, err := os.Hostname(); err == nil {
		if _, err := shard.Ordinal(host); err != nil {
			cases = append(cases, struct {
				env  []string
				args []string
				want string
			}{nil, []string{"--shard.from-hostname", "--total-shards=3"}, "--shard.from-hostname: host name"})
		}
	}
	for _, tc := range cases {
		for _, check := range []bool{false, true} {
			args := slices.Clone(tc.args)
			if check {
				args = append(args, "--config.check")
			}
			code, out := testbin.Run(t, bin, append(slices.Clone(env), tc.env...), args...)
			if code != 2 || !strings.Contains(out, tc.want) {
				t.Errorf("%v %v: exit %d, want 2 and %q:\n%s", tc.env, args, code, tc.want, out)
			}
		}
	}
}
