package apiclient

import (
	"encoding/base64"
	"net/http"
	"reflect"
	"strconv"
	"testing"
)

// TestEveryReadCallsItsCatalogEntry checks each read's Client method
// against its catalog entry, with no case per operation: the method, path
// (ids escaped) and query or body it sends (its catalog example), the
// credentials and headers, the status it accepts, that its answer decodes
// and the name it is observed under. opCases check decoded values.
func TestEveryReadCallsItsCatalogEntry(t *testing.T) {
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(testAccessKey+":"+testSecretKey))
	for _, o := range Catalog() {
		if o.Write {
			continue
		}
		t.Run(o.Name, func(t *testing.T) {
			answer := `{}`
			srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, o.Success, answer) })
			c, _, obs := newTestClient(t, srv, nil)
			m, args, arg := opMethod(t, c, o, escapedID)
			if m.Type().Out(0).Kind() == reflect.Slice {
				answer = `[]`
			}
			got, err := callOp(m, args)
			if err != nil {
				t.Fatalf("%s: %v", o.Name, err)
			}
			if got == nil || m.Type().Out(0).Kind() == reflect.Pointer && reflect.ValueOf(got).IsNil() {
				t.Errorf("%s returned %#v for a JSON answer", o.Name, got)
			}
			reqs := srv.requests()
			if len(reqs) != 1 {
				t.Fatalf("%s sent %d requests, want 1", o.Name, len(reqs))
			}
			r := reqs[0]
			if uri := escapedURI(o); r.Method != o.Method || r.URI != uri {
				t.Errorf("%s sent %s %s, want %s %s", o.Name, r.Method, r.URI, o.Method, uri)
			}
			wantAuth := basic
			if o.Name == OpGetAuthInfo {
				wantAuth = "Bearer " + testAPIKey
			}
			if r.Auth != wantAuth || r.Accept != "application/json" || r.UserAgent != DefaultUserAgent {
				t.Errorf("%s Authorization = %q, Accept = %q, User-Agent = %q", o.Name, r.Auth, r.Accept, r.UserAgent)
			}
			if o.Method == http.MethodGet {
				arg = nil // sent as the query
			}
			checkBody(t, o.Name, r, arg)
			if want := []string{o.Name + " " + strconv.Itoa(o.Success)}; !reflect.DeepEqual(obs.requests, want) {
				t.Errorf("observer saw %v, want %v", obs.requests, want)
			}
		})
	}
}

// TestExamplesNameReads: an example belongs to a read of the catalog.
func TestExamplesNameReads(t *testing.T) {
	for name, e := range examples {
		if o, ok := byName[name]; !ok || o.Write || e.Op != name {
			t.Errorf("example %s (%+v) is not a read's", name, e)
		}
	}
}
