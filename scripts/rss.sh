#!/usr/bin/env bash
# Measures the exporter's memory, as the built binary against cmd/cloudsim,
# with no GOMEMLIMIT (and the cgroup limit turned off) so that what is
# measured is what the exporter keeps and churns, not what a limit hides.
#
#   scripts/rss.sh SERVICES [CYCLES]
#     The fleet scenario: SERVICES services (one replica set each), VPCS
#     VPCs (default SERVICES/10) with two peerings each, polled with
#     --api.rate-limit=2000 --api.rate-burst=2000 --collect.concurrency=8 and
#     scraped every 5 s as Prometheus scrapes (OpenMetrics, gzip), until
#     CYCLES (default 4) full poll cycles are done. Prints VmRSS after each
#     cycle, then one markdown table row:
#
#   | services | VPCs | RSS at ready | RSS after N cycles | VmHWM | live heap | peak live heap | live heap / exposition | /metrics plain / gzip | CPU per cycle | CPU per cycle, last half |
#
#     The live heap is what the last garbage collection found live
#     (GODEBUG=gctrace=1), the peak the most any collection found; the
#     exposition is the uncompressed size of /metrics. CPU is utime+stime
#     from /proc/PID/stat: per cycle over the whole run, and over its last
#     half (the steady state, once the opt-in collectors' first reads are done).
#
#   scripts/rss.sh hostile
#     A 3-service fleet, 3 s cycles, whose listServices answers, for 4
#     cycles, what no API should send (the simulator's oversize faults):
#     200 MB of white space behind a Content-Length, an endless chunked
#     string, and a valid 32 MiB list. One exporter per answer; prints one
#     row each:
#
#   | answer | VmHWM before | VmHWM after | peak growth | listServices requests / cycles | retries |
#
# Environment:
#   EXPORTER=path  measure another build (e.g. of main) instead of building this tree.
#   VPCS=n         VPCs of the fleet (default SERVICES/10).
#   INTERVAL=20s   the poll interval (default 20s, 60s above 20,000 services):
#                  it must hold a whole cycle, which the exporter cuts at one interval.
#   EXPORTER_FLAGS="--collect.usage ..."  more exporter flags for the fleet run
#                  (the opt-in collectors, say).
#   PLAIN=1        after the first cycle, one plain text and one OpenMetrics
#                  request without gzip, as a person with curl makes them.
#   PROFILE=dir    run with --web.enable-pprof and save a heap profile after
#                  the last cycle, and a CPU profile of the last half (40 s
#                  profiles back to back, merged), into dir.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:?usage: scripts/rss.sh SERVICES [CYCLES] | scripts/rss.sh hostile}
tmp=$(mktemp -d)
pids=()
cleanup() {
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

if [[ -z "${EXPORTER:-}" ]]; then
	CGO_ENABLED=0 go build -o "$tmp/clouddb_exporter" .
	EXPORTER=$tmp/clouddb_exporter
fi
CGO_ENABLED=0 go build -o "$tmp/cloudsim" ./cmd/cloudsim

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
rss_kb() { awk -v k="$2" '$1 == k":" {print $2}' "/proc/$1/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
accept='application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1'

# start_sim SERVICES VPCS: the fleet scenario on a free port ($sim).
start_sim() {
	local port
	port=$(free_port)
	sim=http://127.0.0.1:$port
	"$tmp/cloudsim" --web.listen-address="127.0.0.1:$port" --scenario=fleet --log.level=warn \
		--fleet.services="$1" --fleet.replica-sets-per-service=1 \
		--fleet.vpcs="$2" --fleet.peerings-per-vpc=2 >"$tmp/sim.log" 2>&1 &
	pids+=($!)
	# Any HTTP answer means the simulator listens.
	until [[ $(curl -s -o /dev/null -w '%{http_code}' "$sim/v1/") != 000 ]]; do sleep 0.2; done
}

# start_exporter INTERVAL [FLAGS...]: the exporter against $sim ($exp_pid, $base), until ready.
start_exporter() {
	local interval=$1 port
	shift
	port=$(free_port)
	base=http://127.0.0.1:$port
	env -u GOMEMLIMIT GODEBUG=gctrace=1 CLOUDDB_ACCESS_KEY=demo-access-key CLOUDDB_SECRET_KEY=demo-secret-key CLOUDDB_API_KEY=demo-api-key \
		"$EXPORTER" --web.listen-address="127.0.0.1:$port" --log.level=warn --no-runtime.gomemlimit \
		--api.url="$sim/v1" --api.project-id=demo-project --api.rate-limit=2000 --api.rate-burst=2000 \
		--collect.concurrency=8 --collect.interval="$interval" "$@" >"$tmp/exporter.log" 2>&1 &
	exp_pid=$!
	pids+=("$exp_pid")
	until curl -fsS -o /dev/null "$base/-/ready" 2>/dev/null; do
		kill -0 "$exp_pid" 2>/dev/null || { cat "$tmp/exporter.log" >&2; exit 1; }
		sleep 0.5
	done
}

scrape() { curl -fsS -H "Accept: $accept" -H 'Accept-Encoding: gzip' "$base/metrics"; }
# metric NAME LABEL_MATCH: the sum of a family's series matching a label, from a scrape.
metric() {
	scrape | gzip -dc | awk -v n="$1" -v m="$2" 'index($1, n"{") == 1 && index($0, m) {s += $2} END {print s + 0}'
}
# Full cycles done: each lists the services once.
done_cycles() { metric clouddb_exporter_api_requests_total 'operation="listServices"'; }

# sim_requests OP: the requests the simulator answered for OP since the last reset.
sim_requests() { curl -fsS "$sim/_sim/requests" | python3 -c 'import json,sys; print(json.load(sys.stdin).get(sys.argv[1], 0))' "$1"; }

if [[ "$mode" == hostile ]]; then
	start_sim 3 1
	echo "| answer | VmHWM before | VmHWM after | peak growth | listServices requests / cycles | retries |"
	echo "|---|---|---|---|---|---|"
	for fault in \
		'200 MB of white space|{"operation":"listServices","oversize":"blank","size":200000000}' \
		'endless chunked string|{"operation":"listServices","oversize":"endless"}' \
		'valid 32 MiB list|{"operation":"listServices","oversize":"padded","size":33554432}'; do
		name=${fault%%|*}
		start_exporter 3s
		# Two ordinary cycles first: the baseline is a working exporter.
		c0=$(done_cycles)
		while (($(done_cycles) - c0 < 2)); do sleep 1; done
		before=$(rss_kb "$exp_pid" VmHWM)
		curl -fsS -o /dev/null -X DELETE "$sim/_sim/requests"
		curl -fsS -o /dev/null -X POST -d "${fault#*|}" "$sim/_sim/faults"
		r0=$(metric clouddb_exporter_api_retries_total 'operation="listServices"')
		# Four cycles under the fault, counted by the simulator.
		until (($(sim_requests listServices) >= 4)); do
			kill -0 "$exp_pid" 2>/dev/null || { cat "$tmp/exporter.log" >&2; exit 1; }
			sleep 0.5
		done
		sleep 3 # the fourth answer read to its end
		after=$(rss_kb "$exp_pid" VmHWM)
		calls=$(sim_requests listServices)
		# Each cycle lists the VPCs once, untouched by the fault.
		cycles=$(sim_requests listVPCs)
		retries=$(($(metric clouddb_exporter_api_retries_total 'operation="listServices"') - r0))
		curl -fsS -o /dev/null -X DELETE "$sim/_sim/faults"
		kill "$exp_pid"
		wait "$exp_pid" 2>/dev/null || true
		awk -v n="$name" -v b="$before" -v a="$after" -v c="$calls" -v y="$cycles" -v r="$retries" 'BEGIN {
			printf "| %s | %.0f MB | %.0f MB | %.0f MB | %d / %d | %d |\n", n, b / 1024, a / 1024, (a - b) / 1024, c, y, r
		}'
	done
	exit 0
fi

services=$mode
cycles=${2:-4}
vpcs=${VPCS:-$((services / 10))}
interval=${INTERVAL:-20s}
((services > 20000)) && interval=${INTERVAL:-60s}
start_sim "$services" "$vpcs"
# shellcheck disable=SC2086 # EXPORTER_FLAGS is a list of flags
start_exporter "$interval" ${EXPORTER_FLAGS:-} ${PROFILE:+--web.enable-pprof}
# Scraped every 5 s as Prometheus scrapes, in the background.
(while kill -0 "$exp_pid" 2>/dev/null; do scrape >/dev/null 2>&1 || true; sleep 5; done) &
pids+=($!)

rss_ready=$(rss_kb "$exp_pid" VmRSS)
start_cycles=$(done_cycles)
start_ticks=$(cpu_ticks "$exp_pid")
seen=$start_cycles
per_cycle=()
ticks_at=()
while ((seen - start_cycles < cycles)); do
	kill -0 "$exp_pid" 2>/dev/null || { cat "$tmp/exporter.log" >&2; exit 1; }
	sleep 2
	now=$(done_cycles)
	if ((now != seen)); then
		seen=$now
		per_cycle+=("$(($(rss_kb "$exp_pid" VmRSS) / 1024))")
		ticks_at+=("$(cpu_ticks "$exp_pid")")
		if [[ -n "${PROFILE:-}" ]] && ((${#per_cycle[@]} == cycles - cycles / 2)); then
			# Back to back profiles of 40 s (under the server's write timeout)
			# until the run ends: the opt-in readers work in bursts.
			mkdir -p "$PROFILE"
			rm -f "$PROFILE"/cpu-*.pprof
			(i=0; while [[ ! -e "$tmp/done" ]] && kill -0 "$exp_pid" 2>/dev/null; do
				curl -fsS -o "$PROFILE/cpu-$((i++)).pprof" "$base/debug/pprof/profile?seconds=40" || break
			done) &
			cpu_pid=$!
		fi
		if [[ "${PLAIN:-0}" == 1 ]] && ((${#per_cycle[@]} == 1)); then
			curl -fsS -o /dev/null "$base/metrics"
			curl -fsS -o /dev/null -H "Accept: $accept" "$base/metrics"
		fi
	fi
done
ticks=$(($(cpu_ticks "$exp_pid") - start_ticks))
# The last half of the cycles seen (a poll may have seen two end at once).
n=${#ticks_at[@]}
half=$((n / 2))
last_ticks=$ticks
((half > 0)) && last_ticks=$((ticks_at[n - 1] - ticks_at[n - 1 - half]))
((half > 0)) || half=$cycles
if [[ -n "${PROFILE:-}" ]]; then
	curl -fsS -o "$PROFILE/heap.pprof" "$base/debug/pprof/heap?gc=1"
	touch "$tmp/done"
	wait "${cpu_pid:-}" 2>/dev/null || true
	go tool pprof -proto "$PROFILE"/cpu-*.pprof >"$PROFILE/cpu.pprof" 2>/dev/null && rm -f "$PROFILE"/cpu-*.pprof
fi
rss=$(rss_kb "$exp_pid" VmRSS)
hwm=$(rss_kb "$exp_pid" VmHWM)
gzip_bytes=$(scrape | wc -c)
plain_bytes=$(scrape | gzip -dc | wc -c)
live_mb=$(grep -E '^gc [0-9]+ @' "$tmp/exporter.log" | tail -1 | sed -E 's/.* ([0-9]+)->([0-9]+)->([0-9]+) MB.*/\3/')
peak_mb=$(grep -E '^gc [0-9]+ @' "$tmp/exporter.log" | sed -E 's/.* ([0-9]+)->([0-9]+)->([0-9]+) MB.*/\3/' | sort -n | tail -1)
hz=$(getconf CLK_TCK)

echo "VmRSS after each cycle (MB): ${per_cycle[*]}"
awk -v s="$services" -v v="$vpcs" -v c="$cycles" -v r0="$rss_ready" -v r="$rss" -v h="$hwm" -v live="$live_mb" -v peak="$peak_mb" \
	-v p="$plain_bytes" -v g="$gzip_bytes" -v t="$ticks" -v hz="$hz" -v lt="$last_ticks" -v lc="$half" 'BEGIN {
	printf "| %d | %d | %.0f MB | %.0f MB | %.0f MB | %.0f MB | %.0f MB | %.2f | %.1f / %.2f MB | %.2f s | %.2f s |\n",
		s, v, r0 / 1024, r / 1024, h / 1024, live * 1.048576, peak * 1.048576, live * 1048576 / p, p / 1e6, g / 1e6, t / hz / c, lt / hz / lc
}'
