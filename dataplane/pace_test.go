package dataplane

import (
	"context"
	"testing"
	"time"

	"golang.org/x/time/rate"
)

// TestPaceTakesTokensInBatches: a reader's calls leave in batches of its
// burst, not one by one at even intervals (each call then woke an idle
// process: 80 µs of CPU a call at 1,700 calls a second, 53 in batches of 8),
// and never more than the burst at once.
func TestPaceTakesTokensInBatches(t *testing.T) {
	for _, tc := range []struct {
		name              string
		burst, conc, want int
	}{
		{"batch of the concurrency's multiple", 100, 2, 4 * 2},
		{"batch of the project's burst", 3, 8, 3},
		{"burst of one", 1, 8, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRunner(newFakeHost(0), Options{Burst: tc.burst}, "test", time.Minute)
			r.opts.Concurrency = tc.conc
			// One token an hour: only the bucket's first fill is available now.
			r.setRate(rate.Every(time.Hour))
			// A deadline the next token cannot meet: Wait fails at once, no sleep.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			calls := 0
			for r.pace(ctx) {
				calls++
				if calls > 100 {
					t.Fatal("pace never stopped")
				}
			}
			if calls != tc.want {
				t.Errorf("%d calls left at once, want %d", calls, tc.want)
			}
		})
	}
}

// TestPaceNewRateDropsCredits: tokens taken for a batch do not outlive a
// new rate, so the calls at once never exceed the burst.
func TestPaceNewRateDropsCredits(t *testing.T) {
	r := newRunner(newFakeHost(0), Options{Burst: 100}, "test", time.Minute)
	r.opts.Concurrency = 1
	r.setRate(rate.Every(time.Hour))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if !r.pace(ctx) {
		t.Fatal("first call refused")
	}
	r.setRate(rate.Every(time.Hour))
	if r.pace(ctx) {
		t.Error("a credit from before the new rate was used")
	}
}
