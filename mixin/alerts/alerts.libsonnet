// Alerting rules. Each alert has a section in alerts/runbook.md (its anchor
// is the alert's name in lower case) and promtool tests in alerts/tests/.
//
// Joins match on the target labels (job, instance) too, so that two
// exporter replicas polling the same project (each a separate target) never
// make a many-to-many match.
//
// Statuses are alerted on with `for:` rather than with the
// *_status_changed_timestamp_seconds metrics, which restart with the
// exporter. A restart that no scrape notices (the new process has
// published its first poll by the next scrape) changes nothing; any other
// makes every series of the exporter stale at once: firing
// alerts then keep firing for keepFiringFor (keep_firing_for), pending ones
// are dropped and start their for: again when the series come back (see
// the top of alerts/runbook.md).
local util = import '../lib/util.libsonnet';

{
  local cfg = $._config,
  local on(labels) = util.on(cfg.targetLabels, labels),
  local by(labels) = util.by(cfg.targetLabels, labels),
  // dashboard_url opens the dashboard on the alert's target (and project,
  // service) through the dashboard's variables; none without grafanaURL.
  // optional are variables whose label a series may lack (the project
  // discovery's API calls have no project_id): All is selected then.
  local dashboard(file, vars, optional=[]) =
    if cfg.grafanaURL == '' then {} else {
      dashboard_url: '%s/d/%s?%s' % [
        cfg.grafanaURL,
        cfg.dashboardUIDs[file],
        std.join('&', ['var-%s={{ $labels.%s | urlquery }}' % [v, v] for v in cfg.targetLabels + vars] +
                      ['var-%s={{ with $labels.%s }}{{ . | urlquery }}{{ else }}$__all{{ end }}' % [v, v] for v in optional]),
      ],
    },
  // keepFiring: false for the alerts on the scrape itself (up), which do
  // not vanish with the exporter.
  local alert(name, severity, for_, expr, summary, description, dashboardURL={}, keepFiring=true) = {
    alert: name,
    expr: expr,
    'for': for_,
  } + (if keepFiring && cfg.keepFiringFor != '' then { keep_firing_for: cfg.keepFiringFor } else {}) + {
    labels: { severity: severity },
    annotations: {
      summary: summary,
      description: description,
      runbook_url: '%s#%s' % [cfg.runbookURL, std.asciiLower(name)],
    } + dashboardURL,
  },

  // Joins that name a resource: the service's name and environment, a
  // replica set's service by name (service_name), a VPC's name (vpc_name),
  // a peering's peer.
  local withService(expr) = |||
    %s
    * %s group_left (name, environment)
      clouddb_service_info
  ||| % [expr, on(['project_id', 'service_id'])],
  local withReplicaSet(expr) = |||
    %s
    * %s group_left (name, environment)
      clouddb_replica_set_info
    * %s group_left (service_name)
      label_replace(clouddb_service_info, "service_name", "$1", "name", "(.*)")
  ||| % [expr, on(['project_id', 'service_id', 'replica_set_id']), on(['project_id', 'service_id'])],
  local withPeering(expr) = |||
    %s
    * %s group_left (peer_account_id, peer_region_code, peer_vpc_id)
      clouddb_vpc_peering_info
    * %s group_left (vpc_name)
      label_replace(clouddb_vpc_info, "vpc_name", "$1", "name", "(.*)")
  ||| % [expr, on(['project_id', 'vpc_id', 'peering_id']), on(['project_id', 'vpc_id'])],
  local replicaSet = 'Replica set {{ $labels.name }} ({{ $labels.replica_set_id }}, {{ $labels.environment }}) of service {{ $labels.service_name }} ({{ $labels.service_id }}) in project {{ $labels.project_id }}',
  local peering = 'Peering {{ $labels.peering_id }} of VPC {{ $labels.vpc_name }} ({{ $labels.vpc_id }}) in project {{ $labels.project_id }} to VPC {{ $labels.peer_vpc_id }} of account {{ $labels.peer_account_id }} in {{ $labels.peer_region_code }}',
  // The peering's message is read when the alert's annotations are
  // rendered, not joined into its labels: a changed message must not
  // restart the alert.
  local peeringMessage = '{{ with printf "clouddb_vpc_peering_error_info{%s}" %s | query }}{{ . | first | label "message" }}{{ else }}(no message exported){{ end }}' % [
    std.join(', ', ['%s=%%q' % l for l in cfg.targetLabels + ['project_id', 'vpc_id', 'peering_id']]),
    std.join(' ', ['$labels.%s' % l for l in cfg.targetLabels + ['project_id', 'vpc_id', 'peering_id']]),
  ],
  // Go template arguments and selector of the target labels plus more,
  // for the queries annotations run when they are rendered.
  local matchers(labels) = std.join(', ', ['%s=%%q' % l for l in cfg.targetLabels + labels]),
  local args(labels) = std.join(' ', ['$labels.%s' % l for l in cfg.targetLabels + labels]),
  // The age of the data an alert rests on: the last complete success of
  // the part (collector) that polls its resource. During an API outage the
  // exporter serves the last known state, on which pending alerts go on to
  // fire: this sentence says how old that state is, and that it is stale
  // past CloudDBDataStale's threshold. Read when rendered, never a label.
  local dataAge(part) = ' Last successful poll: {{ with printf "time() - clouddb_exporter_collector_last_success_timestamp_seconds{%s, collector=%%q}" %s "%s" | query }}{{ $age := . | first | value }}{{ humanizeDuration $age }} ago{{ if gt $age %.1f }} (stale: see CloudDBDataStale){{ end }}{{ else }}unknown (the exporter is not reporting){{ end }}.' % [matchers(['project_id']), args(['project_id']), part, cfg.dataStaleThresholdSeconds],
  // The age of the node's newest usage bucket (the exporter serves one
  // per node, the newest of its series), which can be older than the last
  // successful read (the provider's lag, round-robin refreshes); nothing
  // when the exporter does not say.
  local bucketAge = '{{ with printf "time() - clouddb_service_usage_bucket_timestamp_seconds{%s}" %s | query }} Newest bucket: {{ . | first | value | humanizeDuration }} old.{{ end }}' % [matchers(['project_id', 'service_id', 'role', 'ordinal']), args(['project_id', 'service_id', 'role', 'ordinal'])],
  // The storage growth of the last hour, the rate on-call compares with
  // the console: the alert's own value, the slope over the whole window,
  // lags far behind it when the growth began within the window.
  local lastHourGrowth = '{{ with printf "delta(clouddb_service_storage_usage_bytes{%s}[1h])" %s | query }}{{ . | first | value | humanize1024 }}B{{ else }}an unknown amount{{ end }}' % [matchers(['project_id', 'service_id']), args(['project_id', 'service_id'])],
  // The current status of a service, for alerts whose expression drops it
  // (a label would restart the alert each time the status changes).
  local serviceStatus = '{{ with printf "clouddb_service_status{%s} == 1" %s | query }}{{ . | first | label "status" }}{{ else }}unknown{{ end }}' % [matchers(['project_id', 'service_id']), args(['project_id', 'service_id'])],
  // The operations and codes that fail most in a project (no project_id:
  // the project discovery), for CloudDBAPIErrors.
  local failingOperations = '{{ range $i, $s := printf "sort_desc(topk(5, sum by (operation, code) (rate(clouddb_exporter_api_requests_total{%s, code=~%%q}[5m])) * 60 > 0))" %s "5..|error|decode_error|401|403" | query }}{{ if $i }}, {{ end }}{{ $s.Labels.operation }} {{ $s.Labels.code }} ({{ $s.Value | humanize }}/min){{ end }}' % [matchers(['project_id']), args(['project_id'])],
  // The cause of a project that is down, as the exporter sees it
  // (clouddb_project_down_cause), with where its fix lies.
  local projectDownCause = '{{ with printf "clouddb_project_down_cause{%s} == 1" %s | query }}{{ $c := . | first | label "cause" }}{{ if eq $c "credentials" }}the API refuses the key pair (401): check both keys of one pair, not revoked{{ else if eq $c "permission" }}the key pair cannot read the project (403): give it read access to the project{{ else if eq $c "not_found" }}the API knows no such project or path (404): check the project id and --api.url, which ends in the API\'s version segment{{ else if eq $c "unreachable" }}the API cannot be reached (no HTTP answer): check --api.url, the network path and --api.proxy-url{{ else if eq $c "timeout" }}the API does not answer whole within --api.timeout: check its health and the network path, or raise --api.timeout{{ else if eq $c "truncated" }}the API\'s answers break off before their end: check the network path and any proxy (--api.proxy-url){{ else }}the API fails (server errors, answers that do not decode): the provider\'s trouble{{ end }}{{ else }}the cause is not exported{{ end }}' % [matchers(['project_id']), args(['project_id'])],
  local humanSeconds(n) = if n % 60 == 0 then util.human('%dm' % (n / 60)) else util.human('%ds' % n),
  local serviceDashboard = dashboard('service-detail.json', ['project_id', 'service_id']),
  local fleetDashboard = dashboard('fleet-overview.json', ['project_id']),

  prometheusAlerts+:: {
    groups+: [
      {
        name: 'clouddb-fleet',
        rules: [
          alert(
            'CloudDBServiceUnstable',
            'critical',
            cfg.serviceUnstableFor,
            withService('(clouddb_service_status{status="UNSTABLE"} == 1)'),
            'A database service is UNSTABLE.',
            'Service {{ $labels.name }} ({{ $labels.service_id }}, {{ $labels.environment }}) in project {{ $labels.project_id }} has been UNSTABLE for more than %s.%s' % [util.human(cfg.serviceUnstableFor), dataAge('services')],
            serviceDashboard,
          ),
          alert(
            'CloudDBServiceStuckInTransition',
            'warning',
            cfg.serviceTransitionFor,
            withService('(clouddb_service_status{status=~"%s"} == 1)' % std.join('|', cfg.serviceTransitionStatuses)),
            'A database service has been in a transitional status for over an hour.',
            'Service {{ $labels.name }} ({{ $labels.service_id }}, {{ $labels.environment }}) in project {{ $labels.project_id }} has been {{ $labels.status }} for more than %s.%s' % [util.human(cfg.serviceTransitionFor), dataAge('services')],
            serviceDashboard,
          ),
          // PAUSED is left out: pausing is a deliberate operator action.
          alert(
            'CloudDBProdServiceNotReady',
            'critical',
            cfg.prodServiceNotReadyFor,
            |||
              (
                (1 - sum without (status) (clouddb_service_status{status=~"READY|PAUSED"}))
                * %s group_left (name, environment)
                  clouddb_service_info{environment="%s"}
              ) == 1
            ||| % [on(['project_id', 'service_id']), cfg.prodEnvironment],
            'A PROD database service is not READY.',
            'PROD service {{ $labels.name }} ({{ $labels.service_id }}) in project {{ $labels.project_id }} has not been READY for more than %s; its status is %s.%s' % [util.human(cfg.prodServiceNotReadyFor), serviceStatus, dataAge('services')],
            serviceDashboard,
          ),
          // A null storage usage (a service being created) has no series,
          // so deriv() skips it rather than reading a drop to 0.
          alert(
            'CloudDBServiceStorageGrowingFast',
            'warning',
            cfg.storageGrowthFor,
            withService('(deriv(clouddb_service_storage_usage_bytes[%s]) * 3600 > %d)' % [cfg.storageGrowthWindow, cfg.storageGrowthBytesPerHour]),
            'The storage of a database service grows fast.',
            'Storage of service {{ $labels.name }} ({{ $labels.service_id }}, {{ $labels.environment }}) in project {{ $labels.project_id }} has grown by %s in the last hour; its trend over the last %s, {{ $value | humanize1024 }}B per hour, has been above %s per hour for more than %s.%s' % [lastHourGrowth, util.human(cfg.storageGrowthWindow), util.bytes(cfg.storageGrowthBytesPerHour), util.human(cfg.storageGrowthFor), dataAge('services')],
            serviceDashboard,
          ),
          // node-mixin style, a level and a trend: a service holding at
          // least storageDoublingMinBytes whose line through its daily
          // maxima (the recording rule) reaches twice today's maximum
          // within the horizon, with enough days to fit on. The recorded
          // series come from another group, evaluated in its own time: read
          // through subqueries and last_over_time, not as instant values.
          alert(
            'CloudDBServiceStorageDoublingSoon',
            'warning',
            cfg.storageDoublingFor,
            withService(|||
              (
                predict_linear(service:clouddb_service_storage_usage_bytes:max_over_time1d[%(window)s:1d], %(horizon)d)
                  >= 2 * last_over_time(service:clouddb_service_storage_usage_bytes:max_over_time1d[1h])
                and last_over_time(service:clouddb_service_storage_usage_bytes:max_over_time1d[1h]) >= %(min)d
                and count_over_time(service:clouddb_service_storage_usage_bytes:max_over_time1d[%(window)s:1d]) >= %(days)d
              )
            ||| % { window: cfg.storageForecastWindow, horizon: util.seconds(cfg.storageDoublingHorizon), min: cfg.storageDoublingMinBytes, days: cfg.storageForecastMinDays }),
            'The storage of a database service would double within %s.' % util.human(cfg.storageDoublingHorizon),
            'Storage of service {{ $labels.name }} ({{ $labels.service_id }}, {{ $labels.environment }}) in project {{ $labels.project_id }} is on a trend to reach {{ $value | humanize1024 }}B within %s, twice its largest size of the last day: a line through its daily maxima over the last %s, for more than %s.%s' % [util.human(cfg.storageDoublingHorizon), util.human(cfg.storageForecastWindow), util.human(cfg.storageDoublingFor), dataAge('services')],
            serviceDashboard,
          ),
          // With --pricing.file only: the metric has no series without one.
          // A component the price file lacks is left out of every sum, so
          // the cost figures undercount until the file prices it.
          alert(
            'CloudDBResourcesUnpriced',
            'info',
            cfg.resourcesUnpricedFor,
            'clouddb_pricing_unpriced_resources > 0',
            'The cost estimate leaves out components the price file does not price.',
            'The cost estimate of project {{ $labels.project_id }} leaves out {{ $value }} components (a region or size the price file does not list, ha_replica or pooler missing, or storage the API does not send) for more than %s: its cost per hour, month to date and month-end projection undercount. The exporter logs a WARN for each naming what the price file lacks.' % util.human(cfg.resourcesUnpricedFor),
            fleetDashboard,
          ),
          // Only where the API reports HA replicas (revision 2026); a paused
          // service is left out, as in CloudDBProdServiceNotReady.
          alert(
            'CloudDBProdServiceWithoutHA',
            'warning',
            cfg.prodServiceWithoutHAFor,
            |||
              (
                clouddb_service_ha_replicas == 0
                unless %s
                  (clouddb_service_paused == 1)
              )
              * %s group_left (name, environment)
                clouddb_service_info{environment="%s"}
            ||| % [on(['project_id', 'service_id']), on(['project_id', 'service_id']), cfg.prodEnvironment],
            'A PROD database service runs without HA replicas.',
            'PROD service {{ $labels.name }} ({{ $labels.service_id }}) in project {{ $labels.project_id }} has had no high-availability replica for more than %s: a failure of its node is an outage.%s' % [util.human(cfg.prodServiceWithoutHAFor), dataAge('services')],
            serviceDashboard,
          ),
          alert(
            'CloudDBReplicaSetError',
            'critical',
            cfg.replicaSetErrorFor,
            withReplicaSet('(clouddb_replica_set_status{status="error"} == 1)'),
            'A read replica set is in error.',
            '%s has been in status error for more than %s.%s' % [replicaSet, util.human(cfg.replicaSetErrorFor), dataAge('replica_sets')],
            serviceDashboard,
          ),
          alert(
            'CloudDBReplicaSetStuck',
            'warning',
            cfg.replicaSetTransitionFor,
            withReplicaSet('(clouddb_replica_set_status{status=~"%s"} == 1)' % std.join('|', cfg.replicaSetTransitionStatuses)),
            'A read replica set has been in a transitional status for over an hour.',
            '%s has been {{ $labels.status }} for more than %s.%s' % [replicaSet, util.human(cfg.replicaSetTransitionFor), dataAge('replica_sets')],
            serviceDashboard,
          ),
          alert(
            'CloudDBVPCPeeringError',
            'warning',
            cfg.peeringErrorFor,
            withPeering('(clouddb_vpc_peering_error == 1)'),
            'A VPC peering reports an error.',
            '%s has reported an error for more than %s: %s.%s' % [peering, util.human(cfg.peeringErrorFor), peeringMessage, dataAge('peerings')],
            fleetDashboard,
          ),
          alert(
            'CloudDBVPCPeeringPending',
            'warning',
            cfg.peeringPendingFor,
            withPeering('(clouddb_vpc_peering_status{status="pending"} == 1)'),
            'A VPC peering has been pending for over an hour.',
            '%s has been pending for more than %s.%s' % [peering, util.human(cfg.peeringPendingFor), dataAge('peerings')],
            fleetDashboard,
          ),
          alert(
            'CloudDBAPICredentialsOld',
            'info',
            '1h',
            |||
              (time() - clouddb_api_key_created_timestamp_seconds > %d * 86400)
              * %s group_left (name, project_name)
                clouddb_api_key_info
            ||| % [cfg.credentialsMaxAgeDays, on(['project_id', 'public_key'])],
            'The API credentials in use are older than a year.',
            'Credentials {{ $labels.name }} ({{ $labels.public_key }}) of project {{ $labels.project_name }} ({{ $labels.project_id }}) were created {{ $value | humanizeDuration }} ago.',
            dashboard('exporter-health.json', ['project_id']),
          ),
        ],
      },
      {
        // From the opt-in usage and log collectors: series per node (role,
        // ordinal) and job, and log entries by severity. No series without
        // the collectors, so nothing fires then.
        name: 'clouddb-data-plane',
        rules: [
          alert(
            'CloudDBServiceCPUSaturated',
            'warning',
            cfg.serviceCPUSaturatedFor,
            withService('(clouddb_service_system_cpu_usage_cores / clouddb_service_system_cpu_total_cores > %g <= %g)' % [cfg.serviceCPUSaturationThreshold, cfg.serviceUsageAbsurdRatio]),
            'A database node uses nearly all of its CPU.',
            'The {{ $labels.role }} node {{ $labels.ordinal }} of service {{ $labels.name }} ({{ $labels.service_id }}, {{ $labels.environment }}) in project {{ $labels.project_id }} has used {{ $value | humanizePercentage }} of its CPU, over %s, for more than %s.%s%s' % [util.percent(cfg.serviceCPUSaturationThreshold), util.human(cfg.serviceCPUSaturatedFor), bucketAge, dataAge('usage')],
            serviceDashboard,
          ),
          alert(
            'CloudDBServiceMemorySaturated',
            'warning',
            cfg.serviceMemorySaturatedFor,
            withService('(clouddb_service_system_memory_usage_bytes / clouddb_service_system_memory_total_bytes > %g <= %g)' % [cfg.serviceMemorySaturationThreshold, cfg.serviceUsageAbsurdRatio]),
            'A database node uses nearly all of its memory.',
            'The {{ $labels.role }} node {{ $labels.ordinal }} of service {{ $labels.name }} ({{ $labels.service_id }}, {{ $labels.environment }}) in project {{ $labels.project_id }} has used {{ $value | humanizePercentage }} of its memory, over %s, for more than %s.%s%s' % [util.percent(cfg.serviceMemorySaturationThreshold), util.human(cfg.serviceMemorySaturatedFor), bucketAge, dataAge('usage')],
            serviceDashboard,
          ),
          alert(
            'CloudDBServiceConnectionsHigh',
            'warning',
            cfg.serviceConnectionsHighFor,
            withService('(clouddb_service_database_connections > %d <= %d)' % [cfg.serviceConnectionsThreshold, cfg.serviceConnectionsAbsurd]),
            'A database node has many connections.',
            'The {{ $labels.role }} node {{ $labels.ordinal }} of service {{ $labels.name }} ({{ $labels.service_id }}, {{ $labels.environment }}) in project {{ $labels.project_id }} has had more than %d connections ({{ $value }} now) for more than %s.%s%s' % [cfg.serviceConnectionsThreshold, util.human(cfg.serviceConnectionsHighFor), bucketAge, dataAge('usage')],
            serviceDashboard,
          ),
          // The saturation alerts' companion: a node that stops reporting
          // loses its series, and its alerts would resolve in silence. A
          // node that left (a replacement: ordinal 0 gone, ordinal 3 new)
          // looks the same within the lookback: a service with as many
          // nodes reporting fresh usage as it has nodes now
          // (clouddb_service_resources) misses none.
          alert(
            'CloudDBServiceUsageMissing',
            'warning',
            cfg.serviceUsageMissingFor,
            withService(std.rstripChars(|||
              (
                time()
                - (
                  last_over_time(%(m)s[%(lookback)s])
                  unless
                  (%(fresh)s)
                )
                and %(byService)s (clouddb_service_status{status="READY"} == 1)
                and %(byProject)s clouddb_exporter_usage_refresh_period_seconds
                unless %(byService)s (
                  count %(groupService)s (count %(groupNode)s (%(fresh)s))
                  >= %(byService)s clouddb_service_resources
                )
              )
            ||| % {
              // Fresh by the exporter's clock, or by the API's: buckets are
              // stamped in the API's clock, off by clouddb_api_clock_skew_seconds.
              fresh: '(time() - %(m)s <= %(p)s group_left () (%(limit)s)) or (time() - %(m)s + %(p)s group_left () clouddb_api_clock_skew_seconds <= %(p)s group_left () (%(limit)s))' % {
                m: 'clouddb_service_usage_bucket_timestamp_seconds',
                p: on(['project_id']),
                limit: 'clouddb_exporter_usage_refresh_period_seconds + %d' % cfg.serviceUsageMissingSlackSeconds,
              },
              groupService: by(['project_id', 'service_id']),
              groupNode: by(['project_id', 'service_id', 'role', 'ordinal']),
              m: 'clouddb_service_usage_bucket_timestamp_seconds',
              lookback: cfg.serviceUsageMissingLookback,
              slack: cfg.serviceUsageMissingSlackSeconds,
              byProject: on(['project_id']),
              byService: on(['project_id', 'service_id']),
            }, '\n')),
            'A READY database node reports no usage.',
            'The {{ $labels.role }} node {{ $labels.ordinal }} of READY service {{ $labels.name }} ({{ $labels.service_id }}, {{ $labels.environment }}) in project {{ $labels.project_id }} has exported no usage for more than %s; its newest bucket is {{ $value | humanizeDuration }} old. Its saturation alerts cannot fire, and those firing resolve: a node too busy to report looks like this.%s' % [util.human(cfg.serviceUsageMissingFor), dataAge('usage')],
            serviceDashboard,
          ),
          alert(
            'CloudDBServiceJobFailing',
            'warning',
            cfg.serviceJobFailingFor,
            withService('(clouddb_service_database_job_success == 0)'),
            'A database job keeps failing.',
            'Job {{ $labels.job_id }} of service {{ $labels.name }} ({{ $labels.service_id }}, {{ $labels.environment }}) in project {{ $labels.project_id }} has failed on its newest run for more than %s.%s%s' % [util.human(cfg.serviceJobFailingFor), bucketAge, dataAge('usage')],
            serviceDashboard,
          ),
          // What the counter gained since its last sample before the
          // window, found up to serviceFatalLogsLookback back: exact, and
          // a restart's gap in the series (the offset falling into it, a
          // counter the state file carries over) adds nothing. increase()
          // covers a counter reset within the window (a restart without the
          // state file) and a series younger than the window; every series
          // is served at 0 before its first entry, so it sees those too.
          // warning, not critical: PostgreSQL logs a failed login as FATAL.
          alert(
            'CloudDBServiceFatalLogs',
            'warning',
            cfg.serviceFatalLogsFor,
            withService(std.rstripChars(|||
              (
                sum without (severity) (
                  (%(m)s - last_over_time(%(m)s[%(l)s] offset %(w)s) > 0)
                  or
                  increase(%(m)s[%(w)s])
                ) > 0
              )
            ||| % { m: 'clouddb_service_log_entries_total{severity=~"FATAL|PANIC"}', w: cfg.serviceFatalLogsWindow, l: cfg.serviceFatalLogsLookback }, '\n')),
            'A database service logged FATAL or PANIC entries.',
            'Service {{ $labels.name }} ({{ $labels.service_id }}, {{ $labels.environment }}) in project {{ $labels.project_id }} logged {{ printf "%%.0f" $value }} FATAL or PANIC entries in the last %s.%s' % [util.human(cfg.serviceFatalLogsWindow), dataAge('logs')],
            serviceDashboard,
          ),
          alert(
            'CloudDBServiceErrorLogsHigh',
            'warning',
            cfg.serviceErrorLogsHighFor,
            withService('(sum without (severity) (rate(clouddb_service_log_entries_total{severity="ERROR"}[%s])) * 60 > %g)' % [cfg.serviceErrorLogsWindow, cfg.serviceErrorLogsPerMinuteThreshold]),
            'A database service logs many ERROR entries.',
            'Service {{ $labels.name }} ({{ $labels.service_id }}, {{ $labels.environment }}) in project {{ $labels.project_id }} has logged {{ $value | humanize }} ERROR entries a minute (over %s), more than %g, for more than %s.%s' % [util.human(cfg.serviceErrorLogsWindow), cfg.serviceErrorLogsPerMinuteThreshold, util.human(cfg.serviceErrorLogsHighFor), dataAge('logs')],
            serviceDashboard,
          ),
          // Per project: the reads say how many were truncated, not which
          // service's entries went uncounted.
          alert(
            'CloudDBLogReadsTruncated',
            'warning',
            cfg.logReadsTruncatedFor,
            'sum %s (increase(clouddb_exporter_log_pages_truncated_total[%s])) > 0' % [by(['project_id']), cfg.logReadsTruncatedWindow],
            'Log reads leave entries uncounted.',
            'Log reads of project {{ $labels.project_id }} on {{ $labels.instance }} have left entries uncounted: {{ printf "%%.0f" $value }} truncated in the last %s (--collect.logs.max-pages reached, a page sent again, or an entry over --api.max-value-size). The log counters and the log alerts undercount; the exporter logs each such read with its service.%s' % [util.human(cfg.logReadsTruncatedWindow), dataAge('logs')],
            dashboard('exporter-health.json', ['project_id']),
          ),
          // A label per collector: both periods of a project may be over,
          // and two series of the same labels would fail the rule. A period
          // beyond dataPlaneStarvedFactor times its threshold is starvation
          // beyond doubt and fires after the short for (within minutes of a
          // start: the periods are published before the first read); one
          // merely over must also have been over dataPlaneStarvedSustained
          // ago, which skips the first cycles after a start, whose plans may
          // still change.
          alert(
            'CloudDBDataPlaneStarved',
            'warning',
            cfg.dataPlaneStarvedFor,
            std.rstripChars(|||
              label_replace(%(u)s > %(ut)d and (%(u)s > %(uf)d or %(u)s offset %(o)s > %(ut)d), "collector", "usage", "", "")
              or
              label_replace(%(l)s > %(lt)d and (%(l)s > %(lf)d or %(l)s offset %(o)s > %(lt)d), "collector", "logs", "", "")
            ||| % {
              u: 'clouddb_exporter_usage_refresh_period_seconds',
              l: 'clouddb_exporter_log_read_period_seconds',
              ut: cfg.dataPlaneStarvedUsageRefreshSeconds,
              lt: cfg.dataPlaneStarvedLogReadSeconds,
              uf: cfg.dataPlaneStarvedUsageRefreshSeconds * cfg.dataPlaneStarvedFactor,
              lf: cfg.dataPlaneStarvedLogReadSeconds * cfg.dataPlaneStarvedFactor,
              o: cfg.dataPlaneStarvedSustained,
            }, '\n'),
            'The API call budget leaves the data plane almost nothing.',
            'The {{ $labels.collector }} collector of project {{ $labels.project_id }} on {{ $labels.instance }} {{ if eq $labels.collector "usage" }}refreshes each selected usage series{{ else }}reads each selected service\'s logs{{ end }} only every {{ $value | humanizeDuration }}, more than the {{ if eq $labels.collector "usage" }}%s{{ else }}%s{{ end }} this alert allows: the calls the state leaves of --api.rate-limit do not cover it. Its series are missing or old and its alerts cannot fire, though it reports success. The exporter logged a WARN with the --api.rate-limit that covers it.' % [humanSeconds(cfg.dataPlaneStarvedUsageRefreshSeconds), humanSeconds(cfg.dataPlaneStarvedLogReadSeconds)],
            dashboard('exporter-health.json', ['project_id']),
          ),
        ],
      },
      {
        // From the change timeline (docs/changes.md): info alerts an on-call
        // wants to know of; the feed (GET /api/v1/changes) says what changed.
        name: 'clouddb-changes',
        rules: [
          alert(
            'CloudDBProdServiceResizedDown',
            'info',
            '1m',
            |||
              (
                sum %s (delta(clouddb_service_cpu_cores[%s])) < 0
                or
                sum %s (delta(clouddb_service_memory_bytes[%s])) < 0
              )
              * %s group_left (name, environment)
                clouddb_service_info{environment="PROD"}
            ||| % [by(['project_id', 'service_id']), cfg.changesWindow, by(['project_id', 'service_id']), cfg.changesWindow, on(['project_id', 'service_id'])],
            'A PROD service was resized down.',
            'Service {{ $labels.name }} ({{ $labels.service_id }}) in project {{ $labels.project_id }} has less CPU or memory than %s ago; the change feed has its before and after.' % util.human(cfg.changesWindow),
            serviceDashboard,
          ),
          alert(
            'CloudDBProdServiceHAReduced',
            'info',
            '1m',
            |||
              (delta(clouddb_service_ha_replicas[%s]) < 0)
              * %s group_left (name, environment)
                clouddb_service_info{environment="PROD"}
            ||| % [cfg.changesWindow, on(['project_id', 'service_id'])],
            'HA was reduced on a PROD service.',
            'Service {{ $labels.name }} ({{ $labels.service_id }}, {{ $labels.environment }}) in project {{ $labels.project_id }} has fewer HA replicas than %s ago.' % util.human(cfg.changesWindow),
            serviceDashboard,
          ),
          alert(
            'CloudDBProdResourceDeleted',
            'info',
            '1m',
            |||
              (
                (max_over_time(clouddb_service_info{environment="PROD"}[%(w)s]) unless clouddb_service_info)
                and %(onProject)s (increase(clouddb_changes_total{object_type="service", kind="deleted"}[%(w)s]) > 0)
              )
              or
              (
                (max_over_time(clouddb_replica_set_info{environment="PROD"}[%(w)s]) unless clouddb_replica_set_info)
                and %(onProject)s (increase(clouddb_changes_total{object_type="replica_set", kind="deleted"}[%(w)s]) > 0)
              )
            ||| % { w: cfg.changesWindow, onProject: on(['project_id']) },
            'A PROD service or replica set was deleted.',
            '{{ with $labels.replica_set_id }}Replica set {{ . }} of service {{ $labels.service_id }}{{ else }}Service {{ $labels.service_id }}{{ end }} ({{ $labels.name }}, PROD) in project {{ $labels.project_id }} was deleted in the last %s.' % util.human(cfg.changesWindow),
            fleetDashboard,
          ),
          alert(
            'CloudDBVPCPeeringDeleted',
            'info',
            '1m',
            'increase(clouddb_changes_total{object_type="peering", kind="deleted"}[%s]) > 0' % cfg.changesWindow,
            'A VPC peering was deleted.',
            '{{ $value | humanize }} peering(s) of project {{ $labels.project_id }} were deleted in the last %s; the change feed names them.' % util.human(cfg.changesWindow),
            fleetDashboard,
          ),
          alert(
            'CloudDBAPIKeyRotated',
            'info',
            '1m',
            'increase(clouddb_changes_total{object_type="api_key", kind="rotated"}[%s]) > 0' % cfg.changesWindow,
            'The API key in use was rotated.',
            'The API key the exporter reads project {{ $labels.project_id }} with changed in the last %s.' % util.human(cfg.changesWindow),
            dashboard('exporter-health.json', ['project_id']),
          ),
        ],
      },
      {
        name: 'clouddb-exporter',
        rules: [
          alert(
            'CloudDBExporterDown',
            'critical',
            cfg.exporterDownFor,
            'up{%s} == 0' % cfg.exporterSelector,
            'The clouddb exporter cannot be scraped.',
            'Target {{ $labels.instance }} of job {{ $labels.job }} has been down for more than %s: no fleet metrics while it lasts. %s' % [
              util.human(cfg.exporterDownFor),
              if cfg.keepFiringFor == '' then
                'The alerts on its metrics resolved when its series went stale: not a recovery of the fleet.'
              else
                'The alerts on its metrics that were firing keep firing on their last state for %s after its series went stale, then resolve: not a recovery of the fleet. Pending ones were dropped.' % util.human(cfg.keepFiringFor),
            ],
            dashboard('exporter-health.json', []),
            keepFiring=false,
          ),
          // Down needs a target that is down; this one fires when there is
          // none to scrape. Its series has no target labels: no dashboard.
          alert(
            'CloudDBExporterAbsent',
            'critical',
            cfg.exporterAbsentFor,
            'absent(up{%s})' % cfg.exporterSelector,
            'Prometheus scrapes no clouddb exporter.',
            'Prometheus has had no scrape target matching %s for more than %s: the exporter is not running, or not discovered (a ServiceMonitor or scrape config that selects nothing, a pod that never started after a rollout). No fleet metric exists, so no other clouddb alert can fire.' % [cfg.exporterSelector, util.human(cfg.exporterAbsentFor)],
            keepFiring=false,
          ),
          alert(
            'CloudDBCollectorFailing',
            'warning',
            cfg.collectorFailingFor,
            'clouddb_exporter_collector_success == 0',
            "A part of the exporter's collection keeps failing.",
            'Collector {{ $labels.collector }} of project {{ $labels.project_id }} on {{ $labels.instance }} has failed every attempt for more than %s.' % util.human(cfg.collectorFailingFor),
            dashboard('exporter-health.json', ['project_id']),
          ),
          // One cause, one page: the services list of every cycle refused
          // or failing. Alertmanager's inhibition (docs/alerts.md) holds
          // back the project's per-part alerts while this one fires. The
          // cause is read when the description is rendered, never a label:
          // a changed cause must not restart the alert.
          alert(
            'CloudDBProjectDown',
            'critical',
            cfg.projectDownFor,
            'clouddb_up == 0',
            'The exporter cannot read a project.',
            'Every services list of project {{ $labels.project_id }} on {{ $labels.instance }} has failed for more than %s: %s. Nothing of the project is read; its series stay as last read. The exporter logged one ERROR with the fix.' % [util.human(cfg.projectDownFor), projectDownCause],
            dashboard('exporter-health.json', ['project_id']),
          ),
          // The page for an outage. By default (--collect.max-staleness=0) an
          // API outage removes no series, so the fleet alerts stay as they
          // were and this alert says how old their truth is. The newest
          // success Prometheus saw within the lookback counts, so that a
          // restart (which forgets it) does not resolve the alert. A part
          // that has not succeeded since the exporter started is stale once
          // the exporter has run longer than the threshold: a part off by
          // design (usage on a plan without it) says so before then.
          // The start is clouddb_exporter_start_time_seconds, served
          // whatever --web.disable-exporter-metrics says, or for an older
          // exporter process_start_time_seconds.
          alert(
            'CloudDBDataStale',
            'critical',
            cfg.dataStaleFor,
            std.rstripChars(|||
              time() - (max_over_time(%(m)s[%(lookback)s]) > 0) > %(threshold)d
              or
              (
                time() - %(m)s > %(threshold)d
                unless %(byTarget)s (time() - (clouddb_exporter_start_time_seconds or %(byTarget)s process_start_time_seconds) <= %(threshold)d)
              )
            ||| % {
              m: 'clouddb_exporter_collector_last_success_timestamp_seconds',
              lookback: cfg.dataStaleLookback,
              threshold: cfg.dataStaleThresholdSeconds,
              byTarget: util.on(cfg.targetLabels, []),
            }, '\n'),
            "The exporter's data is stale.",
            'Collector {{ $labels.collector }} of project {{ $labels.project_id }} on {{ $labels.instance }} {{ with printf "max_over_time(clouddb_exporter_collector_last_success_timestamp_seconds{%s, collector=%%q}[%s]) > 0" %s $labels.collector | query }}last succeeded {{ $value | humanizeDuration }} ago{{ else }}has not succeeded since the exporter started{{ with printf "time() - (clouddb_exporter_start_time_seconds{%s} or process_start_time_seconds{%s})" %s %s | query }} {{ . | first | value | humanizeDuration }} ago{{ end }}{{ end }}: its metrics are gone or outdated.' % [matchers(['project_id']), cfg.dataStaleLookback, args(['project_id']), matchers([]), matchers([]), args([]), args([])],
            dashboard('exporter-health.json', ['project_id']),
          ),
          // Server errors, transport errors/timeouts, answers that do not
          // decode and refused credentials. 404 and 409 are left out: they
          // are normal when resources disappear or change between a list
          // and a get.
          alert(
            'CloudDBAPIErrors',
            'warning',
            cfg.apiErrorsFor,
            |||
              sum %(by)s (rate(clouddb_exporter_api_requests_total{code=~"5..|error|decode_error|401|403"}[5m]))
              /
              sum %(by)s (rate(clouddb_exporter_api_requests_total[5m]))
              > %(threshold)g
            ||| % { by: by(['project_id']), threshold: cfg.apiErrorRatioThreshold },
            'The cloud API answers many requests with errors.',
            '{{ $value | humanizePercentage }} of the API requests of {{ with $labels.project_id }}project {{ . }}{{ else }}the project discovery (GET /projects){{ end }} from {{ $labels.instance }} failed (5xx, 401/403, transport errors or timeouts, answers that do not decode) over the last 5 minutes. Failing most: %s.' % failingOperations,
            dashboard('exporter-health.json', [], ['project_id']),
          ),
          alert(
            'CloudDBAPIRateLimited',
            'warning',
            cfg.apiRateLimitedFor,
            |||
              sum %(by)s (rate(clouddb_exporter_api_requests_total{code="429"}[5m]))
              /
              sum %(by)s (rate(clouddb_exporter_api_requests_total[5m]))
              > %(threshold)g
            ||| % { by: by(['project_id']), threshold: cfg.apiRateLimitedRatioThreshold },
            'The cloud API rate-limits the exporter.',
            '{{ $value | humanizePercentage }} of the API requests of {{ with $labels.project_id }}project {{ . }}{{ else }}the project discovery (GET /projects){{ end }} from {{ $labels.instance }} were answered 429 over the last 5 minutes.',
            dashboard('exporter-health.json', [], ['project_id']),
          ),
          // Only in project discovery mode; apart from
          // CloudDBConfigReloadFailed, as there is no file to blame.
          alert(
            'CloudDBProjectDiscoveryFailing',
            'warning',
            cfg.discoveryFailingFor,
            'clouddb_exporter_discovery_success == 0',
            'The exporter cannot discover its projects.',
            'The project discovery (GET /projects) of {{ $labels.instance }} has failed for more than %s; {{ with printf "time() - (clouddb_exporter_discovery_last_success_timestamp_seconds{%s} > 0)" %s | query }}it last succeeded {{ . | first | value | humanizeDuration }} ago{{ else }}it has not succeeded since the exporter started{{ end }}. The projects it found before are still polled, but new projects are not added nor removed ones dropped until it succeeds. The reason is in the exporter\'s log and in clouddb_exporter_api_requests_total{operation="listProjects"}.' % [util.human(cfg.discoveryFailingFor), matchers([]), args([])],
            dashboard('exporter-health.json', []),
          ),
          alert(
            'CloudDBConfigReloadFailed',
            'warning',
            cfg.configReloadFailedFor,
            'clouddb_exporter_config_last_reload_successful == 0',
            'The exporter refused its configuration file.',
            "The last reload of --config.file on {{ $labels.instance }} failed; the previous configuration is still running. The reason is in the exporter's log.",
            dashboard('exporter-health.json', []),
          ),
          alert(
            'CloudDBStateFileUnhealthy',
            'warning',
            cfg.stateFileUnhealthyFor,
            'clouddb_exporter_state_file_healthy == 0',
            'The exporter cannot keep its state file.',
            "The {{ $labels.state_file }} state file of {{ $labels.instance }} was refused at start or cannot be written; {{ with printf \"time() - (clouddb_exporter_state_file_last_write_timestamp_seconds{%s} > 0)\" %s | query }}it was last written {{ . | first | value | humanizeDuration }} ago{{ else }}it has not been written since the exporter started{{ end }}: a restart would not resume from the latest positions. The reason is in the exporter's log." % [matchers(['state_file']), args(['state_file'])],
            dashboard('exporter-health.json', []),
          ),
        ],
      },
    ],
  },
}
