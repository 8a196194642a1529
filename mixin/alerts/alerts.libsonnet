// Alerting rules. Each alert has a section in alerts/runbook.md (its anchor
// is the alert's name in lower case) and promtool tests in alerts/tests/.
//
// Joins match on the target labels (job, instance) too, so that two
// exporter replicas polling the same project (each a separate target) never
// make a many-to-many match.
//
// Statuses are alerted on with `for:` rather than with the
// *_status_changed_timestamp_seconds metrics: those restart with the
// exporter, while Prometheus keeps the pending state of an alert across
// exporter restarts.
local util = import '../lib/util.libsonnet';

{
  local cfg = $._config,
  local on(labels) = util.on(cfg.targetLabels, labels),
  local by(labels) = util.by(cfg.targetLabels, labels),
  local alert(name, severity, for_, expr, summary, description) = {
    alert: name,
    expr: expr,
    'for': for_,
    labels: { severity: severity },
    annotations: {
      summary: summary,
      description: description,
      runbook_url: '%s#%s' % [cfg.runbookURL, std.asciiLower(name)],
    },
  },

  prometheusAlerts+:: {
    groups+: [
      {
        name: 'clouddb-fleet',
        rules: [
          alert(
            'CloudDBServiceUnstable', 'critical', cfg.serviceUnstableFor,
            |||
              (clouddb_service_status{status="UNSTABLE"} == 1)
              * %s group_left (name, environment)
                clouddb_service_info
            ||| % on(['project_id', 'service_id']),
            'A database service is UNSTABLE.',
            'Service {{ $labels.name }} ({{ $labels.service_id }}, {{ $labels.environment }}) in project {{ $labels.project_id }} has been UNSTABLE for more than %s.' % util.human(cfg.serviceUnstableFor),
          ),
          alert(
            'CloudDBServiceStuckInTransition', 'warning', cfg.serviceTransitionFor,
            |||
              clouddb_service_status{status=~"%s"} == 1
            ||| % std.join('|', cfg.serviceTransitionStatuses),
            'A database service has been in a transitional status for over an hour.',
            'Service {{ $labels.service_id }} in project {{ $labels.project_id }} has been {{ $labels.status }} for more than %s.' % util.human(cfg.serviceTransitionFor),
          ),
          // PAUSED is left out: pausing is a deliberate operator action.
          alert(
            'CloudDBProdServiceNotReady', 'critical', cfg.prodServiceNotReadyFor,
            |||
              (
                (1 - sum without (status) (clouddb_service_status{status=~"READY|PAUSED"}))
                * %s group_left (name)
                  clouddb_service_info{environment="%s"}
              ) == 1
            ||| % [on(['project_id', 'service_id']), cfg.prodEnvironment],
            'A PROD database service is not READY.',
            'PROD service {{ $labels.name }} ({{ $labels.service_id }}) in project {{ $labels.project_id }} has not been READY for more than %s.' % util.human(cfg.prodServiceNotReadyFor),
          ),
          alert(
            'CloudDBReplicaSetError', 'critical', cfg.replicaSetErrorFor,
            'clouddb_replica_set_status{status="error"} == 1',
            'A read replica set is in error.',
            'Replica set {{ $labels.replica_set_id }} of service {{ $labels.service_id }} in project {{ $labels.project_id }} has been in status error for more than %s.' % util.human(cfg.replicaSetErrorFor),
          ),
          alert(
            'CloudDBReplicaSetStuck', 'warning', cfg.replicaSetTransitionFor,
            'clouddb_replica_set_status{status=~"%s"} == 1' % std.join('|', cfg.replicaSetTransitionStatuses),
            'A read replica set has been in a transitional status for over an hour.',
            'Replica set {{ $labels.replica_set_id }} of service {{ $labels.service_id }} in project {{ $labels.project_id }} has been {{ $labels.status }} for more than %s.' % util.human(cfg.replicaSetTransitionFor),
          ),
          alert(
            'CloudDBVPCPeeringError', 'warning', cfg.peeringErrorFor,
            'clouddb_vpc_peering_error == 1',
            'A VPC peering reports an error.',
            "Peering {{ $labels.peering_id }} of VPC {{ $labels.vpc_id }} in project {{ $labels.project_id }} has reported an error for more than %s; the message is in the exporter's log." % util.human(cfg.peeringErrorFor),
          ),
          alert(
            'CloudDBVPCPeeringPending', 'warning', cfg.peeringPendingFor,
            'clouddb_vpc_peering_status{status="pending"} == 1',
            'A VPC peering has been pending for over an hour.',
            'Peering {{ $labels.peering_id }} of VPC {{ $labels.vpc_id }} in project {{ $labels.project_id }} has been pending for more than %s.' % util.human(cfg.peeringPendingFor),
          ),
          alert(
            'CloudDBAPICredentialsOld', 'info', '1h',
            'time() - clouddb_api_key_created_timestamp_seconds > %d * 86400' % cfg.credentialsMaxAgeDays,
            'The API credentials in use are older than a year.',
            'Credentials {{ $labels.public_key }} of project {{ $labels.project_id }} were created {{ $value | humanizeDuration }} ago.',
          ),
        ],
      },
      {
        name: 'clouddb-exporter',
        rules: [
          alert(
            'CloudDBExporterDown', 'critical', cfg.exporterDownFor,
            'up{%s} == 0' % cfg.exporterSelector,
            'The clouddb exporter cannot be scraped.',
            'Target {{ $labels.instance }} of job {{ $labels.job }} has been down for more than %s: no fleet metrics and no fleet alerts while it lasts.' % util.human(cfg.exporterDownFor),
          ),
          alert(
            'CloudDBCollectorFailing', 'warning', cfg.collectorFailingFor,
            'clouddb_exporter_collector_success == 0',
            "A part of the exporter's collection keeps failing.",
            'Collector {{ $labels.collector }} of project {{ $labels.project_id }} on {{ $labels.instance }} has failed every attempt for more than %s.' % util.human(cfg.collectorFailingFor),
          ),
          // The page for an outage. By default (--collect.max-staleness=0) an
          // API outage removes no series, so the fleet alerts stay as they
          // were and this alert says how old their truth is. A collector that
          // never succeeded reports 0, which counts as stale.
          alert(
            'CloudDBDataStale', 'critical', cfg.dataStaleFor,
            'time() - clouddb_exporter_collector_last_success_timestamp_seconds > %d' % cfg.dataStaleThresholdSeconds,
            "The exporter's data is stale.",
            'Collector {{ $labels.collector }} of project {{ $labels.project_id }} on {{ $labels.instance }} last succeeded {{ $value | humanizeDuration }} ago: its metrics are gone or outdated.',
          ),
          // Server errors, transport errors/timeouts and refused credentials.
          // 404 and 409 are left out: they are normal when resources
          // disappear or change between a list and a get.
          alert(
            'CloudDBAPIErrors', 'warning', cfg.apiErrorsFor,
            |||
              sum %(by)s (rate(clouddb_exporter_api_requests_total{code=~"5..|error|401|403"}[5m]))
              /
              sum %(by)s (rate(clouddb_exporter_api_requests_total[5m]))
              > %(threshold)g
            ||| % { by: by(['project_id']), threshold: cfg.apiErrorRatioThreshold },
            'The cloud API answers many requests with errors.',
            '{{ $value | humanizePercentage }} of the API requests of project {{ $labels.project_id }} from {{ $labels.instance }} failed (5xx, 401/403, transport errors or timeouts) over the last 5 minutes.',
          ),
          alert(
            'CloudDBAPIRateLimited', 'warning', cfg.apiRateLimitedFor,
            |||
              sum %(by)s (rate(clouddb_exporter_api_requests_total{code="429"}[5m]))
              /
              sum %(by)s (rate(clouddb_exporter_api_requests_total[5m]))
              > %(threshold)g
            ||| % { by: by(['project_id']), threshold: cfg.apiRateLimitedRatioThreshold },
            'The cloud API rate-limits the exporter.',
            '{{ $value | humanizePercentage }} of the API requests of project {{ $labels.project_id }} from {{ $labels.instance }} were answered 429 over the last 5 minutes.',
          ),
          alert(
            'CloudDBConfigReloadFailed', 'warning', cfg.configReloadFailedFor,
            'clouddb_exporter_config_last_reload_successful == 0',
            'The exporter refused its configuration file.',
            "The last reload of --config.file on {{ $labels.instance }} failed; the previous configuration is still running. The reason is in the exporter's log and in the answer of POST /-/reload.",
          ),
        ],
      },
    ],
  },
}
