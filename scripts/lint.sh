#!/usr/bin/env bash
# gofmt, go vet, a go.mod/go.sum that `go mod tidy` would not change, and
# golangci-lint with .golangci.yml, for the exporter's module and the tool
# modules beside it (the monitoring mixin's build, the Helm chart's test and
# tools/, each with its own go.mod so that the exporter's stays lean); then
# actionlint over the GitHub workflows.
#
# golangci-lint is the version pinned in tools/go.mod, actionlint the one in
# tools/actionlint/go.mod (a module of its own: its dependencies' versions
# clash with golangci-lint's), both run with `go tool`:
# the first run fetches and builds it through the Go module proxy (some
# minutes on a small machine), later runs take it from the Go build cache.
set -euo pipefail
cd "$(dirname "$0")/.."
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change: $unformatted" >&2
	exit 1
fi
# --allow-serial-runners: a second run on the same machine waits for the
# first instead of failing.
golangci_lint=(go tool -modfile="$PWD/tools/go.mod" golangci-lint)
for module in $(scripts/modules.sh); do
	echo "-- $module"
	(cd "$module" && go vet ./... && go mod tidy -diff && "${golangci_lint[@]}" run --allow-serial-runners ./...)
done
echo "-- actionlint"
go tool -modfile="$PWD/tools/actionlint/go.mod" actionlint
