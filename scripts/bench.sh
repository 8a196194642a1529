#!/usr/bin/env bash
# Runs the scrape, render, memory and poll-cycle benchmarks and the
# whole-binary memory measurement, and prints the goals of
# docs/performance.md as measured ratios and sizes: absolute times on a
# shared machine say little, ratios to baselines measured in the same run
# say whether the design holds.
#
#   BENCH_RSS=0        skip the whole-binary measurements: 10k services (about two
#                      minutes) and the hostile answers (about a minute)
#   BENCH_RSS_100K=1   also measure at 100k services (about four minutes, 2 GB free memory)
#   BENCH_RSS_DATAPLANE=1  also measure 10k services with the usage and log
#                      collectors at their default intervals (about five minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
trap 'rm -f "$out" "$out.rss"' EXIT

go test -run '^$' -bench 'BenchmarkScrape' -benchtime "${SCRAPE_BENCHTIME:-20x}" -benchmem ./exposition/ >>"$out"
# The goal variants again, long enough for a steady ratio.
go test -run '^$' -bench 'BenchmarkScrape/N=.*/(gzip|text)_vs_bytes' -benchtime "${GOAL_BENCHTIME:-1000x}" ./exposition/ >>"$out"
go test -run '^$' -bench 'BenchmarkRender|BenchmarkMemory' -benchtime "${RENDER_BENCHTIME:-10x}" -benchmem ./exposition/ >>"$out"
go test -run '^$' -bench 'BenchmarkPlainScrape' -benchtime "${RENDER_BENCHTIME:-10x}" ./exposition/ >>"$out"
go test -run '^$' -bench 'BenchmarkPollCycle/' -benchtime "${POLL_BENCHTIME:-3x}" ./poller/ >>"$out"
go test -run '^$' -bench 'BenchmarkCycleVsDecode' -benchtime "${CYCLE_BENCHTIME:-10x}" ./poller/ >>"$out"
go test -run '^$' -bench 'BenchmarkDiffVsPollCycle|BenchmarkDiffUnchanged' -benchtime "${DIFF_BENCHTIME:-5x}" -benchmem ./changes/ >>"$out"
go test -run '^$' -bench 'BenchmarkUsageMemory|BenchmarkLogsPublish' -benchtime "${DATAPLANE_BENCHTIME:-3x}" -benchmem ./dataplane/ >>"$out"
go test -run '^$' -bench 'BenchmarkUsageReadRightsizing' -benchtime "${DATAPLANE_BENCHTIME:-3x}" -benchmem ./dataplane/ >>"$out"
go test -run '^$' -bench 'BenchmarkTrackerMemory' -benchtime 1x ./rightsizing/ >>"$out"
# The built exporter over a 10k-service fleet against a server writing the
# same gzip bytes from one slice, in interleaved pairs (e2e/).
load=$(uptime | sed 's/.*load average: //')
go test -run '^$' -bench 'BenchmarkScrapeVsBytes' -benchtime "${PAIRS:-300}x" ./e2e/ >>"$out"

awk '
function metric(unit,   i) { for (i = 4; i <= NF; i++) if ($(i+1) == unit) return $i; return "" }
function key(prefix,   name) { name = $1; sub(prefix, "", name); sub(/-[0-9]+$/, "", name); return name }
/^BenchmarkScrape\// {
	split(key("^BenchmarkScrape/"), parts, "/"); n = parts[1]; v = parts[2]
	ns[n, v] = $3; allocs[n, v] = metric("allocs/op"); x[n, v] = metric("x_baseline"); per[n, v] = metric("allocs/scrape")
	if (!(n in seen)) { seen[n] = 1; order[++count] = n }
}
/^BenchmarkRender\// {
	split(key("^BenchmarkRender/"), parts, "/"); n = parts[1]; v = parts[2]
	rns[n, v] = $3; rper[n, v] = metric("allocs/resource"); rother[n, v] = metric("other_forms_rendered")
	if (!(n in rseen)) { rseen[n] = 1; rorder[++rcount] = n }
}
/^BenchmarkMemory\// {
	mem[++mcount] = sprintf("| %s | %.0f | %.0f | %.2f |", key("^BenchmarkMemory/"), metric("heap_bytes/service"), metric("expo_bytes/service"), metric("heap/expo"))
}
/^BenchmarkScrapeVsBytes/ {
	binary = sprintf("| %.2f | %.2f | %.2f | %s ms | %s ms |", metric("x_baseline"), metric("x_p10"), metric("x_p90"), metric("scrape_ms"), metric("bytes_ms"))
}
/^BenchmarkPlainScrape\// {
	plain[++plcount] = sprintf("| %s | %.1f ms | %.0f | %.0f | %.0f |", key("^BenchmarkPlainScrape/"), $3 / 1e6, metric("x_gzip"), metric("allocs/scrape"), metric("kept_bytes/service"))
}
/^BenchmarkCycleVsDecode\// {
	cycle[++ccount] = sprintf("| %s | %.2f | %.0f ms | %.0f ms | %.0f ms |", key("^BenchmarkCycleVsDecode/"), metric("x_decode"), metric("cycle_cpu_ms"), metric("decode_cpu_ms"), metric("transport_cpu_ms"))
}
/^BenchmarkUsageMemory\// {
	usage[++ucount] = sprintf("| %s | %.0f | %.1f ms | %.1f MB |", key("^BenchmarkUsageMemory/"), metric("kept_bytes/service"), metric("publish_ms"), metric("publish_bytes") / 1e6)
}
/^BenchmarkLogsPublish\// {
	logs[++lcount] = sprintf("| %s | %.1f ms | %.1f MB | %s |", key("^BenchmarkLogsPublish/"), $3 / 1e6, metric("B/op") / 1e6, metric("allocs/op"))
}
/^BenchmarkUsageReadRightsizing\// {
	rs[key("^BenchmarkUsageReadRightsizing/")] = $3; if (metric("rightsizing_share") > 0) rshare = metric("rightsizing_share")
}
/^BenchmarkTrackerMemory\// {
	rmem = sprintf("%.0f B kept, %.0f B saved", metric("kept_bytes/service"), metric("saved_bytes/service"))
}
/^BenchmarkDiffVsPollCycle\// {
	diff[++dcount] = sprintf("| %s | %.3f | %.1f ms |", key("^BenchmarkDiffVsPollCycle/"), metric("diff_share"), metric("diff_ns/cycle") / 1e6)
}
/^BenchmarkDiffUnchanged\/.*shared/ {
	diffu[++ducount] = sprintf("| %s | %.1f ms | %s |", key("^BenchmarkDiffUnchanged/"), $3 / 1e6, metric("allocs/op"))
}
/^BenchmarkPollCycle\// {
	poll[++pcount] = sprintf("| %s | %s | %s | %s |", key("^BenchmarkPollCycle/"), metric("calls/cycle"), metric("min_calls"), metric("x_bound"))
}
END {
	print "## BenchmarkScrape (goals: gzip scrape <= 1.2x the same bytes from one slice, measured interleaved; <= 200 allocations per scrape, Go/process collectors included)"
	print ""
	print "| N | gzip scrape / gzip bytes, loopback HTTP | same, in process | text scrape / text bytes, in process | allocs per scrape (gzip, text) | const_registry / cached text |"
	print "|---|---|---|---|---|---|"
	for (i = 1; i <= count; i++) {
		n = order[i]
		printf "| %s | %.2f | %.2f | %.2f | %s, %s | %.0f |\n", n, x[n, "gzip_vs_bytes_http"], x[n, "gzip_vs_bytes"], x[n, "text_vs_bytes"], per[n, "gzip_vs_bytes"], per[n, "text_vs_bytes"], ns[n, "const_registry"] / ns[n, "cached"]
	}
	print ""
	print "## BenchmarkScrapeVsBytes (goal: gzip scrape of the built exporter at 10k services <= 1.3x a server writing the same bytes from one slice; load average " load ")"
	print ""
	print "| median ratio of a pair | p10 | p90 | scrape, median | bytes, median |"
	print "|---|---|---|---|---|"
	print binary
	print ""
	print "## BenchmarkRender (goals: a poll with nothing changed renders nothing and allocates O(1) per resource; only the asked form is rendered)"
	print ""
	print "| N | first render + scrape | unchanged poll + scrape | allocs per resource, unchanged | one change + scrape | chunks rendered in forms not asked |"
	print "|---|---|---|---|---|---|"
	for (i = 1; i <= rcount; i++) {
		n = rorder[i]
		printf "| %s | %.1f ms | %.1f ms | %s | %.1f ms | %s |\n", n, rns[n, "first"] / 1e6, rns[n, "unchanged"] / 1e6, rper[n, "unchanged"], rns[n, "one_change"] / 1e6, rother[n, "unchanged"] + rother[n, "one_change"]
	}
	print ""
	print "## BenchmarkMemory (goal: live heap per service <= 2x the exposition per service)"
	print ""
	print "| N | heap bytes per service (snapshot + exposition) | exposition bytes per service | ratio |"
	print "|---|---|---|---|"
	for (i = 1; i <= mcount; i++) print mem[i]
	print ""
	print "## BenchmarkPlainScrape (a client without gzip, inflated from the kept gzip form; memory kept by plain scrapes of both formats)"
	print ""
	print "| N | plain text scrape | / gzip scrape | allocs per scrape | kept bytes per service |"
	print "|---|---|---|---|---|"
	for (i = 1; i <= plcount; i++) print plain[i]
	print ""
	print "## BenchmarkCycleVsDecode (goal: CPU of a poll cycle <= 2x decoding its answers once with encoding/json)"
	print ""
	print "| N | cycle / decode, median | cycle CPU | decode CPU | HTTP alone (client and server) |"
	print "|---|---|---|---|---|"
	for (i = 1; i <= ccount; i++) print cycle[i]
	print ""
	print "## BenchmarkUsageMemory and BenchmarkLogsPublish (the data plane: what the usage reader keeps per service, what a publish costs every 5 s of a read)"
	print ""
	print "| N | usage bytes kept per service | usage publish | its garbage |"
	print "|---|---|---|---|"
	for (i = 1; i <= ucount; i++) print usage[i]
	print ""
	print "| N | log counts publish | its garbage | allocations |"
	print "|---|---|---|---|"
	for (i = 1; i <= lcount; i++) print logs[i]
	print ""
	print "## BenchmarkUsageReadRightsizing and BenchmarkTrackerMemory (goal: rightsizing adds at most 10% CPU to the usage reads at 10k services)"
	print ""
	print "| usage read, 10k services | with rightsizing | rightsizing share of the read | per service |"
	print "|---|---|---|---|"
	printf "| %.0f ms | %.0f ms | %.1f%% | %s |\n", rs["N=10000/rightsizing=false"] / 1e6, rs["N=10000/rightsizing=true"] / 1e6, rshare * 100, rmem
	print ""
	print "## BenchmarkDiffVsPollCycle and BenchmarkDiffUnchanged (the change timeline; goals: at most 0.10 of a poll cycle at 10k services, no allocation for an unchanged fleet)"
	print ""
	print "| N | differ / cycle | differ per cycle |"
	print "|---|---|---|"
	for (i = 1; i <= dcount; i++) print diff[i]
	print ""
	print "| case | a complete read of an unchanged fleet | allocations |"
	print "|---|---|---|"
	for (i = 1; i <= ducount; i++) print diffu[i]
	print ""
	print "## BenchmarkPollCycle (calls per cycle vs the minimum; time vs the latency/concurrency/rate bound)"
	print ""
	print "| case | calls/cycle | minimum | time / bound |"
	print "|---|---|---|---|"
	for (i = 1; i <= pcount; i++) print poll[i]
}' load="$load" "$out"

if [[ "${BENCH_RSS:-1}" != 0 ]]; then
	echo
	echo "## Whole binary over the simulator's fleet, no GOMEMLIMIT (goals: VmHWM <= 150 MB over 4 cycles at 10k services and 1000 VPCs, <= 700 MB over 3 at 100k)"
	echo
	scripts/rss.sh 10000 4 | tee "$out.rss"
	if [[ "${BENCH_RSS_100K:-0}" == 1 ]]; then
		scripts/rss.sh 100000 3 | tee -a "$out.rss"
	fi
	if [[ "${BENCH_RSS_DATAPLANE:-0}" == 1 ]]; then
		EXPORTER_FLAGS="--collect.usage --collect.logs" scripts/rss.sh 10000 12 | tee -a "$out.rss"
	fi
	echo
	echo "| services | VPCs | RSS at ready | RSS after the cycles | VmHWM | live heap | peak live heap | live heap / exposition | /metrics plain / gzip | CPU per cycle | CPU per cycle, last half |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	grep '^| [0-9]' "$out.rss"
	rm -f "$out.rss"
	echo
	echo "## Hostile answers to listServices on a 3-service fleet, 4 cycles each (goal: peak growth <= 64 MB, one request per cycle)"
	echo
	scripts/rss.sh hostile
fi
