package dataplane

const numSeverities = len(LogSeverities)

// severityIndex takes a severity severityOf returned.
func severityIndex(sev string) int {
	if i := LogSeverityIndex(sev); i >= 0 {
		return i
	}
	return LogSeverityIndex(SeverityOther)
}
