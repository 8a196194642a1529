// Package logging builds the exporter's *slog.Logger: tint for people at a
// terminal, logfmt or JSON (promslog) for machines.
package logging

import (
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/lmittmann/tint"
	"github.com/prometheus/common/promslog"
	promslogflag "github.com/prometheus/common/promslog/flag"

	"github.com/clouddb/clouddb_exporter/internal/flagval"
)

// Log formats accepted by --log.format.
const (
	FormatAuto    = "auto"
	FormatConsole = "console"
	FormatLogfmt  = "logfmt"
	FormatJSON    = "json"
)

// Formats lists the accepted --log.format values.
var Formats = []string{FormatAuto, FormatConsole, FormatLogfmt, FormatJSON}

// Config is what the log flags set.
type Config struct {
	Level  *promslog.Level
	Format string
}

// AddFlags registers the log flags itself, so the console and auto formats can be offered.
func AddFlags(app *kingpin.Application) *Config {
	c := &Config{Level: promslog.NewLevel()}
	app.Flag(promslogflag.LevelFlagName, "Only log messages of this severity or above: debug, info, warn, error.").
		Default("info").Envar("CLOUDDB_LOG_LEVEL").SetValue(c.Level)
	flagval.Enum(app, promslogflag.FormatFlagName,
		"Log format: auto (console on a terminal), console, logfmt or json.",
		FormatAuto, "CLOUDDB_LOG_FORMAT", &c.Format, Formats...)
	return c
}

// New returns a logger writing to w; terminal picks the auto format and colour.
func New(w io.Writer, c *Config, terminal bool) (*slog.Logger, error) {
	level := c.Level
	if level == nil {
		level = promslog.NewLevel()
	}
	format := c.Format
	if format == FormatAuto || format == "" {
		format = FormatLogfmt
		if terminal {
			format = FormatConsole
		}
	}
	switch format {
	case FormatConsole:
		return slog.New(tint.NewTextHandler(w, &tint.Options{
			Level:      level,
			TimeFormat: time.TimeOnly,
			NoColor:    !terminal,
		})), nil
	case FormatLogfmt, FormatJSON:
		f := promslog.NewFormat()
		if err := f.Set(format); err != nil {
			return nil, err
		}
		return promslog.New(&promslog.Config{Level: level, Format: f, Writer: w}), nil
	default:
		return nil, fmt.Errorf("--log.format: unknown format %q, want one of %v", c.Format, Formats)
	}
}

// IsTerminal checks for a character device, without cgo or x/term.
func IsTerminal(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
