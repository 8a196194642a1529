package dataplane

import "github.com/clouddb/clouddb_exporter/fleet"

const numSeverities = len(fleet.LogSeverities)

// severityIndex takes a severity severityOf returned.
func severityIndex(sev string) int {
	if i := fleet.LogSeverityIndex(sev); i >= 0 {
		return i
	}
	return fleet.LogSeverityIndex(SeverityOther)
}
