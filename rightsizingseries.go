package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/dataplane"
)

// checkRightsizingSeries refuses a usage series selection that leaves out
// the primary's CPU or memory use while rightsizing is on: every finding
// would stay insufficient_data forever, and nothing would say why. projects
// are a file's or the flags' (nil: the demo's or discovery's, which take
// the flags' settings); under --simulate getenv picks the demo's defaults
// (nil on a reload, which re-checks a file's projects only).
func checkRightsizingSeries(f *flags, projects []config.Project, getenv func(string) string) error {
	if !f.rightsizing.enabled {
		return nil
	}
	var errs []error
	leftOut := func(where string, c config.Collect) {
		missing := dataplane.UsageSeriesLeftOut(c, apiclient.SeriesCPUUsage, apiclient.SeriesMemoryUsage)
		if len(missing) == 0 {
			return
		}
		errs = append(errs, fmt.Errorf("%s leaves out %s, which rightsizing (on with --collect.usage) reads: the findings would stay insufficient_data; "+
			"add %s to the series read, or turn rightsizing off with --no-rightsizing (CLOUDDB_RIGHTSIZING=false)",
			where, strings.Join(missing, ", "), strings.Join(missing, " and ")))
	}
	if f.config.ConfigFile != "" {
		for i, p := range projects {
			leftOut(fmt.Sprintf("--config.file: projects[%d].collect.usage.series", i), p.Collect)
		}
		return errors.Join(errs...)
	}
	_, collect := f.config.Defaults()
	if f.simulate && getenv != nil {
		_, collect = f.config.DemoDefaults(getenv)
	}
	leftOut("--collect.usage.series (CLOUDDB_COLLECT_USAGE_SERIES)", collect)
	return errors.Join(errs...)
}
