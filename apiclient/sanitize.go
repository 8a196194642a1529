package apiclient

import (
	"reflect"
	"sync"
	"unicode/utf8"
)

// MaxTextBytes bounds every decoded text, TruncatedMark included: any may become a label value.
const MaxTextBytes = 1024

// TruncatedMark ends a text cut to MaxTextBytes.
const TruncatedMark = "...(truncated)"

var secretType = reflect.TypeFor[Secret]()

// sanitize redacts and cuts every text of *out by reflection, so that a new field is covered too.
func sanitize(out any, red *Redactor, cut func()) {
	sanitizeValue(reflect.ValueOf(out), red, cut)
}

func sanitizeValue(v reflect.Value, red *Redactor, cut func()) {
	switch v.Kind() {
	case reflect.String:
		if v.Type() == secretType || !v.CanSet() {
			return
		}
		if s := sanitizeText(v.String(), red, cut); s != v.String() {
			v.SetString(s)
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			sanitizeValue(v.Elem(), red, cut)
		}
	case reflect.Struct:
		for _, i := range textFields(v.Type()) {
			sanitizeValue(v.Field(i), red, cut)
		}
	case reflect.Slice, reflect.Array:
		if !holdsText(v.Type()) {
			return
		}
		for i := range v.Len() {
			sanitizeValue(v.Index(i), red, cut)
		}
	case reflect.Map:
		sanitizeMap(v, red, cut)
	}
}

var structTexts, textTypes sync.Map // of reflect.Type to []int, bool

func textFields(t reflect.Type) []int {
	if f, ok := structTexts.Load(t); ok {
		return f.([]int)
	}
	var fields []int
	for i := range t.NumField() {
		if f := t.Field(i); f.IsExported() && holdsText(f.Type) {
			fields = append(fields, i)
		}
	}
	structTexts.Store(t, fields)
	return fields
}

func holdsText(t reflect.Type) bool {
	if b, ok := textTypes.Load(t); ok {
		return b.(bool)
	}
	b := mayHoldText(t, map[reflect.Type]bool{})
	textTypes.Store(t, b)
	return b
}

func mayHoldText(t reflect.Type, seen map[reflect.Type]bool) bool {
	switch t.Kind() {
	case reflect.String:
		return t != secretType
	case reflect.Interface:
		return true
	case reflect.Slice, reflect.Array:
		return t.Elem().Kind() != reflect.Uint8 && mayHoldText(t.Elem(), seen)
	case reflect.Pointer:
		return mayHoldText(t.Elem(), seen)
	case reflect.Map:
		return mayHoldText(t.Key(), seen) || mayHoldText(t.Elem(), seen)
	case reflect.Struct:
		if seen[t] {
			return false // Searched where it was met first.
		}
		seen[t] = true
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && mayHoldText(f.Type, seen) {
				return true
			}
		}
	}
	return false
}

func sanitizeMap(v reflect.Value, red *Redactor, cut func()) {
	if v.IsNil() || !v.CanSet() {
		return
	}
	if m, ok := v.Interface().(SeriesLabels); ok && clean(m, red) { // the answers' one map, and a common one
		return
	}
	out := reflect.MakeMapWithSize(v.Type(), v.Len())
	for it := v.MapRange(); it.Next(); {
		k := reflect.New(v.Type().Key()).Elem()
		k.Set(it.Key())
		e := reflect.New(v.Type().Elem()).Elem()
		e.Set(it.Value())
		sanitizeValue(k, red, cut)
		sanitizeValue(e, red, cut)
		out.SetMapIndex(k, e)
	}
	v.Set(out)
}

// clean reports whether sanitizing would leave m as it is, which then is not made anew.
func clean(m map[string]string, red *Redactor) bool {
	for k, v := range m {
		if len(k) > MaxTextBytes || len(v) > MaxTextBytes || red.Redact(k) != k || red.Redact(v) != v {
			return false
		}
	}
	return true
}

func sanitizeText(s string, red *Redactor, cut func()) string {
	s = red.Redact(s)
	if len(s) <= MaxTextBytes {
		return s
	}
	n := MaxTextBytes - len(TruncatedMark)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	if cut != nil {
		cut()
	}
	return s[:n] + TruncatedMark
}
