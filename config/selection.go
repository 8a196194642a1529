package config

import (
	"fmt"
	"regexp"
	"slices"

	"github.com/alecthomas/kingpin/v2"
)

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

// addSelectionFlags registers --collect.<name>.environment and
// --collect.<name>.service-name-regex; verb says what the collector does
// with a selected service ("Read the usage of").
func addSelectionFlags(app *kingpin.Application, name, envar, verb string, s *Selection) {
	app.Flag("collect."+name+".environment", verb+" services of this environment only (PROD or DEV; repeatable; default: every environment).").
		Envar("CLOUDDB_COLLECT_" + envar + "_ENVIRONMENT").StringsVar(&s.Environments)
	app.Flag("collect."+name+".service-name-regex", verb+" services whose name matches this regular expression only (anchored; default: every service).").
		Envar("CLOUDDB_COLLECT_" + envar + "_SERVICE_NAME_REGEX").StringVar(&s.ServiceNameRegex)
}

// validate checks the selection; where names a setting's origin and key
// prefixes its settings' names ("usage" for usage_environments).
func (s Selection) validate(where func(string) string, key string) []error {
	var errs []error
	for _, env := range s.Environments {
		if !slices.Contains(Environments, env) {
			// A misspelt environment would select nothing, silently.
			errs = append(errs, fmt.Errorf("%s: %q is not an environment (PROD or DEV)", where(key+"_environment"), env))
		}
	}
	// The pattern as given first, so that the error quotes the user's text.
	if _, err := regexp.Compile(s.ServiceNameRegex); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", where(key+"_service_name_regex"), err))
	} else if _, err := regexp.Compile(anchored(s.ServiceNameRegex)); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", where(key+"_service_name_regex"), err))
	}
	return errs
}

// NameMatcher returns the anchored service name regular expression; nil
// when every name is selected. The pattern was checked by the
// configuration.
func (s Selection) NameMatcher() *regexp.Regexp {
	if s.ServiceNameRegex == "" {
		return nil
	}
	return regexp.MustCompile(anchored(s.ServiceNameRegex))
}

func anchored(pattern string) string { return "^(?:" + pattern + ")$" }
