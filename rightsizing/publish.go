package rightsizing

import (
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/collector"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/pricing"
)

// Part is the data part the recommendations are published as.
const Part = "rightsizing"

// ServiceRecommendation is one service's line of the part.
type ServiceRecommendation struct {
	ID       string
	Finding  string
	Coverage float64
	// Size is zero with InsufficientData.
	Size pricing.Size
	// Saving is valid with HasSaving.
	Saving    float64
	HasSaving bool
}

// Recommendations is a project's part, sorted by service id.
type Recommendations struct {
	Services []ServiceRecommendation
}

// Of returns the recommendations in s, nil when rightsizing is off.
func Of(s *fleet.Snapshot) *Recommendations { return fleet.DataOf[Recommendations](s, Part) }

// Publisher adds the recommendations to every snapshot on its way to next.
type Publisher struct {
	next    pricing.Publisher
	tracker *Tracker
	prices  func() *pricing.Table

	mu      sync.Mutex
	sizings map[string]*sizing // by project (sizing.go)
	// sized counts the services sized, for tests.
	sized atomic.Int64
}

// NewPublisher returns a Publisher of tracker's recommendations; prices
// returns the price table for the savings (nil: none).
func NewPublisher(next pricing.Publisher, tracker *Tracker, prices func() *pricing.Table) *Publisher {
	return &Publisher{next: next, tracker: tracker, prices: prices, sizings: map[string]*sizing{}}
}

// SetSnapshot publishes a copy of s that holds its recommendations; a
// complete list of the services in s drops the windows of those deleted.
func (p *Publisher) SetSnapshot(s *fleet.Snapshot) {
	if s == nil {
		p.next.SetSnapshot(s)
		return
	}
	p.forgetDeleted(s)
	sized := *s
	sized.Data = maps.Clone(s.Data)
	sized.SetData(Part, p.recommend(s))
	p.next.SetSnapshot(&sized)
}

// RemoveProject forgets the project's windows and passes the removal on.
func (p *Publisher) RemoveProject(projectID string) {
	p.tracker.RemoveProject(projectID)
	p.mu.Lock()
	delete(p.sizings, projectID)
	p.mu.Unlock()
	p.next.RemoveProject(projectID)
}

// forgetDeleted hands the tracker the services list of s when it is a whole
// one: the services part's last read succeeded (a list failing or cut short
// fails it, and removes no service from the snapshot). The tracker takes
// each read once, at its time, and drops a window only when two in a row
// lack its service, as the change timeline decides a deletion.
func (p *Publisher) forgetDeleted(s *fleet.Snapshot) {
	for _, h := range s.Parts {
		if h.Name != fleet.PartServices || !h.Success {
			continue
		}
		p.tracker.Listed(s.ProjectID, h.LastSuccess, func(yield func(string) bool) {
			for i := range s.Services {
				if !yield(s.Services[i].ServiceID) {
					return
				}
			}
		})
	}
}

func primarySize(svc *apiclient.Service) (pricing.Size, bool) {
	if len(svc.Resources) == 0 || svc.Resources[0].Spec == nil {
		return pricing.Size{}, false
	}
	spec := svc.Resources[0].Spec
	if spec.CPUMillis == nil || spec.MemoryGBs == nil {
		return pricing.Size{}, false
	}
	return pricing.Size{CPUMillis: int64(*spec.CPUMillis), MemoryGBs: int64(*spec.MemoryGBs)}, true
}

func haReplicas(svc *apiclient.Service) int {
	if ha := svc.HAReplicas; ha != nil && ha.ReplicaCount != nil {
		return int(*ha.ReplicaCount)
	}
	return max(len(svc.Resources)-1, 0)
}

var (
	recommendedCPUDesc = collector.NewDesc("clouddb_service_rightsizing_recommended_cpu_millis",
		"CPU of the recommended size of a database service, in millicores.",
		"project_id", "service_id")
	recommendedMemoryDesc = collector.NewDesc("clouddb_service_rightsizing_recommended_memory_gbs",
		"Memory of the recommended size of a database service, in GB.",
		"project_id", "service_id")
	findingDesc = collector.NewDesc("clouddb_service_rightsizing_finding",
		"What the size recommendation says of a database service, 1 for the current one.",
		"project_id", "service_id", "finding")
	recommendedSizeDesc = collector.NewDesc("clouddb_service_rightsizing_recommended_size_info",
		"The recommended size of a database service, value 1.",
		"project_id", "service_id", "cpu_millis", "memory_gbs")
	coverageDesc = collector.NewDesc("clouddb_service_rightsizing_coverage_ratio",
		"Share of the rightsizing window with the primary's usage read.",
		"project_id", "service_id")
	savingDesc = collector.NewDesc("clouddb_service_rightsizing_saving_per_hour",
		"What resizing a database service to the recommended size saves per hour.",
		"project_id", "service_id")
)

func init() {
	list := collector.ListGroup(Part, func(r *Recommendations) []ServiceRecommendation { return r.Services },
		func(l *ServiceRecommendation) collector.Key { return collector.Key{l.ID} },
		func(_ *Recommendations, l []ServiceRecommendation) *Recommendations {
			return &Recommendations{Services: l}
		}, collectRecommendations)
	list.Equal = func(a, b *fleet.Snapshot) bool {
		return a.ProjectID == b.ProjectID && slices.Equal(Of(a).Services, Of(b).Services)
	}
	collector.RegisterPart("", []*collector.Desc{recommendedCPUDesc, recommendedMemoryDesc, recommendedSizeDesc, findingDesc, coverageDesc, savingDesc}, list)
}

func collectRecommendations(out *collector.Sink, s *fleet.Snapshot) {
	r := Of(s)
	if r == nil {
		return
	}
	p := s.ProjectID
	for _, l := range r.Services {
		if l.Finding != InsufficientData {
			out.Gauge(recommendedCPUDesc, float64(l.Size.CPUMillis), p, l.ID)
			out.Gauge(recommendedMemoryDesc, float64(l.Size.MemoryGBs), p, l.ID)
			out.Gauge(recommendedSizeDesc, 1, p, l.ID, strconv.FormatInt(l.Size.CPUMillis, 10), strconv.FormatInt(l.Size.MemoryGBs, 10))
		}
		for _, f := range Findings {
			v := 0.0
			if f == l.Finding {
				v = 1
			}
			out.Gauge(findingDesc, v, p, l.ID, f)
		}
		out.Gauge(coverageDesc, l.Coverage, p, l.ID)
		if l.HasSaving {
			out.Gauge(savingDesc, l.Saving, p, l.ID)
		}
	}
}
