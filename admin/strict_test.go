package admin

import (
	"net/http"
	"strings"
	"testing"
)

// TestStrictInput: bodies that are not declared JSON (415), repeated or
// case-variant keys (400) and cross-site browser requests (403) are
// refused with nothing sent upstream: a page elsewhere must not be able to
// drive the admin surface (docs/admin.md, "Browser and body checks").
func TestStrictInput(t *testing.T) {
	e := newEnv(t)
	d := e.demo()
	svc := "/api/v1/projects/" + testProject + "/services/" + d.service["embeddings"]
	resize := `{"cpu_millis":1000,"memory_gbs":4}`
	for _, tc := range []struct {
		name, path, body string
		headers          []string
		status           int
		code, message    string
	}{
		{"text/plain", svc + "/resize", resize, []string{"Content-Type", "text/plain"}, 415, codeUnsupportedMediaType, "application/json"},
		{"form", svc + "/resize", "cpu_millis=1000", []string{"Content-Type", "application/x-www-form-urlencoded"}, 415, codeUnsupportedMediaType, ""},
		{"no Content-Type", svc + "/resize", resize, []string{"Content-Type", ""}, 415, codeUnsupportedMediaType, ""},
		{"empty body declared text", svc + "/enablePooler", "", []string{"Content-Type", "text/plain"}, 415, codeUnsupportedMediaType, ""},
		{"other charset", svc + "/resize", resize, []string{"Content-Type", "application/json; charset=latin1"}, 415, codeUnsupportedMediaType, ""},
		{"duplicate key", svc + "/resize", `{"cpu_millis":1,"memory_gbs":4,"cpu_millis":999999}`, nil, 400, codeInvalidRequest, "cpu_millis: given more than once"},
		{"case-variant key", svc + "/resize", `{"cpu_millis":1,"memory_gbs":4,"CPU_MILLIS":999999}`, nil, 400, codeInvalidRequest, "given more than once"},
		{"case-variant key alone", svc + "/resize", `{"CPU_MILLIS":1000,"memory_gbs":4}`, nil, 400, codeInvalidRequest, "did you mean cpu_millis"},
		{"cross-site fetch", svc + "/resize", resize, []string{"Sec-Fetch-Site", "cross-site"}, 403, codeCrossOrigin, ""},
		{"foreign Origin", svc + "/enablePooler", "", []string{"Origin", "https://evil.example"}, 403, codeCrossOrigin, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := e.do("POST", tc.path, tc.body, tc.headers...)
			if a.status != tc.status || a.json(t)["code"] != tc.code || !strings.Contains(a.json(t)["message"].(string), tc.message) {
				t.Errorf("%d %s, want %d %s with %q", a.status, a.body, tc.status, tc.code, tc.message)
			}
			if sent := e.sent(); len(sent) != 0 {
				t.Errorf("sent upstream: %v", sent)
			}
		})
	}
	// Same-origin browser requests and plain JSON clients pass.
	for _, headers := range [][]string{nil, {"Sec-Fetch-Site", "same-origin"}, {"Content-Type", "application/json; charset=utf-8"}} {
		if a := e.do("POST", svc+"/resize?dry_run=true", resize, headers...); a.status != http.StatusOK {
			t.Errorf("resize dry run with %v: %d %s", headers, a.status, a.body)
		}
	}
}

func FuzzCheckKeys(f *testing.F) {
	for _, seed := range []string{`{"cpu_millis":1,"CPU_MILLIS":2}`, `{"a":{"b":1,"b":2}}`, `[{"x":[1,{"y":2}]}]`, `{"name":"n","addons":["ai"]}`, `{`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = checkKeys[createServiceBody](data)
		_, _ = decodeStrict[createServiceBody](data)
	})
}
