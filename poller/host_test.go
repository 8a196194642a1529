package poller

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// TestPollHoldsStateGate: while a full cycle runs, WaitForState holds the
// data plane's calls back, so that the two do not share the rate limit's
// tokens; once it ends, they go.
func TestPollHoldsStateGate(t *testing.T) {
	fc := newFakeClient()
	fleetOf(fc, 2, 1)
	p := New(fc, Options{Collect: config.Collect{Interval: time.Minute, Concurrency: 2}})
	var (
		mu     sync.Mutex
		during []bool
	)
	fc.onCall = func(string) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		ok := p.WaitForState(ctx) == nil
		mu.Lock()
		during = append(during, ok)
		mu.Unlock()
	}
	p.Poll(context.Background())
	fc.onCall = nil
	if len(during) == 0 || slices.Contains(during, true) {
		t.Errorf("data-plane calls could go during a state cycle: %v", during)
	}
	if err := p.WaitForState(context.Background()); err != nil {
		t.Errorf("WaitForState with no state cycle running: %v", err)
	}
}

// TestPublishPart: a data-plane part's data goes into every snapshot from
// its first publish on, with its health after the state's parts; a publish
// without health keeps the last one.
func TestPublishPart(t *testing.T) {
	fc := newFakeClient()
	fleetOf(fc, 1, 0)
	var got []*fleet.Snapshot
	p := New(fc, Options{Collect: config.Collect{Interval: time.Minute, Concurrency: 2},
		Publish: func(s *fleet.Snapshot) { got = append(got, s) }})
	p.Poll(context.Background())
	logs := &fleet.Logs{PagesTruncated: 1}
	p.PublishPart(fleet.PartLogs, &fleet.PartHealth{Name: fleet.PartLogs, Success: true}, func(s *fleet.Snapshot) { s.SetData(fleet.PartLogs, logs) })
	p.PublishPart(fleet.PartUsage, &fleet.PartHealth{Name: fleet.PartUsage}, func(s *fleet.Snapshot) { s.SetData(fleet.PartUsage, &fleet.Usage{}) })
	p.PublishPart(fleet.PartLogs, nil, func(s *fleet.Snapshot) { s.SetData(fleet.PartLogs, logs) })
	p.Poll(context.Background())
	last := got[len(got)-1]
	if last.Logs() != logs || last.Usage() == nil {
		t.Fatalf("a later snapshot lost the data plane's data: logs %v usage %v", last.Logs(), last.Usage())
	}
	var names []string
	for _, ph := range last.Parts {
		names = append(names, ph.Name)
	}
	if n := len(names); n < 2 || names[n-2] != fleet.PartUsage || names[n-1] != fleet.PartLogs || !last.Parts[n-1].Success {
		t.Errorf("parts %v (%+v), want usage then logs last, logs healthy", names, last.Parts)
	}
}
