// Builders for the Grafana dashboards: every panel queries the dashboard's
// ${datasource}, carries a title, a description and a unit, and gets its id
// from its position in the dashboard.
{
  datasource:: { type: 'prometheus', uid: '${datasource}' },

  // Queries. range: a time series; instant: the last value; table: the
  // last value of each series, one row per series.
  range(expr, legend='__auto'):: { datasource: $.datasource, expr: expr, legendFormat: legend, range: true },
  instant(expr, legend='__auto'):: { datasource: $.datasource, expr: expr, legendFormat: legend, instant: true, range: false },
  table(expr, legend='__auto'):: $.instant(expr, legend) { format: 'table' },

  pos(x, y, w, h):: { x: x, y: y, w: w, h: h },

  local refIDs = ['A', 'B', 'C', 'D', 'E', 'F'],
  panel(type, title, description, unit, pos, targets, options={}, custom={}):: {
    type: type,
    title: title,
    description: description,
    datasource: $.datasource,
    gridPos: pos,
    fieldConfig: {
      defaults: { unit: unit } + (if custom == {} then {} else { custom: custom }),
      overrides: [],
    },
    options: options,
    targets: std.mapWithIndex(function(i, t) t { refId: refIDs[i] }, targets),
  },

  row(title, y):: { type: 'row', title: title, collapsed: false, panels: [], gridPos: $.pos(0, y, 24, 1) },

  // A row closed by default, holding its panels: its queries run only
  // once it is opened.
  collapsedRow(title, y, panels):: $.row(title, y) { collapsed: true, panels: panels },

  // A collapsed row repeated over a variable: one row per value, and none
  // while the variable has no value. For parts of the exporter that are off
  // unless configured: the variable lists the targets whose metrics show
  // the part on, so the row is there only where they do. (Grafana 11 and 12
  // keep one closed placeholder row, titled with "All", when a repeat
  // variable is empty; see the mixin's README.)
  repeatedRow(title, y, variable, panels):: $.collapsedRow(title, y, panels) { repeat: variable },

  // Grafana's custom unit for vCPU cores ("4 cores").
  cores:: 'suffix: cores',

  // Draws an alert's threshold on a time series: green below, red from
  // value on, as a line with a shaded area.
  thresholdLine(value):: {
    fieldConfig+: { defaults+: {
      custom+: { thresholdsStyle: { mode: 'line+area' } },
      thresholds: { mode: 'absolute', steps: [{ color: 'transparent', value: null }, { color: 'red', value: value }] },
    } },
  },

  // Links a table's name and service_id columns to the service dashboard
  // on the row's target, project and service.
  serviceLinks(cfg, fields=['name', 'service_id']):: {
    fieldConfig+: { overrides+: [
      {
        matcher: { id: 'byName', options: f },
        properties: [{ id: 'links', value: [{
          title: 'Service detail',
          url: '/d/%s?var-job=${__data.fields.job}&var-instance=${__data.fields.instance}&var-project_id=${__data.fields.project_id}&var-service_id=${__data.fields.service_id}&${__url_time_range}' % cfg.dashboardUIDs['service-detail.json'],
        }] }],
      }
      for f in fields
    ] },
  },

  // The same link from every series of a time series or state timeline.
  seriesServiceLinks(cfg):: {
    fieldConfig+: { defaults+: { links: [{
      title: 'Service detail',
      url: '/d/%s?var-job=${__field.labels.job}&var-instance=${__field.labels.instance}&var-project_id=${__field.labels.project_id}&var-service_id=${__field.labels.service_id}&${__url_time_range}' % cfg.dashboardUIDs['service-detail.json'],
    }] } },
  },

  stat(title, description, unit, pos, targets)::
    $.panel('stat', title, description, unit, pos, targets, {
      colorMode: 'value',
      graphMode: 'none',
      reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
      textMode: 'auto',
    }),

  piechart(title, description, unit, pos, targets)::
    $.panel('piechart', title, description, unit, pos, targets, {
      legend: { displayMode: 'table', placement: 'right', showLegend: true, values: ['value'] },
      pieType: 'donut',
      reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false },
    }),

  tablePanel(title, description, unit, pos, targets)::
    $.panel('table', title, description, unit, pos, targets, { showHeader: true }) {
      transformations: [{ id: 'organize', options: { excludeByName: { Time: true, Value: true, __name__: true } } }],
    },

  // Shows a table's value column, named, largest first (tablePanel hides
  // it: most tables list series whose value is 1).
  valueColumn(name):: {
    options+: { sortBy: [{ displayName: name, desc: true }] },
    transformations: [{ id: 'organize', options: { excludeByName: { Time: true, __name__: true }, renameByName: { Value: name } } }],
  },

  stateTimeline(title, description, unit, pos, targets)::
    $.panel('state-timeline', title, description, unit, pos, targets, {
      alignValue: 'left',
      legend: { displayMode: 'list', placement: 'bottom', showLegend: true },
      mergeValues: true,
      rowHeight: 0.9,
      showValue: 'auto',
    }, { fillOpacity: 80, lineWidth: 0 }),

  // Sizes change in steps: draw them so (stepAfter).
  timeseries(title, description, unit, pos, targets, steps=false)::
    $.panel('timeseries', title, description, unit, pos, targets, {
      legend: { displayMode: 'table', placement: 'right', showLegend: true },
      tooltip: { mode: 'multi', sort: 'desc' },
    }, { drawStyle: 'line', fillOpacity: 10, lineWidth: 1, showPoints: 'never' }
       + (if steps then { lineInterpolation: 'stepAfter' } else {})),

  // mappings turns {value: [text, color]} into a Grafana value mapping.
  mappings(m):: {
    fieldConfig+: { defaults+: { mappings: [{
      type: 'value',
      options: {
        [k]: { text: m[k][0], color: m[k][1], index: std.parseInt(k) }
        for k in std.objectFields(m)
      },
    }] } },
  },

  thresholds(steps):: {
    fieldConfig+: { defaults+: { thresholds: { mode: 'absolute', steps: steps } } },
  },

  // A variable offering the services by name, with their id as the value
  // (Grafana's regex with named groups text and value over query_result).
  serviceVariable(query):: $.variable('service_id', 'Service', 'query_result(%s)' % query, all=false) {
    regex: '/name="(?<text>[^"]*)".*service_id="(?<value>[^"]*)"/',
  },

  // A label_values variable on ${datasource}.
  variable(name, label, query, all=true):: {
    name: name,
    label: label,
    type: 'query',
    datasource: $.datasource,
    query: { query: query, refId: name },
    definition: query,
    current: {},
    refresh: 2,
    sort: 1,
    hide: 0,
    options: [],
    regex: '',
    includeAll: all,
    multi: all,
  } + (if all then { allValue: '.+' } else {}),

  // A variable the viewer never sees (hide: 2) with every value selected,
  // for a repeated row.
  hiddenVariable(name, query):: $.variable(name, name, query) {
    hide: 2,
    current: { selected: true, text: ['All'], value: ['$__all'] },
  },

  // The hidden variables listing the exporters whose opt-in usage or log
  // collector is on: only those report its part in
  // clouddb_exporter_collector_success (from their first read on).
  collectorVariable(name, part):: $.hiddenVariable(name, 'label_values(clouddb_exporter_collector_success{job=~"$job", instance=~"$instance", collector="%s"}, instance)' % part),

  datasourceVariable:: {
    name: 'datasource',
    label: 'Data source',
    type: 'datasource',
    query: 'prometheus',
    current: {},
    hide: 0,
    refresh: 1,
    regex: '',
    options: [],
  },

  // annotation marks the times where expr has a sample (Prometheus
  // annotations), titled and tagged by its labels.
  annotation(name, expr, title, text, tags):: {
    name: name,
    datasource: $.datasource,
    enable: true,
    hide: false,
    iconColor: 'purple',
    expr: expr,
    step: '1m',
    titleFormat: title,
    textFormat: text,
    tagKeys: std.join(',', tags),
    useValueForTime: false,
  },

  dashboard(cfg, file, title, description, variables, panels, annotations=[]):: {
    uid: cfg.dashboardUIDs[file],
    title: title,
    description: description,
    tags: cfg.dashboardTags,
    editable: false,
    graphTooltip: 1,
    schemaVersion: 39,
    version: 1,
    time: { from: 'now-6h', to: 'now' },
    refresh: cfg.dashboardRefresh,
    timezone: cfg.dashboardTimezone,
    links: [{ type: 'dashboards', tags: ['clouddb'], title: 'CloudDB dashboards', asDropdown: true, includeVars: true, keepTime: true }],
    annotations: { list: annotations },
    templating: { list: [$.datasourceVariable] + variables },
    // Ids by position; the panels of a collapsed row get 100 * the row's.
    panels: std.mapWithIndex(
      function(i, p) p { id: i + 1 } + (
        if std.objectHas(p, 'panels')
        then { panels: std.mapWithIndex(function(j, c) c { id: 100 * (i + 1) + j + 1 }, p.panels) }
        else {}
      ),
      panels,
    ),
  },
}
