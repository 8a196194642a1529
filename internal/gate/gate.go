// Package gate lets the data plane's readers wait while the poller's state
// calls run, so those never queue behind theirs for rate-limit tokens.
package gate

import (
	"context"
	"sync"
)

// Gate is held by any number of holders at once; the zero value is open.
type Gate struct {
	mu   sync.Mutex
	busy int
	idle chan struct{} // closed when busy drops to 0
}

// Enter holds the gate until the matching Leave.
func (g *Gate) Enter() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.busy == 0 {
		g.idle = make(chan struct{})
	}
	g.busy++
}

// Leave ends what Enter started.
func (g *Gate) Leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.busy--
	if g.busy == 0 {
		close(g.idle)
	}
}

// Wait returns once nobody holds the gate, or ctx's error.
func (g *Gate) Wait(ctx context.Context) error {
	g.mu.Lock()
	idle, busy := g.idle, g.busy > 0
	g.mu.Unlock()
	if !busy {
		return ctx.Err()
	}
	select {
	case <-idle:
		return ctx.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}
