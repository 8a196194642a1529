// Recording rules the dashboards use: per-project totals that stay cheap to
// draw over long ranges on fleets of thousands of services. Names follow
// the level:metric:operations convention; they keep the target labels.
local util = import '../lib/util.libsonnet';

{
  local cfg = $._config,
  local by(labels) = util.by(cfg.targetLabels, labels),
  local on(labels) = util.on(cfg.targetLabels, labels),
  local sum(metric) = {
    record: 'project:%s:sum' % metric,
    expr: 'sum %s (%s)' % [by(['project_id']), metric],
  },
  local cost = 'clouddb_service_estimated_cost_per_hour',
  // The current month's samples of an hourly subquery, each the cost of
  // the hour it starts: count_values labels each step with its month, and
  // the outer count_values keeps the evaluation's month (a month has at
  // most 31 days). Before the first whole hour of the recorded sum (the
  // rules just loaded) the subquery has no step: the current hour alone.
  local monthToDate(level) = {
    record: '%s:clouddb_service_estimated_cost:month_to_date' % level,
    expr: |||
      sum without (month) (
        sum_over_time((%s:%s:sum * on () group_left (month) count_values ("month", month()))[31d:1h])
        and on (month) count_values ("month", month())
      )
      or
      %s:%s:sum
    ||| % [level, cost, level, cost],
  },
  // Month to date (through the current hour) plus the hours left at the
  // current cost per hour.
  local monthEnd(level) = {
    record: '%s:clouddb_service_estimated_cost:month_end_projection' % level,
    expr: |||
      %s:clouddb_service_estimated_cost:month_to_date
      + %s:%s:sum * scalar(24 * days_in_month() - 24 * day_of_month() + 23 - hour())
    ||| % [level, level, cost],
  },

  local dailyMax = 'service:clouddb_service_storage_usage_bytes:max_over_time1d',
  local secondsToMonthEnd = 'scalar(86400 * (days_in_month() - day_of_month() + 1) - 3600 * hour() - 60 * minute())',

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
      {
        // The cost estimates (--pricing.file), by project and by project
        // and environment (the service's metadata.environment).
        name: 'clouddb-cost',
        rules: [
          sum(cost),
          {
            record: 'project_environment:%s:sum' % cost,
            expr: 'sum %s (%s * %s group_left (environment) clouddb_service_info)' % [by(['project_id', 'environment']), cost, on(['project_id', 'service_id'])],
          },
          monthToDate('project'),
          monthToDate('project_environment'),
          monthEnd('project'),
          monthEnd('project_environment'),
        ],
      },
      {
        // Storage forecast: a line through each service's daily maxima
        // over the window, robust to the sawtooth that compression and
        // retention jobs draw.
        name: 'clouddb-storage-forecast',
        rules: [
          // Whole days only: a series younger than a day (a new service,
          // an exporter just started) would add a partial day's lower
          // maximum and tilt the line upwards.
          {
            record: dailyMax,
            expr: 'max_over_time(clouddb_service_storage_usage_bytes[1d]) and clouddb_service_storage_usage_bytes offset 1d',
          },
          {
            record: 'service:clouddb_service_storage_usage_bytes:predict_month_end',
            expr: 'clamp_min(predict_linear(%s[%s:1d], %s), 0)' % [dailyMax, cfg.storageForecastWindow, secondsToMonthEnd],
          },
          {
            record: 'project:clouddb_service_storage_usage_bytes:predict_month_end',
            expr: 'sum %s (service:clouddb_service_storage_usage_bytes:predict_month_end)' % by(['project_id']),
          },
          // The storage cost per hour those bytes imply, at each service's
          // current price per byte (its storage cost over its storage).
          {
            record: 'project:clouddb_service_estimated_storage_cost_per_hour:predict_month_end',
            expr: |||
              sum %s (
                service:clouddb_service_storage_usage_bytes:predict_month_end
                * %s (
                  %s{component="storage"}
                  / %s (clouddb_service_storage_usage_bytes > 0)
                )
              )
            ||| % [by(['project_id']), on(['project_id', 'service_id']), cost, on(['project_id', 'service_id'])],
          },
        ],
      },
    ],
  },
}
