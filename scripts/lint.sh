#!/usr/bin/env bash
# gofmt, go vet and a go.mod/go.sum that `go mod tidy` would not change.
set -euo pipefail
cd "$(dirname "$0")/.."
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change: $unformatted" >&2
	exit 1
fi
go vet ./...
go mod tidy -diff
