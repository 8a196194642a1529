// Package actionlint holds no code: its module pins actionlint, which
// scripts/lint.sh runs with `go tool` over .github/workflows. It has a
// module of its own because its dependencies' versions clash with
// golangci-lint's in tools/.
package actionlint
