package main

import (
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/common/model"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/dataplane"
	"github.com/clouddb/clouddb_exporter/pricing"
	"github.com/clouddb/clouddb_exporter/rightsizing"
)

// The demo prices its fleet with the example file the repository ships.
//
//go:embed deploy/pricing.example.yml
var examplePrices []byte

// rightsizingFlags are read as given and checked by rightsizingConfig, so
// that an error names the flag.
type rightsizingFlags struct {
	window, headroom, minCoverage, sizes string
	windowSet                            bool
	// enabled: --rightsizing, on unless --no-rightsizing.
	enabled bool
}

// demoWindow is --simulate's --rightsizing.window unless one is given: the
// first usage read backfills it (an hour at most), so the demo shows
// findings at once. Not shorter: the simulator loses one bucket in thirty,
// some minutes in a row at times, and six of a half hour's 26 minutes
// counted is insufficient data.
const demoWindow = "1h"

func addPricingFlags(app *kingpin.Application, f *flags) {
	app.Flag("pricing.file", "YAML price table to estimate each service's cost per hour from.").
		Envar("CLOUDDB_PRICING_FILE").StringVar(&f.pricingFile)
	app.Flag("rightsizing", "Recommend a size for each service from its CPU and memory use.").
		Default("true").Envar("CLOUDDB_RIGHTSIZING").BoolVar(&f.rightsizing.enabled)
	app.Flag("rightsizing.window", "How far back the size recommendation looks at CPU and memory use.").
		Default("14d").Envar("CLOUDDB_RIGHTSIZING_WINDOW").IsSetByUser(&f.rightsizing.windowSet).StringVar(&f.rightsizing.window)
	app.Flag("rightsizing.headroom", "Headroom of the size recommendation over the CPU and memory need.").
		Default(strconv.FormatFloat(rightsizing.DefaultHeadroom, 'g', -1, 64)).Envar("CLOUDDB_RIGHTSIZING_HEADROOM").StringVar(&f.rightsizing.headroom)
	app.Flag("rightsizing.min-coverage", "Share of the window with usage read needed to recommend a size.").
		Default(strconv.FormatFloat(rightsizing.DefaultMinCoverage, 'g', -1, 64)).Envar("CLOUDDB_RIGHTSIZING_MIN_COVERAGE").StringVar(&f.rightsizing.minCoverage)
	app.Flag("rightsizing.sizes", "Sizes a service may be given, cpu_millis/memory_gbs, comma-separated.").
		Default(rightsizing.DefaultSizes).Envar("CLOUDDB_RIGHTSIZING_SIZES").StringVar(&f.rightsizing.sizes)
}

func rightsizingConfig(f *flags, getenv func(string) string) (rightsizing.Config, error) {
	var c rightsizing.Config
	if f.simulate && !f.rightsizing.windowSet && getenv("CLOUDDB_RIGHTSIZING_WINDOW") == "" {
		f.rightsizing.window = demoWindow
	}
	window, err := model.ParseDuration(f.rightsizing.window)
	if err != nil {
		return c, fmt.Errorf("--rightsizing.window (CLOUDDB_RIGHTSIZING_WINDOW): %q is not a duration (e.g. 14d, 36h)", f.rightsizing.window)
	}
	c.Window = time.Duration(window)
	for _, v := range []struct {
		flag, value string
		dst         *float64
	}{
		{"rightsizing.headroom", f.rightsizing.headroom, &c.Headroom},
		{"rightsizing.min-coverage", f.rightsizing.minCoverage, &c.MinCoverage},
	} {
		if *v.dst, err = strconv.ParseFloat(v.value, 64); err != nil {
			return c, fmt.Errorf("--%s (%s): %q is not a number", v.flag, envarOf(v.flag), v.value)
		}
	}
	if c.Sizes, err = rightsizing.ParseSizes(f.rightsizing.sizes); err != nil {
		return c, fmt.Errorf("--rightsizing.sizes (CLOUDDB_RIGHTSIZING_SIZES): %w", err)
	}
	return c, c.Check()
}

// rightsizingReadLag is the longest lag of the projects' usage reads
// (rightsizing.Config.ReadLag): those of a file, or the flags' (the demo's,
// a discovered project's).
func rightsizingReadLag(f *flags, projects []config.Project, getenv func(string) string) time.Duration {
	_, collect := f.config.Defaults()
	if f.simulate {
		_, collect = f.config.DemoDefaults(getenv)
	}
	lag := dataplane.UsageReadLag(collect)
	for _, p := range projects {
		lag = max(lag, dataplane.UsageReadLag(p.Collect))
	}
	return lag
}

// loadPrices returns the price table, nil when there is none.
func loadPrices(f *flags) (*pricing.Table, error) {
	switch {
	case f.pricingFile != "":
		return pricing.Load(f.pricingFile)
	case f.simulate:
		return pricing.Parse(examplePrices)
	}
	return nil, nil
}

// pricedLoad re-reads the price file on each load: a bad one fails the
// reload and the old prices stay, as a bad --config.file keeps the old
// projects.
func pricedLoad(load func() ([]config.Project, error), f *flags, est *pricing.Estimator) func() ([]config.Project, error) {
	return func() ([]config.Project, error) {
		table, err := loadPrices(f)
		if err != nil {
			return nil, err
		}
		projects, err := load()
		if err == nil {
			err = checkRightsizingSeries(f, projects, nil)
		}
		if err == nil {
			est.SetTable(table)
		}
		return projects, err
	}
}

// usageObserver feeds each project's usage reads to the rightsizing windows:
// the primary's CPU and memory, with a first read that backfills the window
// (at most the hour a read reaches back).
func usageObserver(t *rightsizing.Tracker, cfg rightsizing.Config, enabled bool) func(projectID string) *dataplane.UsageObserver {
	if !enabled {
		return nil
	}
	return func(projectID string) *dataplane.UsageObserver {
		return &dataplane.UsageObserver{
			Suffixes: []string{apiclient.SeriesCPUUsage, apiclient.SeriesMemoryUsage},
			Backfill: cfg.Window,
			Observe: func(serviceID, suffix string, series []apiclient.Series) {
				t.AddSeries(projectID, serviceID, suffix, series)
			},
		}
	}
}
