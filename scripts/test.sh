#!/usr/bin/env bash
# The project's whole test suite, runnable on a fresh Debian machine with Go:
# it installs what it needs (Debian's prometheus package, for promtool and a
# real Prometheus, and prometheus-alertmanager, for amtool and a real
# Alertmanager to test the shipped inhibit rules), then runs the linters and
# every Go test, the whole-binary ones and those of the tool modules (mixin/,
# deploy/helm/) included. The tool modules fetch their Go dependencies
# (go-jsonnet, the Helm library) from the Go module proxy like the exporter's.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! command -v promtool >/dev/null 2>&1 || ! command -v prometheus >/dev/null 2>&1 ||
	! command -v amtool >/dev/null 2>&1 || ! command -v prometheus-alertmanager >/dev/null 2>&1; then
	echo "Installing Debian's prometheus and prometheus-alertmanager packages (promtool, amtool, a real Prometheus and Alertmanager for the tests)..."
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo="sudo"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends prometheus prometheus-alertmanager >/dev/null
fi

echo "== lint"
scripts/lint.sh

echo "== go test"
# -race: the poller, exposition and admin surface are concurrent by design.
go test -race -count=1 -timeout 45m ./...

# The tool modules (the mixin's build, the Helm chart's rendering): no
# concurrency of their own, so no -race (it would double the Helm library's
# compile time).
for module in $(scripts/modules.sh); do
	[ "$module" = . ] && continue
	echo "== go test ($module)"
	(cd "$module" && go test -count=1 -timeout 20m ./...)
done
