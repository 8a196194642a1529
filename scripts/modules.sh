#!/usr/bin/env bash
# Lists the repository's Go modules: the exporter (.) and the tool modules
# in subdirectories (mixin/, deploy/helm/, tools/), which `go test ./...` at the
# top does not enter.
set -euo pipefail
cd "$(dirname "$0")/.."
echo .
find . -mindepth 2 -name go.mod -not -path './.git/*' -not -path '*/testdata/*' -printf '%h\n' | sed 's|^\./||' | sort
