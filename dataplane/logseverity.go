package dataplane

import (
	"slices"
	"strings"
)

const numSeverities = 14

var severityNames = append(slices.Clone(logSeverities), SeverityOther)

// severitiesByName is the order the counts are published in.
var severitiesByName = func() []int {
	out := make([]int, len(severityNames))
	for i := range out {
		out[i] = i
	}
	slices.SortFunc(out, func(a, b int) int { return strings.Compare(severityNames[a], severityNames[b]) })
	return out
}()

func severityIndex(sev string) int {
	if i := slices.Index(logSeverities, sev); i >= 0 {
		return i
	}
	return len(logSeverities)
}

// sevCounts is an array and a bit a severity: two maps by name were larger.
type sevCounts struct {
	n   [numSeverities]float64
	has uint16
	// fresh severities, first seen since the last tick, are published at 0
	// first, so that increase() sees their first entries: a bit each, not
	// a second array of counts.
	fresh uint16
}

// shown is the count published.
func (c *sevCounts) shown(i int) float64 {
	if c.fresh&(1<<i) != 0 {
		return 0
	}
	return c.n[i]
}

func (c *sevCounts) present(i int) bool { return c.has&(1<<i) != 0 }

func (c *sevCounts) set(i int, n float64) {
	c.n[i] = n
	c.has |= 1 << i
}
