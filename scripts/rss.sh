#!/usr/bin/env bash
# Measures the exporter's memory over the simulator's fleet scenario: the
# built binary against cmd/cloudsim with SERVICES services (one replica set
# each, one VPC per 100 services with two peerings), scraped every 2 s as
# Prometheus scrapes (OpenMetrics, gzip), until CYCLES full poll cycles are
# done. Prints one markdown table row:
#
#   | services | RSS at ready | RSS after N cycles | peak RSS | live heap | live heap / exposition | /metrics plain / gzip | CPU per cycle |
#
# The live heap is what the last garbage collection found live (GODEBUG=gctrace=1),
# the exposition the uncompressed size of /metrics.
#
# Usage: scripts/rss.sh SERVICES [CYCLES]
#   EXPORTER=path  measure another build (e.g. of main) instead of building this tree.
#   INTERVAL=30s   the poll interval (default 5s): it must hold a whole cycle, which
#                  the exporter cuts at one interval (about 20 s at 100k services here).
# The poll interval is shortened and the client rate limit lifted so that
# cycles follow each other; every other flag is the default.
set -euo pipefail
cd "$(dirname "$0")/.."
services=${1:?usage: scripts/rss.sh SERVICES [CYCLES]}
cycles=${2:-10}
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
sim_port=$(free_port)
exp_port=$(free_port)

"$tmp/cloudsim" --web.listen-address="127.0.0.1:$sim_port" --scenario=fleet --log.level=warn \
	--fleet.services="$services" --fleet.replica-sets-per-service=1 \
	--fleet.vpcs=$((services / 100 + 1)) --fleet.peerings-per-vpc=2 >"$tmp/sim.log" 2>&1 &
pids+=($!)
# Any HTTP answer means the simulator listens.
until [[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$sim_port/v1/") != 000 ]]; do sleep 0.2; done

# gctrace prints the live heap after each collection (the last of "A->B->C MB").
GODEBUG=gctrace=1 CLOUDDB_ACCESS_KEY=demo-access-key CLOUDDB_SECRET_KEY=demo-secret-key CLOUDDB_API_KEY=demo-api-key \
	"$EXPORTER" --web.listen-address="127.0.0.1:$exp_port" --log.level=warn \
	--api.url="http://127.0.0.1:$sim_port/v1" --api.project-id=demo-project --api.rate-limit=100000 --api.rate-burst=1000 \
	--collect.interval="${INTERVAL:-5s}" >"$tmp/exporter.log" 2>&1 &
exp_pid=$!
pids+=("$exp_pid")

base=http://127.0.0.1:$exp_port
until curl -fsS -o /dev/null "$base/-/ready" 2>/dev/null; do
	kill -0 "$exp_pid" 2>/dev/null || { cat "$tmp/exporter.log" >&2; exit 1; }
	sleep 0.5
done

rss_kb() { awk -v k="$2" '$1 == k":" {print $2}' "/proc/$1/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
accept='application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=1.0.0;escaping=allow-utf-8;q=0.3,text/plain;version=0.0.4;q=0.2,*/*;q=0.1'
scrape() { curl -fsS -H "Accept: $accept" -H 'Accept-Encoding: gzip' "$base/metrics"; }
# Full cycles done: each lists the services once.
done_cycles() {
	scrape | gzip -dc | awk '/^clouddb_exporter_api_requests_total\{.*operation="listServices"/ {n += $2} END {print n + 0}'
}

rss_ready=$(rss_kb "$exp_pid" VmRSS)
start_cycles=$(done_cycles)
start_ticks=$(cpu_ticks "$exp_pid")
while (( $(done_cycles) - start_cycles < cycles )); do
	kill -0 "$exp_pid" 2>/dev/null || { cat "$tmp/exporter.log" >&2; exit 1; }
	sleep 2
done
ticks=$(( $(cpu_ticks "$exp_pid") - start_ticks ))
rss=$(rss_kb "$exp_pid" VmRSS)
hwm=$(rss_kb "$exp_pid" VmHWM)
gzip_bytes=$(scrape | wc -c)
plain_bytes=$(scrape | gzip -dc | wc -c)
live_mb=$(grep -E '^gc [0-9]+ @' "$tmp/exporter.log" | tail -1 | sed -E 's/.* ([0-9]+)->([0-9]+)->([0-9]+) MB.*/\3/')
hz=$(getconf CLK_TCK)

awk -v s="$services" -v c="$cycles" -v r0="$rss_ready" -v r="$rss" -v h="$hwm" -v live="$live_mb" \
	-v p="$plain_bytes" -v g="$gzip_bytes" -v t="$ticks" -v hz="$hz" 'BEGIN {
	printf "| %d | %.0f MB | %.0f MB | %.0f MB | %.0f MB | %.2f | %.1f / %.2f MB | %.2f s |\n",
		s, r0 / 1024, r / 1024, h / 1024, live * 1.048576, live * 1048576 / p, p / 1e6, g / 1e6, t / hz / c
}'
