package dataplane

import (
	"slices"
	"strings"
)

// logCounts runs every logsPublishEvery while a read goes on: it shares
// each cursor's counts until the cursor counts again.
func logCounts(cursors map[string]*logCursor) []*ServiceLogs {
	if len(cursors) == 0 {
		return nil
	}
	out := make([]*ServiceLogs, 0, len(cursors))
	for _, c := range cursors {
		out = append(out, c.published())
	}
	slices.SortFunc(out, func(a, b *ServiceLogs) int { return strings.Compare(a.ServiceID(), b.ServiceID()) })
	return out
}

// published shows the severities first seen since the last tick at 0.
func (c *logCursor) published() *ServiceLogs {
	if c.fresh == 0 {
		c.shared = true
		return c.counts
	}
	p := c.counts.Clone()
	for i := range numSeverities {
		if c.fresh&(1<<i) != 0 {
			p.Set(i, 0)
		}
	}
	return p
}
