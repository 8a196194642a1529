package config

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/internal/flagval"
)

// setting is a per-project setting described once: its flag, environment variable,
// file key and check come from here, and docs/configuration.md is tested against it.
type setting struct {
	flag string
	// key is the path under a file's project; "" when a project cannot override it.
	key   string
	help  string
	def   string
	field func(*API, *Collect) any
	check check
	demo  bool
}

// check returns what is wrong with v (field's pointer); each message follows the name.
type check func(p Project, v any) []string

var settings = []setting{
	{"api.timeout", "api.timeout", "Timeout of one API request attempt.", apiclient.DefaultTimeout.String(),
		func(a *API, _ *Collect) any { return &a.Timeout }, positive, false},
	{"api.rate-limit", "api.rate_limit", "API requests per second per project (client-side limit).", fmt.Sprint(apiclient.DefaultRateLimit),
		func(a *API, _ *Collect) any { return &a.RateLimit }, positive, false},
	{"api.rate-burst", "api.burst", "Burst of the client-side rate limit.", "5",
		func(a *API, _ *Collect) any { return &a.Burst }, nil, false},
	{"api.max-retries", "api.max_retries", "Retries of a failed read (network errors, 429, 5xx).", fmt.Sprint(apiclient.DefaultMaxRetries),
		func(a *API, _ *Collect) any { return &a.MaxRetries }, notNegative, false},
	{"api.retry-base-delay", "", "Base delay of the retries' exponential backoff.", apiclient.DefaultRetryBaseDelay.String(),
		func(a *API, _ *Collect) any { return &a.RetryBaseDelay }, nil, false},
	{"api.retry-max-delay", "", "Cap of one backoff delay.", apiclient.DefaultRetryMaxDelay.String(),
		func(a *API, _ *Collect) any { return &a.RetryMaxDelay }, nil, false},
	{"api.max-response-size", "", "Largest API answer read; a larger one fails its call.", "512MiB",
		func(a *API, _ *Collect) any { return &a.MaxResponseSize }, nil, false},
	{"api.max-value-size", "", "Largest single value (list element, token) of an API answer.", "1MiB",
		func(a *API, _ *Collect) any { return &a.MaxValueSize }, nil, false},
	{"collect.interval", "collect.interval", "Interval of full poll cycles (every list endpoint).", DefaultInterval.String(),
		func(_ *API, c *Collect) any { return &c.Interval }, positive, false},
	{"collect.transition-interval", "collect.transition_interval", "Interval at which resources in transition are followed.", DefaultTransitionInterval.String(),
		func(_ *API, c *Collect) any { return &c.TransitionInterval }, positive, false},
	{"collect.max-staleness", "collect.max_staleness", "Drop a resource's series once refreshing it failed this long (0: never).", DefaultMaxStaleness.String(),
		func(_ *API, c *Collect) any { return &c.MaxStaleness }, notNegative, false},
	{"collect.concurrency", "collect.concurrency", "API calls one project's poll cycle may have in flight.", fmt.Sprint(DefaultConcurrency),
		func(_ *API, c *Collect) any { return &c.Concurrency }, positive, false},
	{"collect.max-resources-per-list", "collect.max_resources_per_list", "Most resources kept from one list answer; a longer list fails its call.", fmt.Sprint(apiclient.DefaultMaxListLength),
		func(_ *API, c *Collect) any { return &c.MaxResourcesPerList }, notNegative, false},
}

func addSettingFlags(app *kingpin.Application, api *API, collect *Collect) {
	for _, s := range settings {
		envar := flagval.Envar(s.flag)
		switch v := s.field(api, collect).(type) {
		case *time.Duration:
			flagval.Duration(app, s.flag, s.help, s.def, envar, v)
		case *int:
			flagval.Int(app, s.flag, s.help, s.def, envar, v)
		case *int64:
			flagval.Bytes(app, s.flag, s.help, s.def, envar, v)
		case *float64:
			flagval.Float(app, s.flag, s.help, s.def, envar, v)
		case *bool:
			app.Flag(s.flag, s.help).Envar(envar).BoolVar(v)
		case *string:
			app.Flag(s.flag, s.help).Envar(envar).StringVar(v)
		case *[]string:
			app.Flag(s.flag, s.help).Envar(envar).StringsVar(v)
		default:
			panic(fmt.Sprintf("setting %s: no flag for %T", s.flag, v))
		}
	}
}

func checkSettings(p Project, where func(flag string) string) []error {
	var errs []error
	for _, s := range settings {
		if s.check == nil {
			continue
		}
		for _, msg := range s.check(p, s.field(&p.API, &p.Collect)) {
			errs = append(errs, fmt.Errorf("%s%s", where(s.flag), msg))
		}
	}
	return errs
}

// FileKey is a key of a file's project and the flag it overrides ("" when none).
type FileKey struct{ Key, Flag string }

// FileKeys lists the keys a configuration file's project takes.
func FileKeys() []FileKey {
	var out []FileKey
	for key := range yamlFields(fileProjectType) {
		if _, ok := fileSettings()[key]; !ok {
			out = append(out, FileKey{Key: key})
		}
	}
	for _, s := range settings {
		if s.key != "" {
			out = append(out, FileKey{Key: s.key, Flag: s.flag})
		}
	}
	return out
}

func number(v any) float64 {
	switch v := v.(type) {
	case *int:
		return float64(*v)
	case *float64:
		return *v
	case *time.Duration:
		return float64(*v)
	}
	panic(fmt.Sprintf("not a number: %T", v))
}

func positive(_ Project, v any) []string {
	if number(v) <= 0 {
		return []string{" must be positive"}
	}
	return nil
}

// notNegative says "positive" too: its messages predate 0 being allowed.
func notNegative(_ Project, v any) []string {
	if number(v) < 0 {
		return []string{" must be positive"}
	}
	return nil
}

func atLeastDataInterval(least time.Duration) check {
	return func(p Project, v any) []string {
		if floor := cmp.Or(p.Collect.minDataInterval, least); *v.(*time.Duration) < floor {
			return []string{" must be at least " + floor.String()}
		}
		return nil
	}
}

func environments(_ Project, v any) []string {
	var out []string
	for _, env := range *v.(*[]string) {
		if !slices.Contains(Environments, env) {
			// A misspelt environment would select nothing, silently.
			out = append(out, fmt.Sprintf(": %q is not an environment (PROD or DEV)", env))
		}
	}
	return out
}

func nameRegex(_ Project, v any) []string {
	pattern := *v.(*string)
	// The pattern as given first, so that the error quotes the user's text.
	if _, err := regexp.Compile(pattern); err != nil {
		return []string{": " + err.Error()}
	}
	if _, err := regexp.Compile(anchored(pattern)); err != nil {
		return []string{": " + err.Error()}
	}
	return nil
}
