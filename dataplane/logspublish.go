package dataplane

import (
	"slices"

	"github.com/clouddb/clouddb_exporter/fleet"
)

// logCounts runs every logsPublishEvery while a read goes on, so it makes
// the list at its size at once and sorts in one reused slice.
func logCounts(cursors map[string]*logCursor, sizeHint int) []fleet.LogCount {
	if len(cursors) == 0 {
		return nil
	}
	out := make([]fleet.LogCount, 0, sizeHint)
	ids := make([]string, 0, len(cursors))
	for id := range cursors {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		c := cursors[id]
		if c.service == nil {
			kept := id // Escapes only here, not each turn of the loop.
			c.service = &kept
		}
		for _, i := range severitiesByName {
			if c.counts.present(i) {
				out = append(out, fleet.SharedLogCount(c.service, &severityNames[i], c.counts.shown(i)))
			}
		}
	}
	return out
}
