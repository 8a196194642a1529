package admin

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// parseQuery refuses whatever two parsers could read differently:
// url.ParseQuery drops a pair with a ';' and keeps the rest, so that
// ?confirm=<id>&dry_run=true; deletes where a proxy sees a dry run.
func parseQuery(raw string, known ...string) (map[string]string, error) {
	out := map[string]string{}
	if raw == "" {
		return out, nil
	}
	for pair := range strings.SplitSeq(raw, "&") {
		key, value, _ := strings.Cut(pair, "=")
		switch {
		case strings.Contains(pair, ";"):
			return nil, invalidf("query: ';' is not a separator; use '&' (the whole query is refused, so that no parameter is silently dropped)")
		case pair == "":
			return nil, invalidf("query: empty parameter (a stray '&')")
		case key == "":
			return nil, invalidf("query: a parameter without a name")
		case !slices.Contains(known, key):
			// A misspelt dry_run must not run the write for real; some
			// parsers do not unescape keys (dry%5Frun).
			return nil, invalidf("%s: unknown query parameter", truncateForMessage(key))
		case value == "":
			return nil, invalidf("%s: needs a value", key)
		}
		v, err := url.QueryUnescape(value)
		if err != nil {
			return nil, invalidf("%s: malformed percent-encoding", key)
		}
		if _, ok := out[key]; ok {
			return nil, invalidf("%s: given more than once", key)
		}
		out[key] = v
	}
	return out, nil
}

func checkNoQuery(r *http.Request) error {
	if r.URL.RawQuery != "" {
		return invalidf("query: this route takes no parameters")
	}
	return nil
}
