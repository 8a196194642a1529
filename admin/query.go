package admin

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// parseQuery reads a request's raw query strictly: each parameter once, as
// key=value with a literal known key and a non-empty value, '&' the only
// separator. url.ParseQuery (behind r.URL.Query) drops a pair that holds a
// ';' or a bad escape and keeps the rest, so ?confirm=<id>&dry_run=true;
// ran a delete for real while a proxy that splits at ';' saw a dry run.
// Whatever two parsers could read differently is refused instead.
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
			// A misspelt dry_run must not run the operation for real;
			// an escaped key (dry%5Frun) is refused too, as some parsers
			// do not unescape keys.
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

// checkNoQuery refuses any query on the routes that take none.
func checkNoQuery(r *http.Request) error {
	if r.URL.RawQuery != "" {
		return invalidf("query: this route takes no parameters")
	}
	return nil
}
