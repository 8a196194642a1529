// Package tools holds no code: its module pins the developer tools the
// scripts run with `go tool` (golangci-lint, see scripts/lint.sh), apart
// from the exporter's go.mod so that their dependencies stay out of it.
package tools
