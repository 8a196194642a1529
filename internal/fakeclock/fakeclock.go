// Package fakeclock is a clock that tests move by hand, so nothing sleeps.
package fakeclock

import (
	"sync"
	"time"
)

// Clock is a manually advanced clock, safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a Clock showing t.
func New(t time.Time) *Clock { return &Clock{now: t} }

// Now has the signature of time.Now.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
