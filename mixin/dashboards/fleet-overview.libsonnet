local g = import '../lib/grafana.libsonnet';
local util = import '../lib/util.libsonnet';
{
  local cfg = $._config,
  grafanaDashboards+:: {
    'fleet-overview.json': g.dashboard(
      cfg,
      'fleet-overview.json',
      'CloudDB / Fleet overview',
      'The managed database fleet as seen by clouddb_exporter: services, replica sets, poolers, VPCs and peerings.',
      [
        g.variable('job', 'Job', 'label_values(clouddb_exporter_build_info, job)'),
        g.variable('instance', 'Instance', 'label_values(clouddb_exporter_build_info{job=~"$job"}, instance)'),
        g.variable('project_id', 'Project', 'label_values(clouddb_exporter_snapshot_timestamp_seconds{job=~"$job", instance=~"$instance"}, project_id)'),
        // The cost estimates (--pricing.file) and their recording rules.
        g.row('Cost', 89),
        g.stat(
          'Cost per hour',
          "Estimated cost of the selected projects' services per hour, every component, in the price file's currency (clouddb_pricing_info). An estimate from --pricing.file: no discounts, taxes, credits or tiered prices (docs/cost.md).",
          'short',
          g.pos(0, 90, 6, 4),
          [
            g.instant('sum(project:clouddb_service_estimated_cost_per_hour:sum{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'per hour'),
          ]
        ),
        g.stat(
          'Month to date',
          'The estimated cost per hour summed over the hours of the current month (UTC) so far, as Prometheus recorded it: hours it did not see are not in it.',
          'short',
          g.pos(6, 90, 6, 4),
          [
            g.instant('sum(project:clouddb_service_estimated_cost:month_to_date{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'month to date'),
          ]
        ),
        g.stat(
          'Month-end projection',
          'Month to date plus the current cost per hour for every hour left in the month: what the month costs if nothing changes from now on.',
          'short',
          g.pos(12, 90, 6, 4),
          [
            g.instant('sum(project:clouddb_service_estimated_cost:month_end_projection{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'month end'),
          ]
        ),
        g.stat(
          'Unpriced components',
          'Components of services the estimate leaves out: no price in the price file for their region and size, or an amount the API does not send (storage before revision 2026). Above 0, the sums undercount.',
          'short',
          g.pos(18, 90, 6, 4),
          [
            g.instant('sum(clouddb_pricing_unpriced_resources{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'unpriced'),
          ]
        ) + g.thresholds([{ color: 'green', value: null }, { color: 'orange', value: 1 }]),
        g.timeseries(
          'Cost per hour by project and environment',
          "Estimated cost per hour of each project's services by environment (metadata.environment), in the price file's currency.",
          'short',
          g.pos(0, 94, 12, 8),
          [
            g.range('project_environment:clouddb_service_estimated_cost_per_hour:sum{job=~"$job", instance=~"$instance", project_id=~"$project_id"}', '{{project_id}} {{environment}}'),
          ]
        ),
        g.tablePanel(
          'Services by cost per hour',
          'The services with the largest estimated cost per hour, every component summed (compute, HA replicas, read replicas, storage, pooler).',
          'short',
          g.pos(12, 94, 12, 8),
          [
            g.table('topk(20, sum by (job, instance, project_id, service_id) (clouddb_service_estimated_cost_per_hour{job=~"$job", instance=~"$instance", project_id=~"$project_id"})) * on (job, instance, project_id, service_id) group_left (name, environment) clouddb_service_info{job=~"$job", instance=~"$instance", project_id=~"$project_id"}'),
          ]
        ) + g.serviceLinks(cfg) + g.valueColumn('Cost per hour'),
        // The storage forecast needs a day of history before it has a value.
        g.stat(
          'Storage at month end (forecast)',
          "Storage the selected projects' services will hold when the month ends, on a line through each service's daily maxima over the last %s (revision 2026's metrics.storage_mb). Empty during the first day of history." % util.human(cfg.storageForecastWindow),
          'bytes',
          g.pos(0, 102, 12, 4),
          [
            g.instant('sum(project:clouddb_service_storage_usage_bytes:predict_month_end{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'month end'),
          ]
        ),
        g.stat(
          'Storage cost per hour at month end (forecast)',
          "What the storage forecast for the month end costs per hour at each service's current price per byte, in the price file's currency.",
          'short',
          g.pos(12, 102, 12, 4),
          [
            g.instant('sum(project:clouddb_service_estimated_storage_cost_per_hour:predict_month_end{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'per hour'),
          ]
        ),
      ] + (if cfg.dataPlanePanels then [
             g.collectorVariable('usage_instance', 'usage'),
             g.collectorVariable('logs_instance', 'logs'),
           ] else []),
      [
        g.row('Fleet', 0),
        g.stat(
          'Services',
          "Services in the selected projects, as of the exporter's last poll.",
          'short',
          g.pos(0, 1, 4, 4),
          [
            g.instant('count(clouddb_service_info{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'services'),
          ]
        ),
        g.stat(
          'Services not READY',
          'Services whose status is anything but READY (PAUSED included). The table below lists them. 0 only from an exporter that has listed the services; nothing while none is scraped: the fleet is unknown then, not healthy.',
          'short',
          g.pos(4, 1, 4, 4),
          [
            // Not `or vector(0)`: that would show a healthy 0 for an
            // exporter that is down. The 0 comes from the exporters that
            // are scraped and have listed the services at least once.
            g.instant('count(clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", status="READY"} == 0) or on () (0 * count(clouddb_exporter_collector_last_success_timestamp_seconds{job=~"$job", instance=~"$instance", project_id=~"$project_id", collector="services"} > 0))', 'not READY'),
          ]
        ) + g.thresholds([{ color: 'green', value: null }, { color: 'orange', value: 1 }]),
        g.stat(
          'CPU provisioned',
          'Total vCPU cores of all service resources (primary and HA replicas) and of all read replica sets, as the API reports them (cpu_millis / 1000).',
          g.cores,
          g.pos(8, 1, 4, 4),
          [
            g.instant('sum(clouddb_service_cpu_cores{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'services'),
            g.instant('sum(clouddb_replica_set_cpu_cores{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'replica sets'),
          ]
        ),
        g.stat(
          'Memory provisioned',
          'Total memory of all service resources and of all read replica sets (memory_gbs read as GiB).',
          'bytes',
          g.pos(12, 1, 4, 4),
          [
            g.instant('sum(clouddb_service_memory_bytes{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'services'),
            g.instant('sum(clouddb_replica_set_memory_bytes{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'replica sets'),
          ]
        ),
        g.stat(
          'Replica sets',
          'Read replica sets in the selected projects.',
          'short',
          g.pos(16, 1, 4, 4),
          [
            g.instant('count(clouddb_replica_set_info{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'replica sets'),
          ]
        ),
        g.stat(
          'Connection poolers',
          'Services and read replica sets with a connection pooler enabled.',
          'short',
          g.pos(20, 1, 4, 4),
          [
            g.instant('sum(clouddb_service_connection_pooler_enabled{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'services'),
            g.instant('sum(clouddb_replica_set_connection_pooler_enabled{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'replica sets'),
          ]
        ),
        g.piechart(
          'Services by status',
          'Services per current status.',
          'short',
          g.pos(0, 5, 6, 8),
          [
            g.instant('sum by (status) (clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id"} == 1)', '{{status}}'),
          ]
        ),
        g.piechart(
          'Services by type',
          'Services per service_type (TIMESERIESDB, POSTGRES, VECTOR).',
          'short',
          g.pos(6, 5, 6, 8),
          [
            g.instant('count by (service_type) (clouddb_service_info{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', '{{service_type}}'),
          ]
        ),
        g.piechart(
          'Services by region',
          'Services per region_code.',
          'short',
          g.pos(12, 5, 6, 8),
          [
            g.instant('count by (region_code) (clouddb_service_info{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', '{{region_code}}'),
          ]
        ),
        g.piechart(
          'Services by environment',
          'Services per environment (PROD, DEV).',
          'short',
          g.pos(18, 5, 6, 8),
          [
            g.instant('count by (environment) (clouddb_service_info{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', '{{environment}}'),
          ]
        ),
        g.tablePanel(
          'Services not READY',
          'Every service whose current status is not READY, with its name, environment, type and region. PAUSED services are listed too: pausing is usually deliberate.',
          'short',
          g.pos(0, 13, 24, 7),
          [
            g.table('(clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", status!="READY"} == 1) * on (job, instance, project_id, service_id) group_left (name, environment, service_type, region_code) clouddb_service_info{job=~"$job", instance=~"$instance", project_id=~"$project_id"}'),
          ]
        ) + g.serviceLinks(cfg),
        g.stateTimeline(
          'Service status over time',
          "Status of every service over time, as polled by the exporter. 'unknown' is a status the API documentation does not list.",
          'short',
          g.pos(0, 20, 24, 10),
          [
            g.range('(sum by (job, instance, project_id, service_id) (clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", status="READY"} * 1 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", status="UNSTABLE"} * 2 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", status="QUEUED"} * 3 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", status="CONFIGURING"} * 4 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", status="UPGRADING"} * 5 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", status="RESUMING"} * 6 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", status="PAUSING"} * 7 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", status="PAUSED"} * 8 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", status="OPTIMIZING"} * 9 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", status="DELETING"} * 10 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", status="DELETED"} * 11)) * on (job, instance, project_id, service_id) group_left (name) clouddb_service_info{job=~"$job", instance=~"$instance", project_id=~"$project_id"}', '{{name}} ({{service_id}})'),
          ]
        ) + g.seriesServiceLinks(cfg) + g.mappings({ '0': ['unknown', 'orange'], '1': ['READY', 'green'], '2': ['UNSTABLE', 'red'], '3': ['QUEUED', 'blue'], '4': ['CONFIGURING', 'blue'], '5': ['UPGRADING', 'blue'], '6': ['RESUMING', 'blue'], '7': ['PAUSING', 'blue'], '8': ['PAUSED', 'text'], '9': ['OPTIMIZING', 'blue'], '10': ['DELETING', 'purple'], '11': ['DELETED', 'purple'] }),
        g.timeseries(
          'CPU provisioned over time',
          'Total vCPU cores of services and read replica sets over time, from the project:*:sum recording rules: resizes show as steps.',
          g.cores,
          g.pos(0, 30, 12, 8),
          [
            g.range('sum by (project_id) (project:clouddb_service_cpu_cores:sum{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'services {{project_id}}'),
            g.range('sum by (project_id) (project:clouddb_replica_set_cpu_cores:sum{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'replica sets {{project_id}}'),
          ],
          steps=true
        ),
        g.timeseries(
          'Memory provisioned over time',
          'Total memory of services and read replica sets over time.',
          'bytes',
          g.pos(12, 30, 12, 8),
          [
            g.range('sum by (project_id) (project:clouddb_service_memory_bytes:sum{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'services {{project_id}}'),
            g.range('sum by (project_id) (project:clouddb_replica_set_memory_bytes:sum{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'replica sets {{project_id}}'),
          ],
          steps=true
        ),
        g.row('Replica sets and poolers', 38),
        g.piechart(
          'Replica sets by status',
          'Read replica sets per current status.',
          'short',
          g.pos(0, 39, 6, 8),
          [
            g.instant('sum by (status) (clouddb_replica_set_status{job=~"$job", instance=~"$instance", project_id=~"$project_id"} == 1)', '{{status}}'),
          ]
        ),
        g.tablePanel(
          'Replica sets',
          'Every read replica set with its service, status, environment, nodes and pooler.',
          'short',
          g.pos(6, 39, 18, 8),
          [
            g.table('(clouddb_replica_set_status{job=~"$job", instance=~"$instance", project_id=~"$project_id"} == 1) * on (job, instance, project_id, service_id, replica_set_id) group_left (name, environment) clouddb_replica_set_info{job=~"$job", instance=~"$instance", project_id=~"$project_id"}'),
          ]
        ) + g.serviceLinks(cfg, ['service_id']),
        g.tablePanel(
          'Connection poolers',
          'Services and replica sets with their connection pooler state (1 = enabled).',
          'short',
          g.pos(0, 47, 24, 8),
          [
            g.table('clouddb_service_connection_pooler_enabled{job=~"$job", instance=~"$instance", project_id=~"$project_id"} * on (job, instance, project_id, service_id) group_left (name) clouddb_service_info{job=~"$job", instance=~"$instance", project_id=~"$project_id"}'),
            g.table('clouddb_replica_set_connection_pooler_enabled{job=~"$job", instance=~"$instance", project_id=~"$project_id"} * on (job, instance, project_id, service_id, replica_set_id) group_left (name) clouddb_replica_set_info{job=~"$job", instance=~"$instance", project_id=~"$project_id"}'),
          ]
        ) + g.serviceLinks(cfg, ['service_id']) + { transformations: [{ id: 'merge', options: {} }, { id: 'organize', options: { excludeByName: { Time: true } } }] },
        g.row('VPCs and peerings', 55),
        g.tablePanel(
          'VPCs',
          'VPCs with their CIDR and region.',
          'short',
          g.pos(0, 56, 10, 8),
          [
            g.table('clouddb_vpc_info{job=~"$job", instance=~"$instance", project_id=~"$project_id"}'),
          ]
        ),
        g.tablePanel(
          'Peerings',
          "VPC peerings with their status, peer account, region and VPC, and whether the API reports an error (error = 1; the message is in the exporter's log).",
          'short',
          g.pos(10, 56, 14, 8),
          [
            g.table('(clouddb_vpc_peering_status{job=~"$job", instance=~"$instance", project_id=~"$project_id"} == 1) * on (job, instance, project_id, vpc_id, peering_id) group_left (peer_account_id, peer_region_code, peer_vpc_id) clouddb_vpc_peering_info{job=~"$job", instance=~"$instance", project_id=~"$project_id"}'),
            g.table('clouddb_vpc_peering_error{job=~"$job", instance=~"$instance", project_id=~"$project_id"}'),
          ]
        ) + { transformations: [{ id: 'merge', options: {} }, { id: 'organize', options: { excludeByName: { Time: true, 'Value #A': true, __name__: true }, renameByName: { 'Value #B': 'error' } } }] },
        g.stat(
          'Peerings with an error',
          'Peerings whose API object carries an error_message.',
          'short',
          g.pos(0, 64, 6, 4),
          [
            g.instant('sum(clouddb_vpc_peering_error{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'errors'),
          ]
        ) + g.thresholds([{ color: 'green', value: null }, { color: 'red', value: 1 }]),
        g.stat(
          'Peerings pending',
          'Peerings waiting for the peer account to accept them.',
          'short',
          g.pos(6, 64, 6, 4),
          [
            g.instant('sum(clouddb_vpc_peering_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", status="pending"})', 'pending'),
          ]
        ),
        g.row('Usage', 68),
        g.stat(
          'CPU used',
          'Total CPU the services use now, in cores (metrics.milli_cpu / 1000, sent by revision 2026 of the API; empty for the first revision).',
          g.cores,
          g.pos(0, 69, 6, 4),
          [
            g.instant('sum(clouddb_service_cpu_usage_cores{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'used'),
          ]
        ),
        g.stat(
          'Memory used',
          'Total memory the services use now (metrics.memory_mb read as MiB).',
          'bytes',
          g.pos(6, 69, 6, 4),
          [
            g.instant('sum(clouddb_service_memory_usage_bytes{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'used'),
          ]
        ),
        g.stat(
          'Storage used',
          'Total storage the services use now (metrics.storage_mb read as MiB).',
          'bytes',
          g.pos(12, 69, 6, 4),
          [
            g.instant('sum(clouddb_service_storage_usage_bytes{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'used'),
          ]
        ),
        g.stat(
          'Shared-resource services',
          'Services without a dedicated size (null cpu_millis and memory_gbs): they count in no provisioned total.',
          'short',
          g.pos(18, 69, 6, 4),
          [
            g.instant('sum(clouddb_service_shared_resources{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'shared'),
          ]
        ),
        g.timeseries(
          'CPU used over time',
          'CPU used per project against CPU provisioned for services, from the project:*:sum recording rules.',
          g.cores,
          g.pos(0, 73, 8, 8),
          [
            g.range('sum by (project_id) (project:clouddb_service_cpu_usage_cores:sum{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'used {{project_id}}'),
            g.range('sum by (project_id) (project:clouddb_service_cpu_cores:sum{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'provisioned {{project_id}}'),
          ]
        ),
        g.timeseries(
          'Memory used over time',
          'Memory used per project against memory provisioned for services.',
          'bytes',
          g.pos(8, 73, 8, 8),
          [
            g.range('sum by (project_id) (project:clouddb_service_memory_usage_bytes:sum{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'used {{project_id}}'),
            g.range('sum by (project_id) (project:clouddb_service_memory_bytes:sum{job=~"$job", instance=~"$instance", project_id=~"$project_id"})', 'provisioned {{project_id}}'),
          ]
        ),
        g.timeseries(
          'Storage growth',
          'How fast the storage of each project grows, in bytes per hour (deriv of the storage used).',
          'bytes',
          g.pos(16, 73, 8, 8),
          [
            g.range('sum by (project_id) (deriv(project:clouddb_service_storage_usage_bytes:sum{job=~"$job", instance=~"$instance", project_id=~"$project_id"}[$__rate_interval])) * 3600', '{{project_id}}'),
          ]
        ),
        g.tablePanel(
          'Services by storage used',
          'The services that use the most storage, with their CPU and memory use.',
          'bytes',
          g.pos(0, 81, 24, 8),
          [
            g.table('topk(20, clouddb_service_storage_usage_bytes{job=~"$job", instance=~"$instance", project_id=~"$project_id"}) * on (job, instance, project_id, service_id) group_left (name, environment) clouddb_service_info{job=~"$job", instance=~"$instance", project_id=~"$project_id"}'),
          ]
        ) + g.serviceLinks(cfg),
      ] + (if cfg.dataPlanePanels then [
             // The opt-in usage and log collectors: a closed row per
             // exporter that runs them, none otherwise.
             g.repeatedRow('Node usage: $usage_instance', 107, 'usage_instance', [
               g.tablePanel(
                 'Services by CPU saturation',
                 'The services whose busiest node uses the largest share of its CPU (usage / total, from the usage series of --collect.usage); CloudDBServiceCPUSaturated fires above %s.' % util.percent(cfg.serviceCPUSaturationThreshold),
                 'percentunit',
                 g.pos(0, 108, 24, 8),
                 [
                   g.table('topk(20, max by (job, instance, project_id, service_id) (clouddb_service_system_cpu_usage_cores{job=~"$job", instance=~"$usage_instance", project_id=~"$project_id"} / clouddb_service_system_cpu_total_cores{job=~"$job", instance=~"$usage_instance", project_id=~"$project_id"})) * on (job, instance, project_id, service_id) group_left (name, environment) clouddb_service_info{job=~"$job", instance=~"$usage_instance", project_id=~"$project_id"}'),
                 ]
               ) + g.serviceLinks(cfg) + g.valueColumn('CPU used / total'),
             ]),
             g.repeatedRow('Log entries: $logs_instance', 116, 'logs_instance', [
               g.tablePanel(
                 'Services by error logs',
                 'The services that log the most ERROR entries a minute (from the log collector, --collect.logs); CloudDBServiceErrorLogsHigh fires above %g a minute.' % cfg.serviceErrorLogsPerMinuteThreshold,
                 'short',
                 g.pos(0, 117, 24, 8),
                 [
                   g.table('topk(20, sum by (job, instance, project_id, service_id) (rate(clouddb_service_log_entries_total{job=~"$job", instance=~"$logs_instance", project_id=~"$project_id", severity="ERROR"}[$__rate_interval])) * 60) * on (job, instance, project_id, service_id) group_left (name, environment) clouddb_service_info{job=~"$job", instance=~"$logs_instance", project_id=~"$project_id"}'),
                 ]
               ) + g.serviceLinks(cfg) + g.valueColumn('ERROR entries a minute'),
             ]),
           ] else []),
      annotations=[
        g.annotation(
          'Changes',
          'sum by (project_id, object_type, kind) (increase(clouddb_changes_total{job=~"$job", instance=~"$instance", project_id=~"$project_id"}[$__rate_interval])) > 0',
          '{{object_type}} {{kind}}',
          'Changes seen by clouddb_exporter in project {{project_id}}; GET /api/v1/changes on the exporter says which and when (docs/changes.md).',
          ['project_id', 'object_type', 'kind'],
        ),
      ],
    ),
  },
}
