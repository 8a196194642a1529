package rightsizing

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/clouddb/clouddb_exporter/pricing"
)

// Findings, the states of clouddb_service_rightsizing_finding.
const (
	OverProvisioned  = "over_provisioned"
	UnderProvisioned = "under_provisioned"
	Optimal          = "optimal"
	InsufficientData = "insufficient_data"
)

// Findings lists every finding in the order they are exported.
var Findings = []string{OverProvisioned, UnderProvisioned, Optimal, InsufficientData}

// Defaults of the --rightsizing.* flags.
const (
	DefaultWindow      = 14 * 24 * time.Hour
	DefaultHeadroom    = 0.15
	DefaultMinCoverage = 0.8
	DefaultSizes       = "500/2,1000/4,2000/8,4000/16,8000/32,16000/64,32000/128"
	// MaxWindow keeps a slot's minute count within its 16 bits.
	MaxWindow = 300 * 24 * time.Hour
	// cpuQuantile is the CPU percentile the need is taken at.
	cpuQuantile = 0.95
)

// Config is the rightsizing settings.
type Config struct {
	Window      time.Duration
	Headroom    float64
	MinCoverage float64
	// ReadLag is how far behind now the newest bucket the usage reads
	// returned may be without the minutes after it counting as missing: the
	// API's lag and the time to the next read (see Window.Coverage).
	ReadLag time.Duration
	// Sizes is the ladder, from the smallest.
	Sizes []pricing.Size
}

// ParseSizes reads a comma-separated ladder, "500/2,1000/4", sorted from the
// smallest; each size must be larger than the one before in CPU and memory.
func ParseSizes(v string) ([]pricing.Size, error) {
	var sizes []pricing.Size
	for _, f := range strings.Split(v, ",") {
		s, err := pricing.ParseSize(strings.TrimSpace(f))
		if err != nil {
			return nil, err
		}
		sizes = append(sizes, s)
	}
	slices.SortFunc(sizes, func(a, b pricing.Size) int { return int(a.CPUMillis - b.CPUMillis) })
	for i := 1; i < len(sizes); i++ {
		if sizes[i].CPUMillis == sizes[i-1].CPUMillis || sizes[i].MemoryGBs <= sizes[i-1].MemoryGBs {
			return nil, fmt.Errorf("%s and %s: each size of the ladder must have more CPU and more memory than the one before", sizes[i-1], sizes[i])
		}
	}
	return sizes, nil
}

// Check reports a setting out of range, naming its flag.
func (c Config) Check() error {
	switch {
	case c.Window < Slots*time.Minute || c.Window > MaxWindow:
		return fmt.Errorf("--rightsizing.window must be between 7m (a minute a part) and 300d, not %s", c.Window)
	case c.Headroom < 0 || c.Headroom > 10 || math.IsNaN(c.Headroom):
		return fmt.Errorf("--rightsizing.headroom must be between 0 and 10 (a fraction: 0.15 is 15%%), not %g", c.Headroom)
	case c.MinCoverage <= 0 || c.MinCoverage > 1 || math.IsNaN(c.MinCoverage):
		return fmt.Errorf("--rightsizing.min-coverage must be above 0 and at most 1, not %g", c.MinCoverage)
	case len(c.Sizes) == 0:
		return fmt.Errorf("--rightsizing.sizes names no size")
	}
	return nil
}

// Recommendation is what the window says about one service.
type Recommendation struct {
	Finding  string
	Coverage float64
	// CPUNeed (millicores) and MemoryNeed (bytes) include the headroom; Size
	// is the smallest of the ladder covering both (the largest when none
	// does), zero with InsufficientData.
	CPUNeed, MemoryNeed float64
	Size                pricing.Size
}

// Recommend sizes a service now from its window; current is its size. Its HA
// replicas follow it: they take the size the primary is given.
func (c Config) Recommend(w *Window, now time.Time, current pricing.Size) Recommendation {
	r := Recommendation{Coverage: w.Coverage(now, c.Window, c.ReadLag)}
	p95, ok := w.CPUPercentile(now, c.Window, cpuQuantile)
	peak := w.MemoryPeak(now, c.Window)
	if r.Coverage < c.MinCoverage || !ok || peak == 0 {
		r.Finding = InsufficientData
		return r
	}
	r.CPUNeed = p95 * (1 + c.Headroom)
	r.MemoryNeed = peak * (1 + c.Headroom)
	r.Size = c.Sizes[len(c.Sizes)-1]
	for _, s := range c.Sizes {
		if float64(s.CPUMillis) >= r.CPUNeed && float64(s.MemoryGBs)*(1<<30) >= r.MemoryNeed {
			r.Size = s
			break
		}
	}
	r.Finding = compare(r.Size, current)
	return r
}

// compare: any dimension short of the recommendation is under-provisioned.
func compare(rec, cur pricing.Size) string {
	switch {
	case rec == cur:
		return Optimal
	case rec.CPUMillis > cur.CPUMillis || rec.MemoryGBs > cur.MemoryGBs:
		return UnderProvisioned
	}
	return OverProvisioned
}

// SavingPerHour is what resizing the primary and its HA replicas from current
// to the recommendation saves per hour (negative: costs); false without a
// price for either size.
func SavingPerHour(t *pricing.Table, region string, current, recommended pricing.Size, haReplicas int) (float64, bool) {
	cur, ok1 := t.Compute(region, current)
	rec, ok2 := t.Compute(region, recommended)
	if !ok1 || !ok2 {
		return 0, false
	}
	nodes := 1.0
	if haReplicas > 0 {
		fraction, ok := t.HAReplica()
		if !ok {
			return 0, false
		}
		nodes += float64(haReplicas) * fraction
	}
	return math.Round((cur-rec)*nodes*1e9) / 1e9, true
}
