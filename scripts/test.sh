#!/usr/bin/env bash
# The project's whole test suite, what CI runs: the linters and every Go
# test, the whole-binary ones (e2e/, with a real Prometheus and
# Alertmanager) and those of the tool modules (mixin/, deploy/helm/)
# included. The tool modules fetch their Go dependencies (go-jsonnet, the
# Helm library) from the Go module proxy like the exporter's.
#
# It installs nothing: scripts/install-deps.sh installs the system packages
# it needs (promtool, prometheus, amtool, prometheus-alertmanager) once, as
# root or through sudo. On a fresh Debian machine with Go:
#
#   scripts/install-deps.sh && scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
for cmd in promtool prometheus amtool prometheus-alertmanager; do
	command -v "$cmd" >/dev/null 2>&1 || missing+=("$cmd")
done
if [ "${#missing[@]}" -gt 0 ]; then
	echo "scripts/test.sh: ${missing[*]} not found: run scripts/install-deps.sh first (as root or with sudo)" >&2
	exit 1
fi

echo "== lint"
scripts/lint.sh

echo "== go test"
# -race: the poller, exposition and admin surface are concurrent by design.
# The whole-binary tests run in parallel with scaled-down intervals: the
# package takes a few minutes (docs/development.md), the timeout is a bound.
go test -race -count=1 -timeout 15m ./...

# The tool modules (the mixin's build, the Helm chart's rendering): no
# concurrency of their own, so no -race (it would double the Helm library's
# compile time).
for module in $(scripts/modules.sh); do
	[ "$module" = . ] && continue
	echo "== go test ($module)"
	(cd "$module" && go test -count=1 -timeout 15m ./...)
done
