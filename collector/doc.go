// Package collector turns fleet snapshots into Prometheus metrics and serves
// them. Data flows one way, API -> snapshot -> exposition; scrapes never
// call the API.
//
//   - FleetCollector is a prometheus.Collector that emits the resource
//     metrics (clouddb_service_*, clouddb_replica_set_*, clouddb_vpc_*,
//     clouddb_api_key_*, clouddb_exporter_collector_*) of a set of
//     snapshots as const metrics.
//   - Exposition is the /metrics handler. SetSnapshot only records a
//     project's snapshot; the first scrape after it renders, in the form
//     that scrape asks for (text or OpenMetrics, plain or gzip), the chunks
//     of resources that changed (chunks.go, render.go), by running the FleetCollector's
//     collect functions with a sink that writes exposition lines (sink.go).
//     Gzip forms keep compressed pieces only (gzip.go, crc.go). Each scrape
//     writes the pieces followed by the self-metrics (self.go).
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
//	defer expo.Close() // stops the scheduled gathering of Go/process metrics
//	mux.Handle("GET /metrics", expo)
//
// NewAPIMetrics(reg) with NewExposition(reg, logger) serves the same, but
// gathers and encodes the API, Go and process metrics on every scrape.
package collector
