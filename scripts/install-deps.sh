#!/usr/bin/env bash
# Installs the system packages the test suite needs on Debian or Ubuntu:
# Debian's prometheus package (promtool, which checks the shipped rules, and
# a real Prometheus that scrapes the exporter in e2e/) and
# prometheus-alertmanager (amtool, and a real Alertmanager for the shipped
# inhibit rules). Separate from scripts/test.sh so that running the tests
# never asks for root: run this once, as root or through sudo. Idempotent:
# it does nothing when the commands are already there.
set -euo pipefail

missing=0
for cmd in promtool prometheus amtool prometheus-alertmanager; do
	command -v "$cmd" >/dev/null 2>&1 || missing=1
done
if [ "$missing" -eq 0 ]; then
	exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "scripts/install-deps.sh: run as root or install sudo" >&2
		exit 1
	fi
	sudo="sudo"
fi
echo "Installing Debian's prometheus and prometheus-alertmanager packages (promtool, amtool, a real Prometheus and Alertmanager for the tests)..."
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends prometheus prometheus-alertmanager >/dev/null
