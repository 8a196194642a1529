package apiclient

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// escapedIDs are path values that must be escaped, by placeholder name; a
// placeholder not named here gets one built from its name.
var escapedIDs = map[string][2]string{
	"service_id": {sID, sIDEsc}, "replica_set_id": {rID, rIDEsc},
	"vpc_id": {vID, vIDEsc}, "peering_id": {pID, pIDEsc},
}

func escapedIDPair(name string) [2]string {
	if v, ok := escapedIDs[name]; ok {
		return v
	}
	return [2]string{"x y/" + name, "x%20y%2F" + name}
}

func escapedID(name string) string { return escapedIDPair(name)[0] }

// escapedURI is the request URI an operation is sent to with escapedID's
// ids, below the server root.
func escapedURI(o Operation) string {
	uri := "/v1" + strings.Replace(o.Path, "{project_id}", testProject, 1)
	for _, name := range o.IDs() {
		uri = strings.Replace(uri, "{"+name+"}", escapedIDPair(name)[1], 1)
	}
	if e, ok := o.Example(); ok && e.Query != "" {
		uri += "?" + e.Query
	}
	return uri
}

// opMethod returns the Client method of an operation, named after it
// (resizeService: ResizeService), and its arguments: the context, the id
// idOf gives each path placeholder and, when the method takes one more, a
// read's catalog example or an empty write request, whose type it returns.
func opMethod(t *testing.T, c *Client, o Operation, idOf func(name string) string) (reflect.Value, []reflect.Value, reflect.Type) {
	t.Helper()
	m := reflect.ValueOf(c).MethodByName(strings.ToUpper(o.Name[:1]) + o.Name[1:])
	if !m.IsValid() {
		t.Fatalf("operation %s has no Client method named after it", o.Name)
	}
	mt := m.Type()
	if mt.NumIn() < 1 || mt.In(0) != reflect.TypeFor[context.Context]() || mt.NumOut() == 0 || mt.Out(mt.NumOut()-1) != reflect.TypeFor[error]() {
		t.Fatalf("%s: method %v does not take a context first and return an error last", o.Name, mt)
	}
	args := []reflect.Value{reflect.ValueOf(t.Context())}
	for _, id := range o.IDs() {
		v := idOf(id)
		if v == "" {
			t.Fatalf("%s: no test id for {%s}", o.Name, id)
		}
		args = append(args, reflect.ValueOf(v))
	}
	example, hasExample := o.Example()
	var arg reflect.Type
	switch mt.NumIn() - len(args) {
	case 0:
		if hasExample {
			t.Fatalf("%s: the catalog has an example for a method %v that takes ids alone", o.Name, mt)
		}
	case 1:
		arg = mt.In(len(args))
		switch {
		case hasExample && reflect.TypeOf(example.Arg) == arg:
			args = append(args, reflect.ValueOf(example.Arg))
		case hasExample || !o.Write:
			t.Fatalf("%s: method %v takes a %v: its catalog entry needs an Example of that type (has %T)", o.Name, mt, arg, example.Arg)
		default:
			args = append(args, reflect.Zero(arg))
		}
	default:
		t.Fatalf("%s: method %v does not take (ctx, %v ids[, request])", o.Name, mt, o.IDs())
	}
	return m, args, arg
}

// callOp calls an operation's Client method and returns its value, nil
// for none, and its error.
func callOp(m reflect.Value, args []reflect.Value) (any, error) {
	out := m.Call(args)
	err, _ := out[len(out)-1].Interface().(error)
	if len(out) == 1 {
		return nil, err
	}
	return out[0].Interface(), err
}

// TestEveryWriteCallsItsCatalogEntry checks each write operation's Client
// method against its catalog entry, with no case per operation: the
// method, path (ids escaped) and body it sends, the credentials and
// headers, the status it accepts and the name it is observed under.
func TestEveryWriteCallsItsCatalogEntry(t *testing.T) {
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(testAccessKey+":"+testSecretKey))
	for _, o := range Catalog() {
		if !o.Write {
			continue
		}
		t.Run(o.Name, func(t *testing.T) {
			srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, o.Success, `{}`) })
			c, _, obs := newTestClient(t, srv, nil)
			m, args, body := opMethod(t, c, o, escapedID)
			got, err := callOp(m, args)
			if err != nil {
				t.Fatalf("%s: %v", o.Name, err)
			}
			if got != nil && reflect.ValueOf(got).IsNil() {
				t.Errorf("%s returned a nil %T for a JSON answer", o.Name, got)
			}
			reqs := srv.requests()
			if len(reqs) != 1 {
				t.Fatalf("%s sent %d requests, want 1", o.Name, len(reqs))
			}
			r := reqs[0]
			uri := escapedURI(o)
			if r.Method != o.Method || r.URI != uri {
				t.Errorf("%s sent %s %s, want %s %s", o.Name, r.Method, r.URI, o.Method, uri)
			}
			if r.Auth != basic || r.Accept != "application/json" || r.UserAgent != DefaultUserAgent {
				t.Errorf("%s Authorization = %q, Accept = %q, User-Agent = %q", o.Name, r.Auth, r.Accept, r.UserAgent)
			}
			checkBody(t, o.Name, r, body)
			if want := []string{o.Name + " " + strconv.Itoa(o.Success)}; !reflect.DeepEqual(obs.requests, want) {
				t.Errorf("observer saw %v, want %v", obs.requests, want)
			}
		})
	}
}

// checkBody: a method that takes a request sends it as a JSON object of
// that type, one that takes none (or a query) sends no body.
func checkBody(t *testing.T, op string, r recordedRequest, body reflect.Type) {
	t.Helper()
	if body == nil {
		if len(r.Body) != 0 || r.ContentType != "" {
			t.Errorf("%s sent body %q with Content-Type %q, want none", op, r.Body, r.ContentType)
		}
		return
	}
	if r.ContentType != "application/json" || !bytes.HasPrefix(r.Body, []byte("{")) {
		t.Errorf("%s sent %q with Content-Type %q, want a JSON object", op, r.Body, r.ContentType)
	}
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(reflect.New(body).Interface()); err != nil {
		t.Errorf("%s sent %s, not a %v: %v", op, r.Body, body, err)
	}
}

// TestEveryOperationRejectsOtherStatus: each operation insists on its
// documented status; another 2xx is an *APIError naming the operation.
func TestEveryOperationRejectsOtherStatus(t *testing.T) {
	for _, o := range Catalog() {
		t.Run(o.Name, func(t *testing.T) {
			other := http.StatusOK
			if o.Success == http.StatusOK {
				other = http.StatusCreated
			}
			srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, other, `{}`) })
			c, _, _ := newTestClient(t, srv, nil)
			m, args, _ := opMethod(t, c, o, escapedID)
			got, err := callOp(m, args)
			var apiErr *APIError
			if !errors.As(err, &apiErr) || apiErr.StatusCode != other || apiErr.Operation != o.Name {
				t.Fatalf("%s answered %d: err = %v, want *APIError with that status", o.Name, other, err)
			}
			if got != nil && !reflect.ValueOf(got).IsNil() {
				t.Errorf("%s returned %#v alongside an error", o.Name, got)
			}
		})
	}
}
