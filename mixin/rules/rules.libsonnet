// Recording rules the dashboards use: per-project totals that stay cheap to
// draw over long ranges on fleets of thousands of services. Names follow
// the level:metric:operations convention; they keep the target labels.
local util = import '../lib/util.libsonnet';

{
  local cfg = $._config,
  local sum(metric) = {
    record: 'project:%s:sum' % metric,
    expr: 'sum %s (%s)' % [util.by(cfg.targetLabels, ['project_id']), metric],
  },

  prometheusRules+:: {
    groups+: [
      {
        name: 'clouddb-recording',
        rules: [
          sum('clouddb_service_cpu_cores'),
          sum('clouddb_replica_set_cpu_cores'),
          sum('clouddb_service_memory_bytes'),
          sum('clouddb_replica_set_memory_bytes'),
          // Usage (revision 2026 of the API).
          sum('clouddb_service_cpu_usage_cores'),
          sum('clouddb_service_memory_usage_bytes'),
          sum('clouddb_service_storage_usage_bytes'),
        ],
      },
    ],
  },
}
