local g = import '../lib/grafana.libsonnet';
{
  local cfg = $._config,
  grafanaDashboards+:: {
    'exporter-health.json': g.dashboard(
      cfg,
      'exporter-health.json',
      'CloudDB / Exporter health',
      'The exporter itself: cloud API requests, errors, latency, retries and rate limiting, collector health and data age, admin operations, process.',
      [
        g.variable('job', 'Job', 'label_values(clouddb_exporter_build_info, job)'),
        g.variable('instance', 'Instance', 'label_values(clouddb_exporter_build_info{job=~"$job"}, instance)'),
        // All also matches the series without a project: the project
        // discovery's API calls.
        g.variable('project_id', 'Project', 'label_values(clouddb_exporter_snapshot_timestamp_seconds{job=~"$job", instance=~"$instance"}, project_id)') { allValue: '.*' },
      ] + (if cfg.adminPanels then [
             // The exporters whose admin surface is on: the admin row repeats
             // over them, so it is not there while no exporter has it on.
             g.hiddenVariable('admin_instance', 'label_values(clouddb_exporter_admin_allowed_operation_info{job=~"$job", instance=~"$instance"}, instance)'),
           ] else []),
      [
        g.row('Exporter', 0),
        g.stat(
          'Scrape',
          'Whether Prometheus could scrape each exporter (up is set by Prometheus, not by the exporter).',
          'short',
          g.pos(0, 1, 6, 4),
          [
            g.instant('up{job=~"$job", instance=~"$instance"}', '{{instance}}'),
          ]
        ) + g.mappings({ '0': ['down', 'red'], '1': ['up', 'green'] }),
        g.tablePanel(
          'Version',
          'Version and build of each exporter.',
          'short',
          g.pos(6, 1, 12, 4),
          [
            g.table('clouddb_exporter_build_info{job=~"$job", instance=~"$instance"}'),
          ]
        ),
        g.stat(
          'Configuration',
          'Whether the last load of --config.file succeeded (always ok without a file).',
          'short',
          g.pos(18, 1, 6, 4),
          [
            g.instant('clouddb_exporter_config_last_reload_successful{job=~"$job", instance=~"$instance"}', '{{instance}}'),
          ]
        ) + g.mappings({ '0': ['failing', 'red'], '1': ['ok', 'green'] }),
        g.row('Cloud API', 5),
        g.timeseries(
          'API requests by operation and code',
          "Request attempts per second to the cloud API, by operation and HTTP status; code 'error' is a transport error or timeout. Scrapes never call the API: this depends on the fleet and the poll intervals only.",
          'reqps',
          g.pos(0, 6, 12, 8),
          [
            g.range('sum by (operation, code) (rate(clouddb_exporter_api_requests_total{job=~"$job", instance=~"$instance", project_id=~"$project_id"}[$__rate_interval]))', '{{operation}} {{code}}'),
          ]
        ),
        g.timeseries(
          'API errors by operation and code',
          'Request attempts per second that did not succeed (any code but 2xx), by operation and code; 0 for an operation the exporter calls without errors, nothing while it is not scraped.',
          'reqps',
          g.pos(12, 6, 12, 8),
          [
            // The error series appear with the first error: an operation
            // without one is drawn as 0 from its successful calls.
            g.range('sum by (operation, code) (rate(clouddb_exporter_api_requests_total{job=~"$job", instance=~"$instance", project_id=~"$project_id", code!~"2.."}[$__rate_interval])) or on (operation) (0 * sum by (operation) (rate(clouddb_exporter_api_requests_total{job=~"$job", instance=~"$instance", project_id=~"$project_id"}[$__rate_interval])))', '{{operation}} {{code}}'),
          ]
        ),
        g.timeseries(
          'API error ratio',
          'Share of request attempts failing with 5xx, 401/403, a transport error or an answer that does not decode, per project: what CloudDBAPIErrors alerts on (red above its threshold). 0 while all is well, nothing while the exporter is not scraped.',
          'percentunit',
          g.pos(0, 14, 12, 8),
          [
            g.range('sum by (project_id) (rate(clouddb_exporter_api_requests_total{job=~"$job", instance=~"$instance", project_id=~"$project_id", code=~"5..|error|decode_error|401|403"}[$__rate_interval])) / sum by (project_id) (rate(clouddb_exporter_api_requests_total{job=~"$job", instance=~"$instance", project_id=~"$project_id"}[$__rate_interval])) or on (project_id) (0 * sum by (project_id) (rate(clouddb_exporter_api_requests_total{job=~"$job", instance=~"$instance", project_id=~"$project_id"}[$__rate_interval])))', '{{project_id}}'),
          ]
        ) + g.thresholdLine(cfg.apiErrorRatioThreshold),
        g.timeseries(
          'API latency',
          '99th and 50th percentile duration of request attempts by operation, from the clouddb_exporter_api_request_duration_seconds histogram.',
          's',
          g.pos(12, 14, 12, 8),
          [
            g.range('histogram_quantile(0.99, sum by (le, operation) (rate(clouddb_exporter_api_request_duration_seconds_bucket{job=~"$job", instance=~"$instance", project_id=~"$project_id"}[$__rate_interval])))', 'p99 {{operation}}'),
            g.range('histogram_quantile(0.5, sum by (le, operation) (rate(clouddb_exporter_api_request_duration_seconds_bucket{job=~"$job", instance=~"$instance", project_id=~"$project_id"}[$__rate_interval])))', 'p50 {{operation}}'),
          ]
        ),
        g.timeseries(
          'API retries',
          'Retried request attempts per second by operation (reads on 5xx, 429 and transport errors; any method on 429).',
          'ops',
          g.pos(0, 22, 12, 8),
          [
            g.range('sum by (operation) (rate(clouddb_exporter_api_retries_total{job=~"$job", instance=~"$instance", project_id=~"$project_id"}[$__rate_interval]))', '{{operation}}'),
          ]
        ),
        g.timeseries(
          'Rate-limit waits',
          'Share of time the API calls of each project spent waiting for the client-side rate limit (--api.rate-limit): near 100% means the limit, not the API, paces the polls.',
          'percentunit',
          g.pos(12, 22, 12, 8),
          [
            g.range('sum by (project_id) (rate(clouddb_exporter_api_rate_limit_wait_seconds_total{job=~"$job", instance=~"$instance", project_id=~"$project_id"}[$__rate_interval]))', '{{project_id}}'),
          ]
        ),
        g.row('Collection', 30),
        g.stateTimeline(
          'Collector success',
          "Whether each part's last attempt succeeded, per project and collector.",
          'short',
          g.pos(0, 31, 24, 7),
          [
            g.range('clouddb_exporter_collector_success{job=~"$job", instance=~"$instance", project_id=~"$project_id"}', '{{project_id}} {{collector}}'),
          ]
        ) + g.mappings({ '0': ['failing', 'red'], '1': ['ok', 'green'] }),
        g.timeseries(
          'Collector duration',
          "Duration of each part's last attempt (a cycle's list calls with their retries and rate-limit waits).",
          's',
          g.pos(0, 38, 6, 8),
          [
            g.range('clouddb_exporter_collector_duration_seconds{job=~"$job", instance=~"$instance", project_id=~"$project_id"}', '{{project_id}} {{collector}}'),
          ]
        ),
        g.timeseries(
          'Data age',
          "Time since each part's last complete success: the age of its data. CloudDBDataStale fires above the red line (%d seconds) after %s." % [cfg.dataStaleThresholdSeconds, cfg.dataStaleFor],
          's',
          g.pos(6, 38, 6, 8),
          [
            g.range('time() - clouddb_exporter_collector_last_success_timestamp_seconds{job=~"$job", instance=~"$instance", project_id=~"$project_id"}', '{{project_id}} {{collector}}'),
          ]
        ) + g.thresholdLine(cfg.dataStaleThresholdSeconds),
        g.timeseries(
          'Snapshot age',
          "Time since each project's newest data was read from the API (the end of its last successful call): it grows during an API outage.",
          's',
          g.pos(12, 38, 6, 8),
          [
            g.range('time() - clouddb_exporter_snapshot_timestamp_seconds{job=~"$job", instance=~"$instance", project_id=~"$project_id"}', '{{project_id}}'),
          ]
        ),
        g.timeseries(
          'Log reads truncated',
          "Reads of one service's new log entries that left some uncounted, per project: --collect.logs.max-pages reached, a page sent again, or an entry over --api.max-value-size. Above 0, the log counters and the log alerts undercount (CloudDBLogReadsTruncated). Nothing without --collect.logs.",
          'short',
          g.pos(18, 38, 6, 8),
          [
            g.range('sum by (project_id) (increase(clouddb_exporter_log_pages_truncated_total{job=~"$job", instance=~"$instance", project_id=~"$project_id"}[$__rate_interval]))', '{{project_id}}'),
          ]
        ),
      ] + (if cfg.adminPanels then [
             // One closed row per exporter whose admin surface is on
             // (--admin.listen-address): only those export the allowed
             // operations that $admin_instance lists, from their start.
             g.repeatedRow('Admin operations: $admin_instance', 46, 'admin_instance', [
               g.tablePanel(
                 'Allowed operations',
                 "The write operations this exporter's admin surface permits (--admin.allow), from clouddb_exporter_admin_allowed_operation_info.",
                 'short',
                 g.pos(0, 47, 6, 8),
                 [
                   g.table('clouddb_exporter_admin_allowed_operation_info{job=~"$job", instance=~"$admin_instance"}'),
                 ]
               ),
               g.timeseries(
                 'Admin requests by operation and code',
                 'Requests per second to the admin write surface (--admin.listen-address), by operation and HTTP status. Empty while the admin surface is unused.',
                 'reqps',
                 g.pos(6, 47, 6, 8),
                 [
                   g.range('sum by (operation, code) (rate(clouddb_exporter_admin_requests_total{job=~"$job", instance=~"$admin_instance"}[$__rate_interval]))', '{{operation}} {{code}}'),
                 ]
               ),
               g.timeseries(
                 'Admin operations by result',
                 'Admin operations per second by operation and result.',
                 'ops',
                 g.pos(12, 47, 6, 8),
                 [
                   g.range('sum by (operation, result) (rate(clouddb_exporter_admin_operation_duration_seconds_count{job=~"$job", instance=~"$admin_instance"}[$__rate_interval]))', '{{operation}} {{result}}'),
                 ]
               ),
               g.timeseries(
                 'Admin operation latency',
                 '99th percentile duration of admin operations by operation, from the clouddb_exporter_admin_operation_duration_seconds histogram.',
                 's',
                 g.pos(18, 47, 6, 8),
                 [
                   g.range('histogram_quantile(0.99, sum by (le, operation) (rate(clouddb_exporter_admin_operation_duration_seconds_bucket{job=~"$job", instance=~"$admin_instance"}[$__rate_interval])))', 'p99 {{operation}}'),
                 ]
               ),
             ]),
           ] else []) + [
        g.row('Process', 55),
        g.timeseries(
          'CPU',
          'CPU used by the exporter process.',
          'percentunit',
          g.pos(0, 56, 8, 7),
          [
            g.range('rate(process_cpu_seconds_total{job=~"$job", instance=~"$instance"}[$__rate_interval])', '{{instance}}'),
          ]
        ),
        g.timeseries(
          'Memory',
          'Resident memory of the exporter process and Go heap in use.',
          'bytes',
          g.pos(8, 56, 8, 7),
          [
            g.range('process_resident_memory_bytes{job=~"$job", instance=~"$instance"}', 'rss {{instance}}'),
            g.range('go_memstats_heap_inuse_bytes{job=~"$job", instance=~"$instance"}', 'heap {{instance}}'),
          ]
        ),
        g.timeseries(
          'Goroutines',
          'Goroutines of the exporter process: it should stay flat, whatever the scrape rate.',
          'short',
          g.pos(16, 56, 8, 7),
          [
            g.range('go_goroutines{job=~"$job", instance=~"$instance"}', '{{instance}}'),
          ]
        ),
      ],
    ),
  },
}
