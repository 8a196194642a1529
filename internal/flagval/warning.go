package flagval

// Warning is a setting that works but exposes something: the exporter
// starts, and logs it once.
type Warning struct {
	// Setting names the flag or configuration key.
	Setting string
	// Reason says what is exposed; never a value.
	Reason string
}

// SecretFileWarning warns about a secret file that other users can read:
// readable by everyone, or by a group that is not the process's own (as
// a Kubernetes Secret mounted with fsGroup and mode 0440 is). ok is false
// for a file that is fine, or that cannot be examined (reading it reports
// that).
func SecretFileWarning(setting, path string) (Warning, bool) {
	if reason := exposedFile(path); reason != "" {
		return Warning{Setting: setting, Reason: reason}, true
	}
	return Warning{}, false
}
