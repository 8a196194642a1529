#!/usr/bin/env bash
# Prints the release notes of a version, its section of CHANGELOG.md, after
# checking that VERSION and the chart's version and appVersion name it. The
# release workflow runs it with the pushed tag (vX.Y.Z) and stops when they
# disagree; run it before tagging to see the notes.
#
#   scripts/release-notes.sh v0.2.0
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -ne 1 ]; then
	echo "usage: scripts/release-notes.sh vX.Y.Z" >&2
	exit 2
fi
version=${1#v}
fail() {
	echo "scripts/release-notes.sh: $*" >&2
	exit 1
}
[ "$(cat VERSION)" = "$version" ] || fail "VERSION holds $(cat VERSION), not $version"
chart=deploy/helm/clouddb-exporter/Chart.yaml
grep -qx "version: $version" "$chart" || fail "$chart: version is not $version"
grep -qx "appVersion: \"$version\"" "$chart" || fail "$chart: appVersion is not \"$version\""
# The section's lines between its heading and the next, blank lines around
# them trimmed.
notes=$(awk -v heading="## $version / " '
	index($0, heading) == 1 { found = 1; next }
	found && /^## / { exit }
	found { print }
' CHANGELOG.md | sed -e '/./,$!d')
[ -n "$notes" ] || fail "CHANGELOG.md has no section \"## $version / YYYY-MM-DD\" or it is empty"
printf '%s\n' "$notes"
