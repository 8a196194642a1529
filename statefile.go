package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/alecthomas/kingpin/v2"

	"github.com/clouddb/clouddb_exporter/dataplane"
	"github.com/clouddb/clouddb_exporter/internal/safefile"
	"github.com/clouddb/clouddb_exporter/rightsizing"
)

// rightsizingSection is the state file's section holding the windows.
const rightsizingSection = "rightsizing"

// rightsizingSaveEvery: the windows change by the minute; at 10,000
// services they are some 2.8 MB to deflate (about 0.6 MB) and write.
const rightsizingSaveEvery = time.Minute

func addStateFileFlag(app *kingpin.Application, f *flags) {
	app.Flag("state.file", "File keeping the log positions and rightsizing windows across restarts.").
		Envar("CLOUDDB_STATE_FILE").StringVar(&f.stateFile)
}

// stateFilePath is --state.file, or the deprecated --collect.logs.state-file;
// deprecated says the old one was used.
func stateFilePath(f *flags) (path string, deprecated bool, err error) {
	old := dataplane.LogsStateFile(f.config.Collect)
	switch {
	case f.stateFile != "" && old != "" && old != f.stateFile:
		return "", false, errors.New("--state.file (CLOUDDB_STATE_FILE) and its deprecated name --collect.logs.state-file (CLOUDDB_COLLECT_LOGS_STATE_FILE) name different files: keep --state.file only")
	case f.stateFile != "":
		return f.stateFile, false, nil
	}
	return old, old != "", nil
}

// stateFlag names the flag the path came from, for its errors.
func stateFlag(deprecated bool) string {
	if deprecated {
		return "--collect.logs.state-file (CLOUDDB_COLLECT_LOGS_STATE_FILE)"
	}
	return "--state.file (CLOUDDB_STATE_FILE)"
}

func checkStateFile(f *flags) error {
	path, deprecated, err := stateFilePath(f)
	if err != nil || path == "" {
		return err
	}
	if err := dataplane.CheckLogPositions(path); err != nil {
		return fmt.Errorf("%s: %w", stateFlag(deprecated), err)
	}
	return nil
}

// openStateFile opens the state file (nil without one, which the readers
// and closeStateFile accept) and reads the rightsizing windows back.
func openStateFile(ctx context.Context, f *flags, sizing *rightsizing.Tracker, logger *slog.Logger, health *safefile.Health) (*dataplane.LogPositions, error) {
	path, deprecated, err := stateFilePath(f)
	if err != nil || path == "" {
		return nil, err
	}
	if deprecated {
		logger.Warn("Deprecated flag", "flag", "--collect.logs.state-file", "use", "--state.file")
	}
	p, err := dataplane.OpenLogPositions(path, logger, health)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", stateFlag(deprecated), err)
	}
	if b := p.Section(rightsizingSection); b != nil {
		if err := sizing.UnmarshalBinary(b); err != nil {
			logger.Warn("Rightsizing windows of the state file not read: they fill again from now", "file", path, "reason", err)
		} else {
			logger.Info("Rightsizing windows read from the state file", "file", path, "services", sizing.Len())
		}
	}
	go p.Run(ctx)
	go saveRightsizing(ctx, p, sizing)
	return p, nil
}

func saveRightsizing(ctx context.Context, p *dataplane.LogPositions, sizing *rightsizing.Tracker) {
	t := time.NewTicker(rightsizingSaveEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			b, _ := sizing.MarshalBinary()
			p.SaveSection(rightsizingSection, b)
		}
	}
}

// closeStateFile saves the windows a last time and writes the file; call
// it once the readers have stopped.
func closeStateFile(p *dataplane.LogPositions, sizing *rightsizing.Tracker) {
	if p == nil {
		return
	}
	b, _ := sizing.MarshalBinary()
	p.SaveSection(rightsizingSection, b)
	p.Close()
}
