// Package collector turns fleet snapshots into Prometheus metrics and serves
// them. Data flows one way, API -> snapshot -> exposition; scrapes never
// call the API.
//
//   - FleetCollector is a prometheus.Collector that emits the resource
//     metrics (clouddb_service_*, clouddb_replica_set_*, clouddb_vpc_*,
//     clouddb_api_key_*, clouddb_exporter_collector_*) of a set of
//     snapshots as const metrics.
//   - Exposition is the /metrics handler. It renders a project's snapshot
//     once per change, in the Prometheus text format and OpenMetrics, by
//     running the FleetCollector's collect functions with a sink that
//     writes exposition lines (sink.go), and on each scrape writes the
//     cached bytes (gzip included) followed by the live self-metrics.
//   - APIMetrics is the API client's Observer: request, duration, retry and
//     rate-limit metrics per project and operation.
//
// Wiring, in main:
//
//	reg := prometheus.NewRegistry() // build info, Go and process collectors
//	api := collector.NewAPIMetrics(nil)
//	expo := collector.NewExposition(collector.SelfGatherer(api, reg), logger)
//	// per project: apiclient.Config{Observer: api.Observer(projectID), ...}
//	// after each poll: expo.SetSnapshot(snapshot)
//	// on reload, for a dropped project: expo.RemoveProject(id); api.RemoveProject(id)
//	mux.Handle("GET /metrics", expo)
//
// NewAPIMetrics(reg) with NewExposition(reg, logger) serves the same, but
// gathers and encodes the API metrics on every scrape.
package collector
