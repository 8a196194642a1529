package flagval

// Warning is a setting that works but exposes something: it is logged once.
type Warning struct {
	Setting string
	// What is exposed; never a value.
	Reason string
}

// SecretFileWarning warns about a secret file readable by everyone or by a
// group not the process's own (a Kubernetes Secret with fsGroup and mode
// 0440). ok is false for a fine file or one that cannot be examined.
func SecretFileWarning(setting, path string) (Warning, bool) {
	if reason := exposedFile(path); reason != "" {
		return Warning{Setting: setting, Reason: reason}, true
	}
	return Warning{}, false
}
