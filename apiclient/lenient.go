package apiclient

import (
	"bytes"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// FieldError is a field that did not decode; its zero is no value (an unknown CPU, not zero cores).
type FieldError struct {
	// Dot-separated JSON path with array indexes: "resources.0.spec.cpu_millis".
	Field string
	Err   string
}

type resource interface {
	dropField(FieldError)
	idField() string
}

func (s *Service) dropField(e FieldError)    { s.Dropped = append(s.Dropped, e) }
func (r *ReplicaSet) dropField(e FieldError) { r.Dropped = append(r.Dropped, e) }
func (*VPC) dropField(FieldError)            {} // keeps no record, so that VPC stays comparable: its fields are all text, a lost one reads ""
func (p *Peering) dropField(e FieldError)    { p.Dropped = append(p.Dropped, e) }
func (*Service) idField() string             { return "service_id" }
func (*ReplicaSet) idField() string          { return "id" }
func (*VPC) idField() string                 { return "id" }
func (*Peering) idField() string             { return "id" }

// FieldDropped reports whether field (a FieldError path) did not decode.
func (s *Service) FieldDropped(field string) bool { return fieldDropped(s.Dropped, field) }

// FieldDropped reports whether field (a FieldError path) did not decode.
func (r *ReplicaSet) FieldDropped(field string) bool { return fieldDropped(r.Dropped, field) }

func fieldDropped(dropped []FieldError, field string) bool {
	return slices.ContainsFunc(dropped, func(e FieldError) bool { return e.Field == field })
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// decodeResource decodes data, valid JSON, into a resource; a value that does not decode costs only
// itself. false: data is not out's shape (no object, or a bad id).
func decodeResource(data []byte, out any, drop func(FieldError)) bool {
	if !isObject(data) {
		return false
	}
	r := out.(resource)
	var dropped []FieldError
	lenientValue(data, reflect.ValueOf(out).Elem(), "", func(e FieldError) { dropped = append(dropped, e) })
	if fieldDropped(dropped, r.idField()) {
		return false
	}
	// Recorded afterwards, so that decoding the fields cannot overwrite it.
	for _, e := range dropped {
		r.dropField(e)
		drop(e)
	}
	return true
}

func isObject(data []byte) bool {
	data = bytes.TrimSpace(data)
	return len(data) > 0 && data[0] == '{'
}

func lenientValue(data []byte, v reflect.Value, path string, drop func(FieldError)) {
	err := json.Unmarshal(data, v.Addr().Interface(), decodeOptions)
	if err == nil {
		return
	}
	v.SetZero()
	t := v.Type()
	custom := reflect.PointerTo(t).Implements(unmarshalerType)
	switch {
	case t.Kind() == reflect.Struct && !custom:
		var fields map[string]jsontext.Value
		if json.Unmarshal(data, &fields, decodeOptions) != nil {
			break
		}
		for i := range t.NumField() {
			name := JSONName(t.Field(i))
			if name == "" {
				continue
			}
			raw, ok := fields[name]
			if !ok {
				for k, r := range fields {
					if strings.EqualFold(k, name) {
						raw, ok = r, true
						break
					}
				}
			}
			if ok {
				lenientValue(raw, v.Field(i), join(path, name), drop)
			}
		}
		return
	case t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct && !custom:
		if !isObject(data) {
			break
		}
		v.Set(reflect.New(t.Elem()))
		lenientValue(data, v.Elem(), path, drop)
		return
	case t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8:
		var items []jsontext.Value
		if json.Unmarshal(data, &items, decodeOptions) != nil {
			break
		}
		s := reflect.MakeSlice(t, len(items), len(items))
		for i, item := range items {
			lenientValue(item, s.Index(i), join(path, strconv.Itoa(i)), drop)
		}
		v.Set(s)
		return
	}
	drop(FieldError{Field: path, Err: err.Error()})
}

// JSONName is the JSON key of a struct field, "" for one JSON ignores.
func JSONName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return ""
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
