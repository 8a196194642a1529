// The clouddb_exporter monitoring mixin: alerting rules, recording rules
// and Grafana dashboards, configured by _config (config.libsonnet).
// alerts/clouddb.rules.yml and dashboards/*.json in this repository are its
// built output with the default configuration (see mixin/README.md).
(import 'config.libsonnet') +
(import 'alerts/alerts.libsonnet') +
(import 'rules/rules.libsonnet') +
(import 'dashboards/dashboards.libsonnet')
