// Package exposition is the /metrics handler: it renders the resource
// metrics that the collector package defines from the latest fleet
// snapshots, once per change, and serves them with the exporter's
// self-metrics. Scrapes never call the API and rarely render.
//
//   - Handler.SetSnapshot only records a project's snapshot; the first
//     scrape after it renders, in the format that scrape asks for (text or
//     OpenMetrics), the chunks of resources that changed (chunks.go,
//     render.go), by running the collector's groups into
//     collector.Samples and writing the samples as exposition lines
//     (lines.go). Only compressed pieces are kept (gzip.go, crc.go); a
//     client that does not accept gzip gets them inflated as they are
//     written.
//   - Each scrape writes the pieces followed by the self-metrics (self.go):
//     the apimetrics.Metrics from an encoding kept until they change, the
//     build, Go and process metrics gathered on a schedule.
//
// Wiring, in main:
//
//	reg := prometheus.NewRegistry() // build info, Go and process collectors
//	api := apimetrics.New(nil)
//	expo := exposition.New(exposition.SelfGatherer(api, reg), logger)
//	// per project: apiclient.Config{Observer: api.Observer(projectID), ...}
//	// after each poll: expo.SetSnapshot(snapshot)
//	// on reload, for a dropped project: expo.RemoveProject(id); api.RemoveProject(id)
//	defer expo.Close() // stops the scheduled gathering of Go/process metrics
//	mux.Handle("GET /metrics", expo)
//
// New(reg, logger) with apimetrics.New(reg) serves the same, but
// gathers and encodes the API, Go and process metrics on every scrape.
package exposition
