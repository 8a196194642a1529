package rightsizing

import (
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/pricing"
)

// sizing is what a project's last publish sized, so that the next sizes
// again only what may have changed: the services whose windows changed (the
// tracker's change log), or every one on a new minute (the coverage moves
// with time, and to a thousandth a minute shows little of it), a new list
// of services or new prices. Each publish sized every service: 10,000 a
// few times every 5 s, most of it reading their sizes through pointers.
type sizing struct {
	mu       sync.Mutex
	services []fleet.Service // the list sized, a snapshot's: never modified
	prices   *pricing.Table
	minute   int64
	mark     changeMark
	out      *Recommendations
	// lines[i] is the index in out of the line of services[i], -1 for none.
	lines []int32
}

func (p *Publisher) sizingOf(projectID string) *sizing {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.sizings[projectID]
	if c == nil {
		c = &sizing{}
		p.sizings[projectID] = c
	}
	return c
}

// recommend sizes the services with a window: a service the usage reader
// never read has no line, rather than a flood of insufficient_data.
func (p *Publisher) recommend(s *fleet.Snapshot) *Recommendations {
	c := p.sizingOf(s.ProjectID)
	c.mu.Lock()
	defer c.mu.Unlock()
	prices := p.prices()
	minute := p.tracker.now().Unix() / 60
	changes := p.tracker.changedSince(s.ProjectID, c.mark)
	switch {
	case changes.windows == 0:
		// No usage read: nothing to size, and no walk of the services;
		// the first window makes the next size all.
		c.out, c.lines, changes.mark = &Recommendations{}, nil, changeMark{}
	case changes.all || c.minute != minute || c.prices != prices || !sameList(c.services, s.Services) ||
		!p.sizeChanged(c, s, changes.ids, prices):
		p.sizeAll(c, s, prices, changes.windows)
	}
	c.services, c.prices, c.minute, c.mark = s.Services, prices, minute, changes.mark
	return c.out
}

// sameList: a snapshot's lists are never modified, so the same array is the same list.
func sameList(a, b []fleet.Service) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// sizeAll sizes every service of s.
func (p *Publisher) sizeAll(c *sizing, s *fleet.Snapshot, prices *pricing.Table, windows int) {
	c.out = &Recommendations{Services: make([]ServiceRecommendation, 0, min(windows, len(s.Services)))}
	c.lines = slices.Grow(c.lines[:0], len(s.Services))[:len(s.Services)]
	p.sized.Add(int64(len(s.Services)))
	for i := range s.Services {
		c.lines[i] = -1
		if line, ok := p.line(s.ProjectID, s.Services[i].Service, prices); ok {
			c.lines[i] = int32(len(c.out.Services))
			c.out.Services = append(c.out.Services, line)
		}
	}
}

// sizeChanged sizes again the services ids of c's list, and returns false
// when that is not enough: a service not in it, a line that comes or goes.
func (p *Publisher) sizeChanged(c *sizing, s *fleet.Snapshot, ids []string, prices *pricing.Table) bool {
	var next []ServiceRecommendation // a copy once a line changes: the last is published
	// A read logs a service's CPU and its memory: each once.
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	p.sized.Add(int64(len(ids)))
	for _, id := range ids {
		i, found := slices.BinarySearchFunc(s.Services, id, func(svc fleet.Service, id string) int { return strings.Compare(svc.ServiceID, id) })
		if !found {
			return false
		}
		line, ok := p.line(s.ProjectID, s.Services[i].Service, prices)
		j := c.lines[i]
		switch {
		case ok != (j >= 0):
			return false
		case !ok || line == c.out.Services[j]:
		case next == nil:
			next = slices.Clone(c.out.Services)
			fallthrough
		default:
			next[j] = line
		}
	}
	if next != nil {
		c.out = &Recommendations{Services: next}
	}
	return true
}

// line sizes one service; false for none: no dedicated size known, or no window.
func (p *Publisher) line(projectID string, svc *apiclient.Service, prices *pricing.Table) (ServiceRecommendation, bool) {
	size, ok := primarySize(svc)
	if !ok {
		return ServiceRecommendation{}, false // shared, or no size known: nothing to resize
	}
	r, ok := p.tracker.Recommend(projectID, svc.ServiceID, size)
	if !ok {
		return ServiceRecommendation{}, false
	}
	// The coverage to a thousandth: it moves with every minute, and an
	// unchanged line is not rendered again.
	line := ServiceRecommendation{ID: svc.ServiceID, Finding: r.Finding, Coverage: math.Round(r.Coverage*1000) / 1000, Size: r.Size}
	switch {
	case prices == nil || r.Finding == InsufficientData:
	case svc.IsPaused():
		// It pays storage only (the cost estimate's compute is 0):
		// no size saves anything while it is paused.
		line.Saving, line.HasSaving = 0, true
	default:
		line.Saving, line.HasSaving = SavingPerHour(prices, svc.RegionCode, size, r.Size, haReplicas(svc))
	}
	return line, true
}
