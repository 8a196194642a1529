package main

import (
	_ "embed"

	"github.com/alecthomas/kingpin/v2"

	"github.com/clouddb/clouddb_exporter/config"
	"github.com/clouddb/clouddb_exporter/pricing"
)

// The demo prices its fleet with the example file the repository ships.
//
//go:embed deploy/pricing.example.yml
var examplePrices []byte

func addPricingFlags(app *kingpin.Application, f *flags) {
	app.Flag("pricing.file", "YAML price table (currency, effective_date, compute by region and size, storage_gb_month by region, ha_replica, pooler) from which each service's cost per hour is estimated (clouddb_service_estimated_cost_per_hour); re-read on reload. Off when empty; --simulate uses the example file deploy/pricing.example.yml. See docs/cost.md.").
		Envar("CLOUDDB_PRICING_FILE").StringVar(&f.pricingFile)
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
			est.SetTable(table)
		}
		return projects, err
	}
}
