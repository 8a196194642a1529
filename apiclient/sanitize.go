package apiclient

import (
	"reflect"
	"sync"
	"unicode/utf8"
)

// MaxTextBytes bounds every text of a decoded answer: any of them may
// become a label value (a name, a host, an error message), and a label
// of 900 KB is 900 KB in every scrape. A longer text is cut to this
// length, TruncatedMark included. Real names and messages are far
// shorter; an id this long is no id the API issues.
const MaxTextBytes = 1024

// TruncatedMark ends a text cut to MaxTextBytes.
const TruncatedMark = "...(truncated)"

var secretType = reflect.TypeFor[Secret]()

// sanitize redacts the credentials from every text of *out, a decoded
// answer, and cuts the texts longer than MaxTextBytes, calling cut for
// each. It runs on whatever was decoded, field by field through
// reflection, so that a field added to a type is covered without being
// named. Secrets (an initial password) travel back as they came.
func sanitize(out any, red *Redactor, cut func()) {
	v := reflect.ValueOf(out)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		sanitizeValue(v.Elem(), red, cut)
	}
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

// structTexts and textTypes cache textFields and holdsText by type:
// looking fields up through reflection for every element of a list was
// most of the sanitizing's cost (BenchmarkCycleVsDecode in poller/).
var structTexts, textTypes sync.Map // of reflect.Type to []int, bool

// textFields returns the indexes of the exported fields of struct type t
// that may hold text.
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

// holdsText reports whether a value of type t can hold a text that
// sanitizeValue changes: a string other than a Secret, reachable through
// exported fields, outside byte slices (raw JSON, never a label).
func holdsText(t reflect.Type) bool {
	if b, ok := textTypes.Load(t); ok {
		return b.(bool)
	}
	b := mayHoldText(t, map[reflect.Type]bool{})
	textTypes.Store(t, b)
	return b
}

// mayHoldText is holdsText's search; seen holds the struct types already
// searched, for recursive types.
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

// sanitizeMap rebuilds a map (labels of a usage series): its keys and
// values are not addressable.
func sanitizeMap(v reflect.Value, red *Redactor, cut func()) {
	if v.IsNil() || !v.CanSet() {
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

// sanitizeText redacts s, then cuts it to MaxTextBytes at a rune boundary.
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
