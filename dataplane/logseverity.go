package dataplane

import (
	"slices"
	"strings"
)

// numSeverities is logSeverities and SeverityOther.
const numSeverities = 14

// severityNames holds every severity counted, by index: logSeverities'
// order, then SeverityOther.
var severityNames = append(slices.Clone(logSeverities), SeverityOther)

// severitiesByName holds the indexes of severityNames in the order the
// counts are published.
var severitiesByName = func() []int {
	out := make([]int, len(severityNames))
	for i := range out {
		out[i] = i
	}
	slices.SortFunc(out, func(a, b int) int { return strings.Compare(severityNames[a], severityNames[b]) })
	return out
}()

// severityIndex returns the index of a severity severityOf returned.
func severityIndex(sev string) int {
	if i := slices.Index(logSeverities, sev); i >= 0 {
		return i
	}
	return len(logSeverities)
}

// sevCounts holds a count for each severity that has one: an array and a
// bit a severity in each cursor, where two maps by name took some 600
// bytes a service.
type sevCounts struct {
	n   [numSeverities]float64
	has uint16
}

func (c *sevCounts) present(i int) bool { return c.has&(1<<i) != 0 }

func (c *sevCounts) set(i int, n float64) {
	c.n[i] = n
	c.has |= 1 << i
}
