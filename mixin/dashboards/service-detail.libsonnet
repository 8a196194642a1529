local g = import '../lib/grafana.libsonnet';
local util = import '../lib/util.libsonnet';
{
  local cfg = $._config,
  local sel = 'job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"',
  grafanaDashboards+:: {
    'service-detail.json': g.dashboard(
      cfg,
      'service-detail.json',
      'CloudDB / Service detail',
      'One database service, chosen by name: status history, size history, replica sets, pooler and endpoints.',
      [
        g.variable('job', 'Job', 'label_values(clouddb_exporter_build_info, job)'),
        g.variable('instance', 'Instance', 'label_values(clouddb_exporter_build_info{job=~"$job"}, instance)'),
        g.variable('project_id', 'Project', 'label_values(clouddb_exporter_snapshot_timestamp_seconds{job=~"$job", instance=~"$instance"}, project_id)'),
        g.serviceVariable('clouddb_service_info{job=~"$job", instance=~"$instance", project_id=~"$project_id"}'),
      ] + (if cfg.dataPlanePanels then [
             g.collectorVariable('usage_instance', 'usage'),
             g.collectorVariable('logs_instance', 'logs'),
           ] else []),
      [
        g.row('Service', 0),
        g.stat(
          'Status',
          'Current status of the service.',
          'short',
          g.pos(0, 1, 6, 4),
          [
            g.instant('(sum by (job, instance, project_id, service_id) (clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="READY"} * 1 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="UNSTABLE"} * 2 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="QUEUED"} * 3 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="CONFIGURING"} * 4 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="UPGRADING"} * 5 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="RESUMING"} * 6 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="PAUSING"} * 7 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="PAUSED"} * 8 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="OPTIMIZING"} * 9 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="DELETING"} * 10 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="DELETED"} * 11)) * on (job, instance, project_id, service_id) group_left (name) clouddb_service_info{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"}', '{{name}}'),
          ]
        ) + g.mappings({ '0': ['unknown', 'orange'], '1': ['READY', 'green'], '2': ['UNSTABLE', 'red'], '3': ['QUEUED', 'blue'], '4': ['CONFIGURING', 'blue'], '5': ['UPGRADING', 'blue'], '6': ['RESUMING', 'blue'], '7': ['PAUSING', 'blue'], '8': ['PAUSED', 'text'], '9': ['OPTIMIZING', 'blue'], '10': ['DELETING', 'purple'], '11': ['DELETED', 'purple'] }),
        g.stat(
          'Paused',
          'Whether the service is paused.',
          'short',
          g.pos(6, 1, 3, 4),
          [
            g.instant('clouddb_service_paused{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"}', 'paused'),
          ]
        ) + g.mappings({ '0': ['no', 'green'], '1': ['paused', 'text'] }),
        g.stat(
          'Connection pooler',
          "Whether the service's connection pooler is enabled.",
          'short',
          g.pos(9, 1, 3, 4),
          [
            g.instant('clouddb_service_connection_pooler_enabled{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"}', 'pooler'),
          ]
        ) + g.mappings({ '0': ['off', 'text'], '1': ['on', 'green'] }),
        g.stat(
          'Status since',
          'When the exporter first saw the current status (restarts with the exporter).',
          'dateTimeFromNow',
          g.pos(12, 1, 6, 4),
          [
            g.instant('clouddb_service_status_changed_timestamp_seconds{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"} * 1000', 'since'),
          ]
        ),
        g.stat(
          'Created',
          'When the service was created.',
          'dateTimeAsIso',
          g.pos(18, 1, 6, 4),
          [
            g.instant('clouddb_service_created_timestamp_seconds{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"} * 1000', 'created'),
          ]
        ),
        g.stateTimeline(
          'Status over time',
          "The service's status over time, as polled by the exporter.",
          'short',
          g.pos(0, 5, 24, 5),
          [
            g.range('(sum by (job, instance, project_id, service_id) (clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="READY"} * 1 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="UNSTABLE"} * 2 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="QUEUED"} * 3 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="CONFIGURING"} * 4 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="UPGRADING"} * 5 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="RESUMING"} * 6 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="PAUSING"} * 7 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="PAUSED"} * 8 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="OPTIMIZING"} * 9 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="DELETING"} * 10 or clouddb_service_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="DELETED"} * 11)) * on (job, instance, project_id, service_id) group_left (name) clouddb_service_info{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"}', '{{name}}'),
          ]
        ) + g.mappings({ '0': ['unknown', 'orange'], '1': ['READY', 'green'], '2': ['UNSTABLE', 'red'], '3': ['QUEUED', 'blue'], '4': ['CONFIGURING', 'blue'], '5': ['UPGRADING', 'blue'], '6': ['RESUMING', 'blue'], '7': ['PAUSING', 'blue'], '8': ['PAUSED', 'text'], '9': ['OPTIMIZING', 'blue'], '10': ['DELETING', 'purple'], '11': ['DELETED', 'purple'] }),
        g.tablePanel(
          'Endpoints',
          'Endpoints of the service and of its read replica sets (host and port from the API; empty while there is none). Poolers listen on the same host.',
          'short',
          g.pos(0, 10, 24, 6),
          [
            g.table('clouddb_service_info{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"}'),
            g.table('clouddb_replica_set_info{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"}'),
          ]
        ) + { transformations: [{ id: 'merge', options: {} }, { id: 'organize', options: { excludeByName: { Time: true, 'Value #A': true, 'Value #B': true, __name__: true } } }] },
        g.row('Size', 16),
        g.timeseries(
          'CPU per resource',
          'vCPU cores of each resource (primary and HA replicas) over time: resizes show as steps.',
          g.cores,
          g.pos(0, 17, 8, 8),
          [
            g.range('clouddb_service_cpu_cores{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"}', '{{resource_id}}'),
          ],
          steps=true
        ),
        g.timeseries(
          'Memory per resource',
          'Memory of each resource over time.',
          'bytes',
          g.pos(8, 17, 8, 8),
          [
            g.range('clouddb_service_memory_bytes{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"}', '{{resource_id}}'),
          ],
          steps=true
        ),
        g.timeseries(
          'Resources',
          "Entries in the service's resources: the primary plus HA replicas.",
          'short',
          g.pos(16, 17, 8, 8),
          [
            g.range('clouddb_service_resources{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"}', 'resources'),
          ],
          steps=true
        ),
        g.row('Replica sets', 25),
        g.tablePanel(
          'Replica sets',
          'Read replica sets of the service with their status, environment and endpoint.',
          'short',
          g.pos(0, 26, 24, 6),
          [
            g.table('(clouddb_replica_set_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"} == 1) * on (job, instance, project_id, service_id, replica_set_id) group_left (name, environment, host, port) clouddb_replica_set_info{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"}'),
          ]
        ),
        g.stateTimeline(
          'Replica set status over time',
          'Status of each read replica set over time.',
          'short',
          g.pos(0, 32, 24, 6),
          [
            g.range('(sum by (job, instance, project_id, service_id, replica_set_id) (clouddb_replica_set_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="creating"} * 1 or clouddb_replica_set_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="active"} * 2 or clouddb_replica_set_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="resizing"} * 3 or clouddb_replica_set_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="deleting"} * 4 or clouddb_replica_set_status{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id", status="error"} * 5)) * on (job, instance, project_id, service_id, replica_set_id) group_left (name) clouddb_replica_set_info{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"}', '{{name}} ({{replica_set_id}})'),
          ]
        ) + g.mappings({ '0': ['unknown', 'orange'], '1': ['creating', 'blue'], '2': ['active', 'green'], '3': ['resizing', 'blue'], '4': ['deleting', 'purple'], '5': ['error', 'red'] }),
        g.timeseries(
          'Replica set nodes',
          'Nodes of each read replica set over time.',
          'short',
          g.pos(0, 38, 6, 8),
          [
            g.range('clouddb_replica_set_nodes{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"}', '{{replica_set_id}}'),
          ],
          steps=true
        ),
        g.timeseries(
          'Replica set CPU',
          'vCPU cores of each read replica set over time.',
          g.cores,
          g.pos(6, 38, 6, 8),
          [
            g.range('clouddb_replica_set_cpu_cores{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"}', '{{replica_set_id}}'),
          ],
          steps=true
        ),
        g.timeseries(
          'Replica set memory',
          'Memory of each read replica set over time.',
          'bytes',
          g.pos(12, 38, 6, 8),
          [
            g.range('clouddb_replica_set_memory_bytes{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"}', '{{replica_set_id}}'),
          ],
          steps=true
        ),
        g.timeseries(
          'Replica set poolers',
          'Whether each read replica set has its connection pooler enabled (1) over time.',
          'short',
          g.pos(18, 38, 6, 8),
          [
            g.range('clouddb_replica_set_connection_pooler_enabled{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"}', '{{replica_set_id}}'),
          ],
          steps=true
        ) + g.mappings({ '0': ['off', 'text'], '1': ['on', 'green'] }),
        g.row('Usage, HA and lineage', 46),
        g.timeseries(
          'CPU used',
          'CPU the service uses (metrics.milli_cpu / 1000, revision 2026 of the API) against its provisioned CPU (all resources); nothing for a shared-resource service, which has no size.',
          g.cores,
          g.pos(0, 47, 8, 8),
          [
            g.range('clouddb_service_cpu_usage_cores{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"}', 'used'),
            g.range('sum(clouddb_service_cpu_cores{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"})', 'provisioned'),
          ]
        ),
        g.timeseries(
          'Memory used',
          'Memory the service uses (metrics.memory_mb read as MiB) against its provisioned memory.',
          'bytes',
          g.pos(8, 47, 8, 8),
          [
            g.range('clouddb_service_memory_usage_bytes{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"}', 'used'),
            g.range('sum(clouddb_service_memory_bytes{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"})', 'provisioned'),
          ]
        ),
        g.timeseries(
          'Storage used',
          'Storage the service uses (metrics.storage_mb read as MiB), and its growth in bytes per hour (deriv).',
          'bytes',
          g.pos(16, 47, 8, 8),
          [
            g.range('clouddb_service_storage_usage_bytes{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"}', 'used'),
            g.range('deriv(clouddb_service_storage_usage_bytes{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"}[$__rate_interval]) * 3600', 'growth per hour'),
          ]
        ),
        g.stat(
          'HA replicas',
          'High-availability replicas of the service (ha_replicas.replica_count), and how many are synchronous.',
          'short',
          g.pos(0, 55, 6, 4),
          [
            g.instant('clouddb_service_ha_replicas{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"}', 'replicas'),
            g.instant('clouddb_service_ha_sync_replicas{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"}', 'synchronous'),
          ]
        ),
        g.stat(
          'Shared resources',
          'Whether the service is a shared-resource service (no dedicated CPU or memory).',
          'short',
          g.pos(6, 55, 6, 4),
          [
            g.instant('clouddb_service_shared_resources{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"}', 'shared'),
          ]
        ) + g.mappings({ '0': ['dedicated', 'text'], '1': ['shared', 'blue'] }),
        g.tablePanel(
          'Fork lineage',
          'Forks around this service (forked_from): the row whose service_id is this service names its parent (standby or not); rows whose parent_service_id is this service are its forks. Empty when there is neither.',
          'short',
          g.pos(12, 55, 12, 4),
          [
            g.table('clouddb_service_fork_info{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"} or clouddb_service_fork_info{job=~"$job", instance=~"$instance", parent_project_id=~"$project_id", parent_service_id="$service_id"}'),
          ]
        ),
        g.tablePanel(
          'VPC endpoint',
          'How the service is reached from its VPC (vpc_endpoint); empty when it is not attached.',
          'short',
          g.pos(0, 59, 24, 5),
          [
            g.table('clouddb_service_vpc_endpoint_info{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"}'),
          ]
        ),
      ] + (if cfg.dataPlanePanels then [
             // The opt-in usage and log collectors (--collect.usage,
             // --collect.logs): a closed row per exporter that runs them, none
             // otherwise. Usage values are per node (role, ordinal) or job,
             // from the newest usage bucket with a value.
             g.repeatedRow('Node usage: $usage_instance', 64, 'usage_instance', [
               g.timeseries(
                 'Node CPU',
                 'CPU used and available per node (primary, HA replicas), in cores, from the usage series (--collect.usage).',
                 g.cores,
                 g.pos(0, 65, 8, 8),
                 [
                   g.range('clouddb_service_system_cpu_usage_cores{job=~"$job", instance=~"$usage_instance", project_id=~"$project_id", service_id="$service_id"}', 'used {{role}} {{ordinal}}'),
                   g.range('clouddb_service_system_cpu_total_cores{job=~"$job", instance=~"$usage_instance", project_id=~"$project_id", service_id="$service_id"}', 'total {{role}} {{ordinal}}'),
                 ]
               ),
               g.timeseries(
                 'Node memory',
                 'Memory used and available per node, from the usage series.',
                 'bytes',
                 g.pos(8, 65, 8, 8),
                 [
                   g.range('clouddb_service_system_memory_usage_bytes{job=~"$job", instance=~"$usage_instance", project_id=~"$project_id", service_id="$service_id"}', 'used {{role}} {{ordinal}}'),
                   g.range('clouddb_service_system_memory_total_bytes{job=~"$job", instance=~"$usage_instance", project_id=~"$project_id", service_id="$service_id"}', 'total {{role}} {{ordinal}}'),
                 ]
               ),
               g.timeseries(
                 'Node disk used',
                 'Disk used per node, from the usage series.',
                 'bytes',
                 g.pos(16, 65, 8, 8),
                 [
                   g.range('clouddb_service_system_disk_usage_bytes{job=~"$job", instance=~"$usage_instance", project_id=~"$project_id", service_id="$service_id"}', '{{role}} {{ordinal}}'),
                 ]
               ),
               g.timeseries(
                 'Disk I/O bytes',
                 'Disk bytes read and written per node, as the API gives them (it does not say whether per bucket or per second).',
                 'bytes',
                 g.pos(0, 73, 8, 8),
                 [
                   g.range('clouddb_service_system_disk_io_read_bytes{job=~"$job", instance=~"$usage_instance", project_id=~"$project_id", service_id="$service_id"}', 'read {{role}} {{ordinal}}'),
                   g.range('clouddb_service_system_disk_io_write_bytes{job=~"$job", instance=~"$usage_instance", project_id=~"$project_id", service_id="$service_id"}', 'write {{role}} {{ordinal}}'),
                 ]
               ),
               g.timeseries(
                 'Disk I/O operations',
                 'Disk read and write operations per node, as the API gives them (it does not say whether per bucket or per second).',
                 'short',
                 g.pos(8, 73, 8, 8),
                 [
                   g.range('clouddb_service_system_disk_io_read_ops{job=~"$job", instance=~"$usage_instance", project_id=~"$project_id", service_id="$service_id"}', 'read {{role}} {{ordinal}}'),
                   g.range('clouddb_service_system_disk_io_write_ops{job=~"$job", instance=~"$usage_instance", project_id=~"$project_id", service_id="$service_id"}', 'write {{role}} {{ordinal}}'),
                 ]
               ),
               g.timeseries(
                 'Queries',
                 'Queries per second per node, from the usage series.',
                 'ops',
                 g.pos(16, 73, 8, 8),
                 [
                   g.range('clouddb_service_database_queries_per_second{job=~"$job", instance=~"$usage_instance", project_id=~"$project_id", service_id="$service_id"}', '{{role}} {{ordinal}}'),
                 ]
               ),
               g.timeseries(
                 'Connections',
                 'Open connections per node, from the usage series. CloudDBServiceConnectionsHigh fires above the red line (%d) after %s.' % [cfg.serviceConnectionsThreshold, util.human(cfg.serviceConnectionsHighFor)],
                 'short',
                 g.pos(0, 81, 8, 8),
                 [
                   g.range('clouddb_service_database_connections{job=~"$job", instance=~"$usage_instance", project_id=~"$project_id", service_id="$service_id"}', '{{role}} {{ordinal}}'),
                 ]
               ) + g.thresholdLine(cfg.serviceConnectionsThreshold),
               g.stateTimeline(
                 'Job runs',
                 "Whether each background job's newest run succeeded, from the usage series (CloudDBServiceJobFailing fires after %s of failures)." % util.human(cfg.serviceJobFailingFor),
                 'short',
                 g.pos(8, 81, 8, 8),
                 [
                   g.range('clouddb_service_database_job_success{job=~"$job", instance=~"$usage_instance", project_id=~"$project_id", service_id="$service_id"}', '{{job_id}}'),
                 ]
               ) + g.mappings({ '0': ['failed', 'red'], '1': ['ok', 'green'] }),
               g.timeseries(
                 'Job duration',
                 "Duration of each background job's newest run, from the usage series.",
                 's',
                 g.pos(16, 81, 8, 8),
                 [
                   g.range('clouddb_service_database_job_duration_seconds{job=~"$job", instance=~"$usage_instance", project_id=~"$project_id", service_id="$service_id"}', '{{job_id}}'),
                 ]
               ),
             ]),
             g.repeatedRow('Log entries: $logs_instance', 89, 'logs_instance', [
               g.timeseries(
                 'Log entries by severity',
                 "Log entries a minute by severity (PostgreSQL's; OTHER for any other), counted by the log collector (--collect.logs); the messages are never exported.",
                 'suffix: /min',
                 g.pos(0, 90, 24, 8),
                 [
                   g.range('sum by (severity) (rate(clouddb_service_log_entries_total{job=~"$job", instance=~"$logs_instance", project_id=~"$project_id", service_id="$service_id"}[$__rate_interval])) * 60', '{{severity}}'),
                 ]
               ),
             ]),
           ] else []) + [
        // The size recommendation (--collect.usage, --rightsizing.*): a
        // recommendation only, resized by a human through the admin surface.
        g.row('Rightsizing', 98),
        g.stat(
          'Finding',
          "What the recommendation says of the service's size: from its primary's CPU 95th percentile and memory peak over --rightsizing.window, each plus the headroom (docs/cost.md). Nothing without usage reads.",
          'short',
          g.pos(0, 99, 6, 4),
          [
            g.instant('sum(clouddb_service_rightsizing_finding{%s, finding="optimal"} * 1 or clouddb_service_rightsizing_finding{%s, finding="over_provisioned"} * 2 or clouddb_service_rightsizing_finding{%s, finding="under_provisioned"} * 3 or clouddb_service_rightsizing_finding{%s, finding="insufficient_data"} * 4)' % [sel, sel, sel, sel], 'finding'),
          ]
        ) + g.mappings({ '0': ['unknown', 'text'], '1': ['optimal', 'green'], '2': ['over-provisioned', 'orange'], '3': ['under-provisioned', 'red'], '4': ['insufficient data', 'text'] }),
        g.stat(
          'Recommended size',
          'The smallest size of --rightsizing.sizes covering both needs, in cpu_millis and memory_gbs, beside the current size of the primary (its HA replicas follow it).',
          'short',
          g.pos(6, 99, 6, 4),
          [
            g.instant('clouddb_service_rightsizing_recommended_cpu_millis{%s}' % sel, 'recommended cpu_millis'),
            g.instant('clouddb_service_rightsizing_recommended_memory_gbs{%s}' % sel, 'recommended memory_gbs'),
          ]
        ),
        g.stat(
          'Window covered',
          "Share of --rightsizing.window with the primary's usage read; below --rightsizing.min-coverage the finding is insufficient data.",
          'percentunit',
          g.pos(12, 99, 6, 4),
          [
            g.instant('clouddb_service_rightsizing_coverage_ratio{%s}' % sel, 'coverage'),
          ]
        ),
        g.stat(
          'Saving per hour',
          "What the resize to the recommended size would save per hour for the primary and its HA replicas, in the price file's currency (--pricing.file); negative: what it costs more.",
          'short',
          g.pos(18, 99, 6, 4),
          [
            g.instant('clouddb_service_rightsizing_saving_per_hour{%s}' % sel, 'saving'),
          ]
        ),
        g.tablePanel(
          'Dry run of the resize',
          "The admin surface's request that shows, without calling anything, what resizing to the recommended size would send (docs/admin.md): POST it with the admin token. A human decides; the exporter never resizes.",
          'short',
          g.pos(0, 103, 24, 4),
          [
            g.table('label_replace(label_join(clouddb_service_rightsizing_recommended_size_info{%s}, "dry_run", ";", "project_id", "service_id", "cpu_millis", "memory_gbs"), "dry_run", "POST /api/v1/projects/$1/services/$2/resize?dry_run=true {\\"cpu_millis\\":$3,\\"memory_gbs\\":$4}", "dry_run", "(.*);(.*);(.*);(.*)")' % sel),
          ]
        ),
      ],
      annotations=[
        g.annotation(
          'Changes',
          'changes(clouddb_service_last_change_timestamp_seconds{job=~"$job", instance=~"$instance", project_id=~"$project_id", service_id="$service_id"}[$__rate_interval]) > 0',
          'Service changed',
          'clouddb_exporter saw a change of this service; GET /api/v1/changes?object_id={{service_id}} on the exporter says what (docs/changes.md).',
          ['project_id', 'service_id'],
        ),
      ],
    ),
  },
}
