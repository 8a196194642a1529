package changes

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"unicode"
)

// Feed limits.
const (
	DefaultLimit = 1000
	MaxLimit     = 10000
	maxIDLength  = 256
)

type feedError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Handler serves GET /api/v1/changes: the events as NDJSON, oldest first.
func (t *Timeline) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q, err := parseQuery(r)
		if err != nil {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(feedError{Code: "invalid_query", Message: err.Error()})
			return
		}
		events, first, last := t.events(q)
		// A consumer whose since is below first-1 lost events (retention).
		w.Header().Set("X-Changes-First-Cursor", strconv.FormatUint(first, 10))
		w.Header().Set("X-Changes-Last-Cursor", strconv.FormatUint(last, 10))
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Cache-Control", "no-store")
		bw := bufio.NewWriter(w)
		enc := json.NewEncoder(bw)
		for i := range events {
			if enc.Encode(&events[i]) != nil {
				return
			}
		}
		_ = bw.Flush()
	})
}

func parseQuery(r *http.Request) (Query, error) {
	q := Query{Limit: DefaultLimit}
	values, err := urlQuery(r.URL.RawQuery)
	if err != nil {
		return q, err
	}
	for name, vs := range values {
		if len(vs) != 1 {
			return q, fmt.Errorf("%s: given %d times, at most once", quoteParam(name), len(vs))
		}
		v := vs[0]
		switch name {
		case "since":
			q.Since, err = strconv.ParseUint(v, 10, 64)
			if err != nil {
				return q, fmt.Errorf("since: want a cursor (a non-negative integer), got %q", cut(v))
			}
		case "limit":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > MaxLimit {
				return q, fmt.Errorf("limit: want an integer from 1 to %d, got %q", MaxLimit, cut(v))
			}
			q.Limit = n
		case "kind":
			if !knownKind(v) {
				return q, fmt.Errorf("kind: unknown kind %q (see docs/changes.md)", cut(v))
			}
			q.Kind = v
		case "project_id", "object_id":
			if err := checkID(name, v); err != nil {
				return q, err
			}
			if name == "project_id" {
				q.ProjectID = v
			} else {
				q.ObjectID = v
			}
		default:
			return q, fmt.Errorf("%s: unknown query parameter; known: since, project_id, object_id, kind, limit", quoteParam(name))
		}
	}
	return q, nil
}

func urlQuery(raw string) (map[string][]string, error) {
	values, err := parseRawQuery(raw)
	if err != nil {
		return nil, fmt.Errorf("the query does not decode: %w", err)
	}
	return values, nil
}

func checkID(name, v string) error {
	if v == "" || len(v) > maxIDLength {
		return fmt.Errorf("%s: want 1 to %d characters", name, maxIDLength)
	}
	for _, r := range v {
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			return fmt.Errorf("%s: control or invalid characters are not allowed", name)
		}
	}
	return nil
}

func cut(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}

func quoteParam(s string) string { return strconv.Quote(cut(s)) }
