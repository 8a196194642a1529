// Package flagval registers kingpin flags whose parse errors name the flag
// and its environment variable, which kingpin's own values do not.
package flagval

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/alecthomas/units"
)

type value[T any] struct {
	name  string
	dst   *T
	parse func(string) (T, error)
}

func (v *value[T]) Set(s string) error {
	parsed, err := v.parse(s)
	if err != nil {
		return fmt.Errorf("%s: %w", v.name, err)
	}
	*v.dst = parsed
	return nil
}

func (v *value[T]) String() string { return fmt.Sprint(*v.dst) }

func register[T any](clause *kingpin.FlagClause, name, envar string, dst *T, parse func(string) (T, error)) {
	label := "--" + name
	if envar != "" {
		label += " ($" + envar + ")"
		clause = clause.Envar(envar)
	}
	clause.SetValue(&value[T]{name: label, dst: dst, parse: parse})
}

// Duration registers a duration flag.
func Duration(app *kingpin.Application, name, help, def, envar string, dst *time.Duration) {
	register(app.Flag(name, help).Default(def), name, envar, dst, func(s string) (time.Duration, error) {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration (e.g. 30s, 5m)", s)
		}
		return d, nil
	})
}

// Int registers an integer flag.
func Int(app *kingpin.Application, name, help, def, envar string, dst *int) {
	register(app.Flag(name, help).Default(def), name, envar, dst, func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err != nil {
			return 0, fmt.Errorf("%q is not an integer", s)
		}
		return n, nil
	})
}

// Bytes registers a size flag; KB, MB and GB are read as powers of 2 too.
func Bytes(app *kingpin.Application, name, help, def, envar string, dst *int64) {
	register(app.Flag(name, help).Default(def), name, envar, dst, func(s string) (int64, error) {
		n, err := units.ParseBase2Bytes(s)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("%q is not a positive size (e.g. 32MiB)", s)
		}
		return int64(n), nil
	})
}

// Float registers a floating-point flag.
func Float(app *kingpin.Application, name, help, def, envar string, dst *float64) {
	register(app.Flag(name, help).Default(def), name, envar, dst, func(s string) (float64, error) {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number", s)
		}
		return f, nil
	})
}

// Enum registers a flag that takes one of options.
func Enum(app *kingpin.Application, name, help, def, envar string, dst *string, options ...string) {
	register(app.Flag(name, help).Default(def), name, envar, dst, func(s string) (string, error) {
		if !slices.Contains(options, s) {
			return "", fmt.Errorf("%q is not one of %s", s, strings.Join(options, ", "))
		}
		return s, nil
	})
}

// Envar is CLOUDDB_ and the upper-cased flag name, dots and dashes as underscores.
func Envar(flag string) string {
	return "CLOUDDB_" + strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(flag))
}
