package main

import (
	"github.com/alecthomas/kingpin/v2"

	"github.com/clouddb/clouddb_exporter/internal/flagval"
)

// envarOf is the environment variable of a flag: CLOUDDB_ and the flag's
// name upper-cased, dots and dashes as underscores. Every flag a user can
// see has it (envars_test.go), so a variable guessed from a flag's name is
// never silently ignored.
func envarOf(flag string) string { return flagval.Envar(flag) }

// toolkitFlags are declared by exporter-toolkit's kingpinflag.AddFlags,
// which gives them no variable; web.systemd-socket exists on Linux only.
var toolkitFlags = []string{"web.listen-address", "web.config.file", "web.systemd-socket"}

func addToolkitEnvars(app *kingpin.Application) {
	for _, name := range toolkitFlags {
		if fl := app.GetFlag(name); fl != nil {
			fl.Envar(envarOf(name))
		}
	}
}

// deprecatedEnvar is a variable that set a flag before the variables were
// derived from the flags' names; it is still read when the new one is unset.
type deprecatedEnvar struct{ flag, old string }

var deprecatedEnvars = []deprecatedEnvar{
	{"api.project-id", "CLOUDDB_PROJECT_ID"},
	{"api.access-key-file", "CLOUDDB_ACCESS_KEY_FILE"},
	{"api.secret-key-file", "CLOUDDB_SECRET_KEY_FILE"},
}

// applyDeprecatedEnvars makes each deprecated variable that is set the
// default of its flag when the flag's own variable is unset: kingpin binds
// one variable to a flag, and as a default it still gives way to the flag
// on the command line. It returns the deprecated variables set, to be
// warned about.
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
