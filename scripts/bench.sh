#!/usr/bin/env bash
# Runs the scrape and poll-cycle benchmarks and prints them as a short table
# of ratios: absolute times on a shared machine say little, ratios to the
# baselines measured in the same run say whether the design holds.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT

go test -run '^$' -bench 'BenchmarkScrape' -benchtime "${SCRAPE_BENCHTIME:-20x}" -benchmem ./collector/ | tee -a "$out" >/dev/null
go test -run '^$' -bench 'BenchmarkPollCycle' -benchtime "${POLL_BENCHTIME:-3x}" ./poller/ | tee -a "$out" >/dev/null

awk '
/^BenchmarkScrape\// {
	split($1, parts, "/"); n = parts[2]; variant = parts[3]; sub(/-[0-9]+$/, "", variant)
	ns[n, variant] = $3
	for (i = 4; i <= NF; i++) if ($(i+1) == "allocs/op") allocs[n, variant] = $i
	if (!(n in seen)) { seen[n] = 1; order[++count] = n }
}
/^BenchmarkPollCycle\// {
	name = $1; sub(/^BenchmarkPollCycle\//, "", name); sub(/-[0-9]+$/, "", name)
	for (i = 4; i <= NF; i++) {
		if ($(i+1) == "calls/cycle") calls = $i
		if ($(i+1) == "min_calls") minc = $i
		if ($(i+1) == "x_bound") xb = $i
	}
	poll[++pcount] = sprintf("| %s | %s | %s | %s |", name, calls, minc, xb)
}
END {
	print "## BenchmarkScrape (goal at N=10000: cached/bytes <= 1.5, const/cached >= 10, allocs < 1000)"
	print ""
	print "| N | cached / bytes | const_registry / cached | allocs per cached scrape |"
	print "|---|---|---|---|"
	for (i = 1; i <= count; i++) {
		n = order[i]
		if (ns[n, "bytes"] == "" || ns[n, "cached"] == "") continue
		printf "| %s | %.2f | %.1f | %s |\n", n, ns[n, "cached"] / ns[n, "bytes"], ns[n, "const_registry"] / ns[n, "cached"], allocs[n, "cached"]
	}
	print ""
	print "## BenchmarkPollCycle (calls per cycle vs the minimum; time vs the latency/concurrency/rate bound)"
	print ""
	print "| case | calls/cycle | minimum | time / bound |"
	print "|---|---|---|---|"
	for (i = 1; i <= pcount; i++) print poll[i]
}' "$out"
