package poller

import (
	"context"
	"sync"
)

// stateGate tells the data plane's readers (package dataplane) when the
// state's calls (a full cycle, a transition poll) are running: their calls
// wait for them, so that the state's calls never queue behind them for the
// rate limit's tokens (docs/configuration.md, "Cost and budget").
type stateGate struct {
	mu   sync.Mutex
	busy int
	idle chan struct{} // closed when busy drops to 0
}

// enter marks state calls as running until the matching leave.
func (g *stateGate) enter() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.busy == 0 {
		g.idle = make(chan struct{})
	}
	g.busy++
}

// leave ends what enter started.
func (g *stateGate) leave() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.busy--
	if g.busy == 0 {
		close(g.idle)
	}
}

// wait returns once no state calls are running, or ctx's error.
func (g *stateGate) wait(ctx context.Context) error {
	g.mu.Lock()
	idle := g.idle
	busy := g.busy > 0
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
