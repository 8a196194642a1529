// The Grafana dashboards, one file each.
(import 'fleet-overview.libsonnet') +
(import 'service-detail.libsonnet') +
(import 'exporter-health.libsonnet')
