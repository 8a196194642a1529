// Small helpers shared by the rules and dashboards.
{
  // human turns a Prometheus duration of one unit ('5m', '1h', '90s') into
  // words for alert descriptions ('5 minutes', '1 hour').
  human(d)::
    local n = std.parseInt(d[:std.length(d) - 1]);
    local unit = { s: 'second', m: 'minute', h: 'hour', d: 'day' }[d[std.length(d) - 1]];
    '%d %s%s' % [n, unit, if n == 1 then '' else 's'],

  // seconds turns a Prometheus duration of one unit into seconds.
  seconds(d)::
    std.parseInt(d[:std.length(d) - 1]) * { s: 1, m: 60, h: 3600, d: 86400 }[d[std.length(d) - 1]],

  // bytes writes a byte count in the largest binary unit that divides it
  // ('1 GiB', '512 MiB'), for alert descriptions.
  bytes(n)::
    local units = [['TiB', 1099511627776], ['GiB', 1073741824], ['MiB', 1048576], ['KiB', 1024]];
    local fit = [u for u in units if n >= u[1] && n % u[1] == 0];
    if std.length(fit) > 0 then '%d %s' % [n / fit[0][1], fit[0][0]] else '%d bytes' % n,

  // percent writes a ratio as a percentage ('90%'), for alert descriptions.
  percent(r):: '%g%%' % (r * 100),

  // on and by build the matching and grouping clauses of joins and
  // aggregations: the target labels first, then the given ones.
  on(targetLabels, labels):: 'on (%s)' % std.join(', ', targetLabels + labels),
  by(targetLabels, labels):: 'by (%s)' % std.join(', ', targetLabels + labels),
}
