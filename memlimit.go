package main

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/alecthomas/kingpin/v2"

	"github.com/clouddb/clouddb_exporter/internal/flagval"
)

// Prometheus's --auto-gomemlimit.ratio: the rest is for what the Go limit
// does not count (stacks outside the heap, the binary) and for catching up.
const defaultMemLimitRatio = 0.9

// Prometheus's default since 2.53: a heap goal of 1.75 times the live heap
// (Go's 2), measured here as about 15 MB less peak memory at 10,000
// services for 1-2% more CPU (docs/operations.md).
const defaultGOGC = 75

// docs/operations.md.
type memLimitFlags struct {
	auto  bool
	ratio float64
	gogc  int
}

func addMemLimitFlags(app *kingpin.Application) *memLimitFlags {
	f := &memLimitFlags{}
	app.Flag("runtime.gomemlimit", "Set the Go memory limit from the cgroup's when GOMEMLIMIT is unset.").
		Default("true").Envar("CLOUDDB_RUNTIME_GOMEMLIMIT").BoolVar(&f.auto)
	flagval.Float(app, "runtime.gomemlimit.ratio", "Share of the cgroup's memory limit to set as Go's, in (0, 1].",
		fmt.Sprint(defaultMemLimitRatio), "CLOUDDB_RUNTIME_GOMEMLIMIT_RATIO", &f.ratio)
	flagval.Int(app, "runtime.gogc", "Go's garbage collection target percentage when GOGC is unset.",
		fmt.Sprint(defaultGOGC), "CLOUDDB_RUNTIME_GOGC", &f.gogc)
	return f
}

func (f *memLimitFlags) check() error {
	if f.ratio <= 0 || f.ratio > 1 {
		return fmt.Errorf("--runtime.gomemlimit.ratio (CLOUDDB_RUNTIME_GOMEMLIMIT_RATIO) must be in (0, 1], got %g", f.ratio)
	}
	if f.gogc <= 0 {
		return fmt.Errorf("--runtime.gogc (CLOUDDB_RUNTIME_GOGC) must be a percentage above 0 (Go's default is 100), got %d", f.gogc)
	}
	return nil
}

// setGCPercent sets --runtime.gogc unless GOGC is set, which Go has applied.
func setGCPercent(logger *slog.Logger, f *memLimitFlags, getenv func(string) string, set func(int) int) {
	if env := getenv("GOGC"); env != "" {
		logger.Info("Go garbage collection target from GOGC", "GOGC", env)
		return
	}
	set(f.gogc)
	logger.Info("Go garbage collection target set", "gogc", f.gogc)
}

// setMemoryLimit returns the limit set from the cgroup's, 0 for none.
func setMemoryLimit(logger *slog.Logger, f *memLimitFlags, getenv func(string) string, cgroupLimit func() (uint64, error), set func(int64) int64) int64 {
	if env := getenv("GOMEMLIMIT"); env != "" {
		logger.Info("Go memory limit from GOMEMLIMIT", "GOMEMLIMIT", env)
		return 0
	}
	if !f.auto {
		logger.Info("Go memory limit not set: --no-runtime.gomemlimit and no GOMEMLIMIT")
		return 0
	}
	limit, err := cgroupLimit()
	if err != nil {
		if errors.Is(err, memlimit.ErrNoLimit) {
			logger.Info("Go memory limit not set: the cgroup has no memory limit")
		} else {
			logger.Info("Go memory limit not set: no cgroup memory limit found", "err", err)
		}
		return 0
	}
	goLimit := int64(float64(limit) * f.ratio)
	if goLimit <= 0 {
		return 0
	}
	set(goLimit)
	logger.Info("Go memory limit set from the cgroup memory limit", "gomemlimit_bytes", goLimit, "cgroup_limit_bytes", limit, "ratio", f.ratio)
	return goLimit
}

func setRuntimeLimits(logger *slog.Logger, f *memLimitFlags, getenv func(string) string) {
	setGCPercent(logger, f, getenv, debug.SetGCPercent)
	setMemoryLimit(logger, f, getenv, memlimit.FromCgroup, debug.SetMemoryLimit)
}
