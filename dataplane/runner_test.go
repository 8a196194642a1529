package dataplane

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/fleet"
)

// exampleSettings stand for a reader registered from its own file, with
// its own settings: Run starts it when they enable it.
type exampleSettings struct{ Enabled bool }

var exampleKey = config.NewReaderKey[exampleSettings]("example")

type exampleClient struct{}

// ExampleCall is the example reader's one call.
func (exampleClient) ExampleCall() {}

// exampleCalls is what the example readers need of their client.
type exampleCalls interface{ ExampleCall() }

// exampleStarts counts the example readers Run built, synchronously.
var exampleStarts atomic.Int32

func init() {
	register("example", "Example",
		func(c config.Collect) (bool, time.Duration) { return exampleKey.Of(c).Enabled, time.Hour },
		func(r *runner, _ exampleCalls) func(context.Context) {
			exampleStarts.Add(1)
			return func(context.Context) {
				now := r.now()
				r.publish(func(s *fleet.Snapshot) { s.SetData("example", &now) }, now, now, 0)
			}
		})
}

// TestRunStartsRegisteredReaders: a registered reader runs when its
// setting enables it, and its part and health reach the snapshots; an
// enabled reader whose client cannot make its calls is an error naming it,
// not a reader silently left out.
func TestRunStartsRegisteredReaders(t *testing.T) {
	for _, tc := range []struct {
		name   string
		on     bool
		client any
		want   bool
	}{{"enabled", true, exampleClient{}, true}, {"off", false, exampleClient{}, false}, {"no calls", true, struct{}{}, false}, {"off, no calls", false, struct{}{}, false}} {
		t.Run(tc.name, func(t *testing.T) {
			host := newFakeHost(1)
			var collect config.Collect
			exampleKey.In(&collect).Enabled = tc.on
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			before := exampleStarts.Load()
			rs, err := New(tc.client, Options{Collect: collect})
			if wantErr := tc.on && !tc.want; (err != nil) != wantErr || err != nil && !strings.Contains(err.Error(), "the example reader is enabled") {
				t.Fatalf("New: %v, want an error: %v", err, wantErr)
			}
			rs.Run(ctx, host)
			if started := exampleStarts.Load() > before; started != tc.want {
				t.Fatalf("started %v, want %v", started, tc.want)
			}
			if !tc.want {
				return
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				if h, ok := host.part("example"); ok && h.Success && fleet.DataOf[time.Time](host.Snapshot(), "example") != nil {
					return
				}
				if time.Now().After(deadline) {
					t.Fatal("no part from the example reader")
				}
				time.Sleep(5 * time.Millisecond)
			}
		})
	}
}

type slowSettings struct{ Enabled bool }

var slowKey = config.NewReaderKey[slowSettings]("slow-example")

// slowStarted is closed by the slow reader's tick, and slowEnded set once its context ended.
var (
	slowStarted chan struct{}
	slowEnded   atomic.Bool
)

func init() {
	register("slow-example", "Slow example",
		func(c config.Collect) (bool, time.Duration) { return slowKey.Of(c).Enabled, time.Hour },
		func(_ *runner, _ exampleCalls) func(context.Context) {
			return func(ctx context.Context) {
				close(slowStarted)
				<-ctx.Done()
				time.Sleep(10 * time.Millisecond) // its last save, as the log reader's
				slowEnded.Store(true)
			}
		})
}

// TestRunWaitsForTheReaders: the wait Run returns ends after every reader's
// tick did, so that the log reader's last positions are saved before the
// state file is closed at shutdown.
func TestRunWaitsForTheReaders(t *testing.T) {
	slowEnded.Store(false)
	slowStarted = make(chan struct{})
	var collect config.Collect
	slowKey.In(&collect).Enabled = true
	ctx, cancel := context.WithCancel(context.Background())
	rs, err := New(exampleClient{}, Options{Collect: collect})
	if err != nil {
		t.Fatal(err)
	}
	wait := rs.Run(ctx, newFakeHost(1))
	<-slowStarted // a reader cancelled before its first tick ends at once
	cancel()
	wait()
	if !slowEnded.Load() {
		t.Error("Run's wait returned before the reader's tick ended")
	}
}

// TestRunAnnouncesHealthBeforeReady: a reader's part reports its health
// (not succeeded yet) from the start, before the state's first cycle lets
// it read: a starved fleet's first reads may take minutes.
func TestRunAnnouncesHealthBeforeReady(t *testing.T) {
	host := newFakeHost(1)
	host.ready = make(chan struct{}) // the state's first cycle never ends
	var collect config.Collect
	exampleKey.In(&collect).Enabled = true
	ctx, cancel := context.WithCancel(context.Background())
	rs, err := New(exampleClient{}, Options{Collect: collect})
	if err != nil {
		t.Fatal(err)
	}
	wait := rs.Run(ctx, host)
	defer wait()
	defer cancel()
	var h fleet.PartHealth
	var ok bool
	deadline := time.Now().Add(10 * time.Second)
	for !ok && time.Now().Before(deadline) {
		h, ok = host.part("example")
		runtime.Gosched()
	}
	if !ok || h.Success || !h.LastSuccess.IsZero() {
		t.Fatalf("health before the state's first cycle: %+v (published %v), want not succeeded yet", h, ok)
	}
}

// TestNewRunnerDefaults: a reader's unit test may leave Options zero; the
// runner then has a clock, a logger and the collect defaults.
func TestNewRunnerDefaults(t *testing.T) {
	r := newRunner(newFakeHost(0), Options{}, "test", time.Minute)
	if r.now().IsZero() || r.logger == nil || r.opts.Interval != config.DefaultInterval || r.opts.Concurrency != config.DefaultConcurrency {
		t.Errorf("defaults: now %v, logger %v, interval %v, concurrency %d", r.now(), r.logger, r.opts.Interval, r.opts.Concurrency)
	}
}
