package apiclient

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
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
	for _, e := range dropped {
		if e.Field == field {
			return true
		}
	}
	return false
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// decodeLenient decodes into a resource or a slice of them; a value that does not decode costs only
// itself, an element that is no object or has a bad id is left out. false: data is not out's shape.
func decodeLenient(data []byte, out any, drop func(FieldError)) bool {
	if !json.Valid(data) {
		return false
	}
	v := reflect.ValueOf(out).Elem()
	if v.Kind() != reflect.Slice {
		if _, ok := v.Addr().Interface().(resource); !ok {
			return false
		}
		var dropped []FieldError
		if !decodeResource(data, v, func(e FieldError) { dropped = append(dropped, e) }) {
			return false
		}
		for _, e := range dropped {
			drop(e)
		}
		return true
	}
	if _, ok := reflect.New(v.Type().Elem()).Interface().(resource); !ok {
		return false
	}
	var items []json.RawMessage
	if json.Unmarshal(data, &items) != nil {
		return false
	}
	list := reflect.MakeSlice(v.Type(), 0, len(items))
	for i, item := range items {
		elem := reflect.New(v.Type().Elem()).Elem()
		if !decodeResource(item, elem, drop) {
			drop(FieldError{Field: strconv.Itoa(i), Err: "not an object with a valid id"})
			continue
		}
		list = reflect.Append(list, elem)
	}
	v.Set(list)
	return true
}

func decodeResource(data []byte, v reflect.Value, drop func(FieldError)) bool {
	if !isObject(data) {
		return false
	}
	r := v.Addr().Interface().(resource)
	var dropped []FieldError
	lenientValue(data, v, "", func(e FieldError) { dropped = append(dropped, e) })
	for _, e := range dropped {
		if e.Field == r.idField() {
			return false
		}
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
	err := json.Unmarshal(data, v.Addr().Interface())
	if err == nil {
		return
	}
	v.SetZero()
	t := v.Type()
	custom := reflect.PointerTo(t).Implements(unmarshalerType)
	switch {
	case t.Kind() == reflect.Struct && !custom:
		var fields map[string]json.RawMessage
		if json.Unmarshal(data, &fields) != nil {
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
		var items []json.RawMessage
		if json.Unmarshal(data, &items) != nil {
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
