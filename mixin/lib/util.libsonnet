// Small helpers shared by the rules and dashboards.
{
  // human turns a Prometheus duration of one unit ('5m', '1h', '90s') into
  // words for alert descriptions ('5 minutes', '1 hour').
  human(d)::
    local n = std.parseInt(d[:std.length(d) - 1]);
    local unit = { s: 'second', m: 'minute', h: 'hour', d: 'day' }[d[std.length(d) - 1]];
    '%d %s%s' % [n, unit, if n == 1 then '' else 's'],

  // on and by build the matching and grouping clauses of joins and
  // aggregations: the target labels first, then the given ones.
  on(targetLabels, labels):: 'on (%s)' % std.join(', ', targetLabels + labels),
  by(targetLabels, labels):: 'by (%s)' % std.join(', ', targetLabels + labels),
}
