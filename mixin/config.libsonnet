// The mixin's settings. Override them when importing the mixin:
//
//   (import 'clouddb_exporter/mixin/mixin.libsonnet') + {
//     _config+:: { exporterSelector: 'job="my-clouddb"', dataStaleThresholdSeconds: 1800 },
//   }
{
  _config+:: {
    // Selects the exporter's scrape targets in alerts on `up` (the only
    // rule that cannot rely on a clouddb_ metric name): exactly the job the
    // shipped deployments create. A pattern would also match the jobs that
    // scrape the databases themselves (a postgres_exporter job named
    // clouddb-postgres, say), and a database down would page as the
    // exporter down.
    exporterSelector: 'job="clouddb-exporter"',

    // Labels every join and aggregation keeps: two exporter replicas polling
    // the same project are two targets and must never match many-to-many.
    targetLabels: ['job', 'instance'],

    // Thresholds, in the unit their name says.
    serviceUnstableFor: '5m',
    serviceTransitionFor: '1h',
    serviceTransitionStatuses: ['QUEUED', 'CONFIGURING', 'UPGRADING', 'RESUMING', 'PAUSING', 'DELETING', 'OPTIMIZING'],
    prodServiceNotReadyFor: '15m',
    prodEnvironment: 'PROD',
    replicaSetErrorFor: '5m',
    replicaSetTransitionFor: '1h',
    replicaSetTransitionStatuses: ['creating', 'resizing', 'deleting'],
    // Storage usage (revision 2026's metrics.storage_mb) growing faster
    // than this many bytes per hour, averaged over storageGrowthWindow.
    storageGrowthBytesPerHour: 1073741824,
    storageGrowthWindow: '6h',
    storageGrowthFor: '1h',
    // Storage forecast: a line fitted on the daily maxima of each service's
    // storage over storageForecastWindow (maxima, so that the sawtooth of
    // compression and retention jobs does not bend it). A service whose
    // storage would double within storageDoublingHorizon, holding at least
    // storageDoublingMinBytes and with storageForecastMinDays of history.
    storageForecastWindow: '14d',
    storageForecastMinDays: 7,
    storageDoublingHorizon: '30d',
    storageDoublingMinBytes: 1073741824,
    storageDoublingFor: '1h',
    // Components the cost estimate leaves out (clouddb_pricing_unpriced_resources).
    resourcesUnpricedFor: '1h',
    // A PROD service with no HA replica (revision 2026's ha_replicas).
    prodServiceWithoutHAFor: '1h',
    // Data-plane signals, from the opt-in usage and log collectors
    // (--collect.usage, --collect.logs); without them these alerts have no
    // series and never fire. Ratios are of the node's total (usage / total).
    serviceCPUSaturationThreshold: 0.9,
    serviceCPUSaturatedFor: '15m',
    serviceMemorySaturationThreshold: 0.9,
    serviceMemorySaturatedFor: '15m',
    // Connections of one node; set it below your services' max_connections.
    // An absolute number, not a ratio as for CPU and memory: the API reports
    // no connection limit to divide by.
    serviceConnectionsThreshold: 400,
    serviceConnectionsHighFor: '15m',
    // Defence in depth against absurd API values (the exporter rejects
    // them too): a usage above this many times the node's total, or more
    // connections than this, is no measurement and pages nothing.
    serviceUsageAbsurdRatio: 4,
    serviceConnectionsAbsurd: 1000000,
    // A node of a READY service whose usage was exported within the
    // lookback but is not now (the exporter drops a node whose window is
    // all null, as a CPU-starved node's is), or whose newest bucket, of any
    // of its series, is older than the project's usage refresh period plus
    // the slack (reads failing). Keep the for below
    // keepFiringFor, so that it fires before a saturation alert of the
    // node resolves; it resolves itself once the lookback has passed.
    serviceUsageMissingLookback: '6h',
    serviceUsageMissingSlackSeconds: 300,
    serviceUsageMissingFor: '5m',
    // A job whose newest run failed (job_success 0) for this long.
    serviceJobFailingFor: '15m',
    // Any FATAL or PANIC log entry counted within the window. The lookback
    // is how far before the window the rule looks for the counter's last
    // value: an exporter away for longer (a restart without the state
    // file's counts) falls back to increase() over the window.
    serviceFatalLogsWindow: '10m',
    serviceFatalLogsLookback: '1h',
    serviceFatalLogsFor: '1m',
    // ERROR log entries per minute, averaged over the window.
    serviceErrorLogsPerMinuteThreshold: 10,
    serviceErrorLogsWindow: '10m',
    serviceErrorLogsHighFor: '15m',
    // Log reads that left entries uncounted (the page cap, a repeated
    // page, an entry too large) within the window: the log counters and
    // alerts undercount.
    logReadsTruncatedWindow: '1h',
    logReadsTruncatedFor: '15m',
    // The data plane starved of API calls: the calls the state leaves
    // (90% of --api.rate-limit) refresh the usage series or read the logs
    // less often than these periods. 4 default usage intervals (5m): values
    // over 20 minutes old outlast the saturation alerts' for. 10 default
    // log intervals (1m): the log alerts' 10-minute windows would see no
    // read. Raise them if you lengthened the intervals on purpose. A period
    // over dataPlaneStarvedFactor times its threshold fires after the for
    // (a few minutes from a start); one merely over must also have been
    // over dataPlaneStarvedSustained plus the for ago (15 minutes), which
    // skips the first cycles after a start, whose plans may still change.
    dataPlaneStarvedUsageRefreshSeconds: 1200,
    dataPlaneStarvedLogReadSeconds: 600,
    dataPlaneStarvedFactor: 6,
    dataPlaneStarvedFor: '3m',
    dataPlaneStarvedSustained: '12m',
    peeringErrorFor: '5m',
    peeringPendingFor: '1h',
    credentialsMaxAgeDays: 365,
    // How far back the change alerts look (a resize down, HA reduced, a
    // deletion, a rotated key): each fires for as long after the change.
    changesWindow: '30m',
    // Every alert but CloudDBExporterDown keeps firing this long after its
    // expression stops matching (Prometheus 2.42+ keep_firing_for): when
    // the exporter is killed, rolled or unreachable its series go stale at
    // once, and without it every firing alert would send "resolved" within
    // a scrape and start its for: again after the restart. Keep it longer
    // than exporterDownFor plus a restart, so that an absence long enough
    // to resolve anything has paged through CloudDBExporterDown first. It
    // delays every real resolution as long; '' leaves keep_firing_for out.
    keepFiringFor: '10m',
    exporterDownFor: '3m',
    // No target matching exporterSelector at all (none discovered, a pod
    // that never starts after a rollout): CloudDBExporterDown, on up == 0,
    // cannot fire without a target.
    exporterAbsentFor: '10m',
    collectorFailingFor: '10m',
    // clouddb_up 0: every services list of a project refused or failing.
    // Below collectorFailingFor and dataStaleFor's wait, so that the one
    // page comes first and Alertmanager holds the per-part alerts back.
    projectDownFor: '5m',
    // Fifteen default --collect.interval cycles; raise it if your interval
    // is longer, or if the children refresh period
    // (clouddb_exporter_poll_children_refresh_period_seconds) is.
    dataStaleThresholdSeconds: 900,
    // How far back the newest success counts: longer than a restart.
    dataStaleLookback: '1h',
    dataStaleFor: '5m',
    apiErrorRatioThreshold: 0.1,
    apiErrorsFor: '10m',
    apiRateLimitedRatioThreshold: 0.05,
    apiRateLimitedFor: '15m',
    configReloadFailedFor: '5m',
    // A state file refused at start or not written: a restart would not
    // resume from the latest positions. Writes come every 10 s at most.
    stateFileUnhealthyFor: '10m',
    // The project discovery (GET /projects, neither --api.project-id nor
    // --config.file) failing: an API fault, not a refused configuration.
    discoveryFailingFor: '10m',

    // Links in the alerts' annotations.
    runbookURL: 'https://github.com/clouddb/clouddb_exporter/blob/main/alerts/runbook.md',
    // Your Grafana (e.g. 'https://grafana.example.org'), for the alerts'
    // dashboard_url annotations; left out while it is empty.
    grafanaURL: '',

    // Dashboards.
    // The exporter health dashboard's admin row, one per exporter whose
    // admin surface is on (--admin.listen-address). false leaves it out
    // altogether, for fleets that never turn the admin surface on.
    adminPanels: true,
    // The node usage and log rows of the service and fleet dashboards, one
    // per exporter whose opt-in usage or log collector is on
    // (--collect.usage, --collect.logs). false leaves them out.
    dataPlanePanels: true,
    dashboardTags: ['clouddb', 'clouddb_exporter'],
    dashboardRefresh: '1m',
    dashboardTimezone: '',
    dashboardUIDs: {
      'fleet-overview.json': 'clouddb-fleet-overview',
      'service-detail.json': 'clouddb-service-detail',
      'exporter-health.json': 'clouddb-exporter-health',
    },
  },
}
