package main

import (
	"github.com/alecthomas/kingpin/v2"

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
