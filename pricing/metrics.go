package pricing

import (
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/clouddb/clouddb_exporter/collector"
	"github.com/clouddb/clouddb_exporter/fleet"
)

var (
	costDesc = collector.NewDesc("clouddb_service_estimated_cost_per_hour",
		"Estimated cost of one component of a database service per hour.",
		"project_id", "service_id", "component")
	unpricedDesc = collector.NewDesc("clouddb_pricing_unpriced_resources",
		"Components of a project's services the cost estimate leaves out.",
		"project_id")
)

func init() {
	list := collector.ListGroup(PartCost, func(c *Costs) []ServiceCost { return c.Services },
		func(c *ServiceCost) collector.Key { return collector.Key{c.ID} },
		func(_ *Costs, l []ServiceCost) *Costs { return &Costs{Services: l} }, collectCosts)
	list.Equal = func(a, b *fleet.Snapshot) bool {
		return a.ProjectID == b.ProjectID && slices.Equal(Of(a).Services, Of(b).Services)
	}
	totals := collector.DataGroup(PartCost, func(s *fleet.Snapshot) any {
		return &Costs{Unpriced: Of(s).Unpriced}
	}, func(out *collector.Sink, s *fleet.Snapshot) {
		if c := Of(s); c != nil {
			out.Gauge(unpricedDesc, float64(c.Unpriced), s.ProjectID)
		}
	})
	collector.RegisterPart("", []*collector.Desc{costDesc, unpricedDesc}, list, totals)
}

func collectCosts(out *collector.Sink, s *fleet.Snapshot) {
	c := Of(s)
	if c == nil {
		return
	}
	for _, svc := range c.Services {
		for i, component := range Components {
			if svc.Priced&(1<<i) != 0 {
				out.Gauge(costDesc, svc.PerHour[i], s.ProjectID, svc.ID, component)
			}
		}
	}
}

// Publisher is what receives the snapshots (the exposition).
type Publisher interface {
	SetSnapshot(s *fleet.Snapshot)
	RemoveProject(projectID string)
}

// Estimator adds the estimate to every snapshot on its way to the next
// publisher; without a table it passes them on as they are.
type Estimator struct {
	next   Publisher
	table  atomic.Pointer[Table]
	info   *prometheus.GaugeVec
	logger *slog.Logger

	// warned holds the missing.Key of each price a WARN named, so that a
	// price lacking is logged once, not at every poll of every project.
	mu     sync.Mutex
	warned map[string]bool
}

// NewEstimator returns an Estimator publishing to next; reg receives
// clouddb_pricing_info, logger (nil: none) a WARN for each price missing.
func NewEstimator(next Publisher, reg prometheus.Registerer, logger *slog.Logger) *Estimator {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	e := &Estimator{next: next, logger: logger, warned: map[string]bool{}, info: prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "clouddb_pricing_info",
		Help: "The price file the cost estimates use, value 1.",
	}, []string{"currency", "effective_date"})}
	if reg != nil {
		reg.MustRegister(e.info)
	}
	return e
}

// SetTable makes later snapshots priced by t (nil: none); the snapshots
// already published keep their estimate until the next poll.
func (e *Estimator) SetTable(t *Table) {
	e.table.Store(t)
	e.info.Reset()
	if t != nil {
		e.info.WithLabelValues(t.Currency, t.EffectiveDate).Set(1)
	}
}

// SetSnapshot publishes a copy of s that holds its estimate; s itself is
// shared and never modified.
func (e *Estimator) SetSnapshot(s *fleet.Snapshot) {
	t := e.table.Load()
	if t == nil || s == nil {
		e.next.SetSnapshot(s)
		return
	}
	priced := *s
	priced.Data = maps.Clone(s.Data)
	priced.SetData(PartCost, estimate(t, s, e.warn))
	e.next.SetSnapshot(&priced)
}

// warn logs a price missing the first time it is seen.
func (e *Estimator) warn(m missing) {
	e.mu.Lock()
	seen := e.warned[m.Key]
	e.warned[m.Key] = true
	e.mu.Unlock()
	if seen {
		return
	}
	attrs := []any{"key", m.Key}
	if m.Region != "" {
		attrs = append(attrs, "region", m.Region)
	}
	if m.Size != "" {
		attrs = append(attrs, "size", m.Size)
	}
	attrs = append(attrs, "fix", "add "+m.Key+" to --pricing.file and reload (SIGHUP); until then it is counted in clouddb_pricing_unpriced_resources")
	e.logger.Warn("A resource has no price in the price file; its cost is left out of the estimate", attrs...)
}

// RemoveProject passes a project's removal on.
func (e *Estimator) RemoveProject(projectID string) { e.next.RemoveProject(projectID) }

// Table returns the prices in use, nil for none.
func (e *Estimator) Table() *Table { return e.table.Load() }
