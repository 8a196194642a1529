package rightsizing

import (
	"slices"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/fleet"
	"github.com/clouddb/clouddb_exporter/internal/fakeclock"
	"github.com/clouddb/clouddb_exporter/internal/fleettest"
	"github.com/clouddb/clouddb_exporter/pricing"
)

// TestPublisherSizesWhatChanged: a publish sizes again only the services
// whose window changed since the last one, and every one on a new minute
// (the coverage moves with time), a new list of services, new prices or
// windows read back; what it publishes is what sizing every service now
// gives, and a publish in which nothing changed publishes the last
// recommendations again.
func TestPublisherSizesWhatChanged(t *testing.T) {
	clock := fakeclock.New(start)
	tr := NewTracker(testConfig(t), clock.Now)
	ids := []string{"a", "b", "c", "d", "unread"}
	for _, id := range ids[:4] {
		feed(tr, clock, testKey("p1", id), 0, 600, steady(300, 3*gib))
	}
	var prices *pricing.Table
	table := func() *pricing.Table { return prices }
	p := NewPublisher(&fleettest.Recorder{}, tr, table)
	list := func() []fleet.Service {
		var out []fleet.Service
		for _, id := range ids {
			out = append(out, sizedService(id, 4000, 16, 1))
		}
		return out
	}
	s := &fleet.Snapshot{ProjectID: "p1", Services: list()}
	var last *Recommendations
	step := func(name string, sized int) {
		t.Helper()
		before := p.sized.Load()
		got := p.recommend(s)
		if n := p.sized.Load() - before; n != int64(sized) {
			t.Errorf("%s: %d services sized, want %d", name, n, sized)
		}
		want := NewPublisher(&fleettest.Recorder{}, tr, table).recommend(s)
		if !slices.Equal(got.Services, want.Services) {
			t.Errorf("%s: published\n%v\nwant\n%v", name, got.Services, want.Services)
		}
		if sized == 0 && got != last {
			t.Errorf("%s: new recommendations, though nothing changed", name)
		}
		last = got
	}
	step("first", 5)
	step("nothing changed", 0)
	tr.Add(testKey("p1", "c"), []time.Time{start.Add(600 * time.Minute)}, []float64{300}, []float64{3 * gib})
	step("c read", 1)
	tr.Add(testKey("p1", "unread"), []time.Time{start.Add(600 * time.Minute)}, []float64{300}, []float64{3 * gib})
	step("a first read", 1+5) // a new line: then all
	clock.Advance(time.Minute)
	step("a minute on", 5)
	s = &fleet.Snapshot{ProjectID: "p1", Services: list()}
	step("a new list", 5)
	var err error
	if prices, err = pricing.Parse([]byte("currency: USD\neffective_date: 2026-11-01\ncompute:\n  us-east-1: {\"1000/4\": 0.09, \"4000/16\": 0.36}\nha_replica: 1.0\n")); err != nil {
		t.Fatal(err)
	}
	step("new prices", 5)
	state, _ := tr.MarshalBinary()
	if err := tr.UnmarshalBinary(state); err != nil {
		t.Fatal(err)
	}
	step("the windows read back", 5)
	step("nothing changed again", 0)
	p.RemoveProject("p1")
	if got := p.recommend(s); len(got.Services) != 0 {
		t.Errorf("%d recommendations after the project's removal", len(got.Services))
	}
}

// TestPublisherSizesFewChanges: many more windows changed than a publish
// can be told of make it size every service, and what it publishes is
// right.
func TestPublisherSizesFewChanges(t *testing.T) {
	clock := fakeclock.New(start)
	tr := NewTracker(testConfig(t), clock.Now)
	s := &fleet.Snapshot{ProjectID: "p1"}
	for i := range 100 {
		id := string(rune('a'+i/26)) + string(rune('a'+i%26))
		tr.Add(testKey("p1", id), []time.Time{start}, []float64{300}, []float64{gib})
		s.Services = append(s.Services, sizedService(id, 1000, 4, 0))
	}
	p := NewPublisher(&fleettest.Recorder{}, tr, func() *pricing.Table { return nil })
	p.recommend(s)
	for k := range 10 {
		for _, svc := range s.Services {
			tr.Add(testKey("p1", svc.ServiceID), []time.Time{start.Add(time.Duration(k+1) * time.Minute)}, []float64{300}, []float64{gib})
		}
	}
	before := p.sized.Load()
	got := p.recommend(s)
	if n := p.sized.Load() - before; n != 100 {
		t.Errorf("%d services sized, want all 100", n)
	}
	if want := NewPublisher(&fleettest.Recorder{}, tr, func() *pricing.Table { return nil }).recommend(s); !slices.Equal(got.Services, want.Services) {
		t.Errorf("published\n%v\nwant\n%v", got.Services, want.Services)
	}
}
