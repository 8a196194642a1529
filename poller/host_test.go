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
// its first publish on, with its health after the state's parts (by name); a publish
// without health keeps the last one.
func TestPublishPart(t *testing.T) {
	fc := newFakeClient()
	fleetOf(fc, 1, 0)
	var got []*fleet.Snapshot
	p := New(fc, Options{Collect: config.Collect{Interval: time.Minute, Concurrency: 2},
		Publish: func(s *fleet.Snapshot) { got = append(got, s) }})
	p.Poll(context.Background())
	type data struct{ n int }
	logs := &data{1}
	p.PublishPart("logs", &fleet.PartHealth{Name: "logs", Success: true}, func(s *fleet.Snapshot) { s.SetData("logs", logs) })
	p.PublishPart("usage", &fleet.PartHealth{Name: "usage"}, func(s *fleet.Snapshot) { s.SetData("usage", &data{}) })
	p.PublishPart("logs", nil, func(s *fleet.Snapshot) { s.SetData("logs", logs) })
	p.Poll(context.Background())
	last := got[len(got)-1]
	if fleet.DataOf[data](last, "logs") != logs || fleet.DataOf[data](last, "usage") == nil {
		t.Fatalf("a later snapshot lost the data plane's data: %v", last.Data)
	}
	var names []string
	for _, ph := range last.Parts {
		names = append(names, ph.Name)
	}
	// After the state's parts, by name: the poller knows no reader.
	if n := len(names); n < 2 || names[n-2] != "logs" || names[n-1] != "usage" || !last.Parts[n-2].Success {
		t.Errorf("parts %v (%+v), want logs then usage last, logs healthy", names, last.Parts)
	}
}
