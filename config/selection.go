package config

import "regexp"

// Environments are the values of a service's metadata.environment.
var Environments = []string{"PROD", "DEV"}

// Selection picks the services an opt-in collector reads; the zero value selects all.
type Selection struct {
	Environments     []string
	ServiceNameRegex string
}

// NameMatcher returns the anchored pattern (already checked), nil for every name.
func (s Selection) NameMatcher() *regexp.Regexp {
	if s.ServiceNameRegex == "" {
		return nil
	}
	return regexp.MustCompile(anchored(s.ServiceNameRegex))
}

func anchored(pattern string) string { return "^(?:" + pattern + ")$" }
