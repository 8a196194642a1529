package config

import "regexp"

// Environments are the values of a service's metadata.environment.
var Environments = []string{"PROD", "DEV"}

// Selection picks the services an opt-in collector (usage, logs) reads:
// by environment and by name. The zero value selects every service.
type Selection struct {
	// Environments selects services by metadata.environment; empty means
	// every environment.
	Environments []string
	// ServiceNameRegex selects services by name (anchored); "" selects
	// every name.
	ServiceNameRegex string
}

// NameMatcher returns the anchored pattern, nil when every name is
// selected. The configuration checked the pattern.
func (s Selection) NameMatcher() *regexp.Regexp {
	if s.ServiceNameRegex == "" {
		return nil
	}
	return regexp.MustCompile(anchored(s.ServiceNameRegex))
}

func anchored(pattern string) string { return "^(?:" + pattern + ")$" }
