package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/alecthomas/kingpin/v2"

	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/internal/flagval"
)

// Every visible flag has a variable (envars_test.go), so a variable guessed
// from a flag's name is never silently ignored.
func envarOf(flag string) string { return flagval.Envar(flag) }

// kingpinflag.AddFlags gives these no variable; web.systemd-socket is Linux only.
var toolkitFlags = []string{"web.listen-address", "web.config.file", "web.systemd-socket"}

func addToolkitEnvars(app *kingpin.Application) {
	for _, name := range toolkitFlags {
		if fl := app.GetFlag(name); fl != nil {
			fl.Envar(envarOf(name))
		}
	}
}

// deprecatedEnvar is a variable named before variables came from flag names.
type deprecatedEnvar struct{ flag, old string }

var deprecatedEnvars = []deprecatedEnvar{
	{"api.project-id", "CLOUDDB_PROJECT_ID"},
	{"api.access-key-file", "CLOUDDB_ACCESS_KEY_FILE"},
	{"api.secret-key-file", "CLOUDDB_SECRET_KEY_FILE"},
}

// applyDeprecatedEnvars makes an old variable its flag's default, as kingpin
// binds one variable per flag and the command line still wins.
func applyDeprecatedEnvars(app *kingpin.Application, getenv func(string) string) []deprecatedEnvar {
	var used []deprecatedEnvar
	for _, d := range deprecatedEnvars {
		v := getenv(d.old)
		if v == "" {
			continue
		}
		used = append(used, d)
		if getenv(envarOf(d.flag)) == "" {
			app.GetFlag(d.flag).Default(v)
		}
	}
	return used
}

// boolArgs rewrites --flag=true and --flag=false of the boolean flags, which
// kingpin refuses with a bare "unexpected true", to --flag and --no-flag;
// any other value, on the command line or in the flag's variable, is an
// error naming the flag and the variable (kingpin's names neither).
func boolArgs(app *kingpin.Application, args []string, getenv func(string) string) ([]string, error) {
	bools := map[string]*kingpin.FlagModel{}
	for _, fl := range app.Model().Flags {
		if !fl.IsBoolFlag() {
			continue
		}
		bools[fl.Name] = fl
		if v := getenv(fl.Envar); fl.Envar != "" && v != "" {
			if _, err := strconv.ParseBool(v); err != nil {
				return nil, fmt.Errorf("%s=%s: --%s (%s) is true or false, not %q", fl.Envar, v, fl.Name, fl.Envar, v)
			}
		}
	}
	out := make([]string, 0, len(args))
	for i, a := range args {
		if a == "--" {
			return append(out, args[i:]...), nil
		}
		name, value, hasValue := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		negated := false
		if n, ok := strings.CutPrefix(name, "no-"); ok && bools[name] == nil {
			name, negated = n, true
		}
		fl := bools[name]
		if !strings.HasPrefix(a, "--") || !hasValue || fl == nil {
			out = append(out, a)
			continue
		}
		b, err := strconv.ParseBool(value)
		if err != nil {
			where := "--" + name
			if fl.Envar != "" {
				where += " (" + fl.Envar + ")"
			}
			return nil, fmt.Errorf("%s: %s is true or false, not %q: write --%s or --no-%s", a, where, value, name, name)
		}
		if b != negated {
			out = append(out, "--"+name)
		} else {
			out = append(out, "--no-"+name)
		}
	}
	return out, nil
}

// readEnv is getenv that remembers the names looked up, so that the
// variables a configuration file names (access_key_env) count as used.
type readEnv struct {
	getenv func(string) string
	read   map[string]bool
}

func (r *readEnv) get(name string) string {
	r.read[name] = true
	return r.getenv(name)
}

// unknownEnvar is a CLOUDDB_ variable that sets nothing, with the name it
// is nearest to.
type unknownEnvar struct{ name, nearest string }

// unknownEnvars returns the CLOUDDB_ variables of environ that are neither
// a flag's, nor deprecated, nor looked up (read) during the start's checks:
// most likely a misspelt name, which would otherwise be silently ignored.
func unknownEnvars(app *kingpin.Application, environ []string, read map[string]bool) []unknownEnvar {
	// known are offered as the nearest name; a hidden flag's variable is
	// accepted, never offered.
	known := []string{config.EnvAccessKey, config.EnvSecretKey, config.EnvAPIKey}
	hidden := map[string]bool{}
	for _, fl := range app.Model().Flags {
		switch {
		case fl.Envar == "":
		case fl.Hidden:
			hidden[fl.Envar] = true
		default:
			known = append(known, fl.Envar)
		}
	}
	for _, d := range deprecatedEnvars {
		known = append(known, d.old)
	}
	var out []unknownEnvar
	for _, kv := range environ {
		name, value, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "CLOUDDB_") || value == "" || read[name] || hidden[name] || slices.Contains(known, name) {
			continue
		}
		out = append(out, unknownEnvar{name, nearest(name, known)})
	}
	return out
}

// nearest is the candidate with the fewest edits from name.
func nearest(name string, candidates []string) string {
	best, bestDistance := "", -1
	for _, c := range candidates {
		if d := config.EditDistance(name, c); bestDistance < 0 || d < bestDistance {
			best, bestDistance = c, d
		}
	}
	return best
}
