package flagval

// Warning is a setting that works but exposes something: it is logged once.
type Warning struct {
	Setting string
	// Reason says what is exposed, never a value.
	Reason string
}

// SecretFileWarning warns about a secret file readable by others than the
// process's own group. ok is false for a fine or unexaminable file.
func SecretFileWarning(setting, path string) (Warning, bool) {
	if reason := exposedFile(path); reason != "" {
		return Warning{Setting: setting, Reason: reason}, true
	}
	return Warning{}, false
}
