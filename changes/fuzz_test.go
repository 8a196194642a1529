package changes

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzFeedQuery: any query string gets a 200 of NDJSON or a 400 of
// {code,message}, never a panic or another status.
func FuzzFeedQuery(f *testing.F) {
	for _, seed := range []string{"", "since=1", "limit=10000", "kind=resized&project_id=p1", "since=18446744073709551616",
		"object_id=%ff", "a=1&a=2", "since=1;limit=2", "%zz", "limit=-0", "kind=%00"} {
		f.Add(seed)
	}
	tl := New(Options{})
	tl.Observe(snapAt(0, false, svc("a", "a", 1000, 4)))
	tl.Observe(snapAt(1, false, svc("a", "a", 2000, 4)))
	f.Fuzz(func(t *testing.T, raw string) {
		req := httptest.NewRequest(http.MethodGet, "/api/v1/changes", nil)
		req.URL.RawQuery = raw
		rec := httptest.NewRecorder()
		tl.Handler().ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK:
		case http.StatusBadRequest:
			var e feedError
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Code != "invalid_query" || e.Message == "" {
				t.Errorf("%q: 400 body %q", raw, rec.Body.String())
			}
		default:
			t.Errorf("%q: status %d", raw, rec.Code)
		}
	})
}
