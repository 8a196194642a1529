package admin

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"reflect"
	"strings"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// Error codes of the input checks that come before validation.
const (
	codeUnsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE"
	codeCrossOrigin          = "CROSS_ORIGIN_REQUEST"
	codeAuditUnavailable     = "AUDIT_LOG_UNAVAILABLE"
)

// crossOrigin refuses cross-site browser requests: with cached basic-auth
// credentials, a page elsewhere could make the browser send a write.
var crossOrigin = http.NewCrossOriginProtection()

// checkInput refuses a body not declared JSON: text/plain and form bodies
// are what a cross-site form can send without a preflight.
func checkInput(r *http.Request) *apiError {
	if err := crossOrigin.Check(r); err != nil {
		return &apiError{status: http.StatusForbidden, code: codeCrossOrigin,
			message: "cross-origin browser requests are refused (Sec-Fetch-Site or Origin names another site)"}
	}
	ct := r.Header.Get("Content-Type")
	if ct == "" && r.ContentLength == 0 {
		return nil
	}
	mt, params, err := mime.ParseMediaType(ct)
	charset, hasCharset := params["charset"]
	if err != nil || mt != "application/json" || len(params) > 1 || (len(params) == 1 && (!hasCharset || !strings.EqualFold(charset, "utf-8"))) {
		return &apiError{status: http.StatusUnsupportedMediaType, code: codeUnsupportedMediaType,
			message: "Content-Type must be application/json"}
	}
	return nil
}

// checkKeys refuses repeated keys in any letter case, and top-level keys
// that match a field only in another case: encoding/json would send 999999
// for {"cpu_millis":1,"CPU_MILLIS":999999}, where a proxy's rule sees 1.
func checkKeys[T any](raw []byte) error {
	fields := map[string]bool{}
	if t := reflect.TypeFor[T](); t.Kind() == reflect.Struct {
		for i := range t.NumField() {
			if name := apiclient.JSONName(t.Field(i)); name != "" {
				fields[name] = true
			}
		}
	}
	type frame struct {
		object  bool
		wantKey bool
		keys    map[string]bool // lower-cased
	}
	var stack []*frame
	dec := json.NewDecoder(bytes.NewReader(raw))
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.wantKey {
			key, _ := tok.(string) // an object's key is always a string token
			lower := strings.ToLower(key)
			if top.keys[lower] {
				return invalidf("%s: given more than once (keys are compared without letter case)", truncateForMessage(key))
			}
			top.keys[lower] = true
			if len(stack) == 1 && !fields[key] {
				for f := range fields {
					if strings.EqualFold(f, key) {
						return invalidf("%s: unknown field; did you mean %s? (keys are case-sensitive)", truncateForMessage(key), f)
					}
				}
			}
			top.wantKey = false
			continue
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, wantKey: true, keys: map[string]bool{}})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return nil
			}
			top = stack[len(stack)-1]
		}
		if top != nil && top.object {
			top.wantKey = true // a value ended: the next token is a key
		}
	}
}
