#!/usr/bin/env bash
# gofmt, go vet and a go.mod/go.sum that `go mod tidy` would not change, for
# the exporter's module and the tool modules beside it (the monitoring
# mixin's build and the Helm chart's test, each with its own go.mod so that
# the exporter's stays lean).
set -euo pipefail
cd "$(dirname "$0")/.."
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change: $unformatted" >&2
	exit 1
fi
for module in $(scripts/modules.sh); do
	echo "-- $module"
	(cd "$module" && go vet ./... && go mod tidy -diff)
done
