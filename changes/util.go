package changes

import (
	"maps"
	"net/url"
	"slices"
)

func slicesSorted[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// parseRawQuery is url.ParseQuery, which also refuses a semicolon.
func parseRawQuery(raw string) (map[string][]string, error) {
	return url.ParseQuery(raw)
}
