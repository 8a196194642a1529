// Package exposition is the /metrics handler: it renders the collector's
// metrics from the latest snapshots once per change, keeps only gzip pieces,
// and appends the exporter's self-metrics to each scrape.
package exposition
