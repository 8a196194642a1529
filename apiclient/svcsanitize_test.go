package apiclient

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// fillTexts sets every text a Service can hold, found by reflection so that
// a field added later is filled too, with r choosing nil pointers, list
// lengths and texts (clean, holding a credential, or over the length cap).
func fillTexts(r *rand.Rand, v reflect.Value) {
	texts := []string{"", "READY", "with AKIAEXAMPLE42 inside", "s3cr3t/Key+with=Symbols", strings.Repeat("é", 700)}
	switch v.Kind() {
	case reflect.String:
		v.SetString(texts[r.IntN(len(texts))])
	case reflect.Pointer:
		if r.IntN(4) > 0 {
			v.Set(reflect.New(v.Type().Elem()))
			fillTexts(r, v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillTexts(r, v.Field(i))
			}
		}
	case reflect.Slice:
		if n := r.IntN(4); n > 0 {
			v.Set(reflect.MakeSlice(v.Type(), n-1, n-1))
			for i := range n - 1 {
				fillTexts(r, v.Index(i))
			}
		}
	}
}

// TestServiceSanitizeMatchesReflection: Service.sanitize redacts and cuts
// what the reflective sanitize does, every field included.
func TestServiceSanitizeMatchesReflection(t *testing.T) {
	for seed := range uint64(500) {
		var want, got Service
		fillTexts(rand.New(rand.NewPCG(seed, 1)), reflect.ValueOf(&want).Elem())
		fillTexts(rand.New(rand.NewPCG(seed, 1)), reflect.ValueOf(&got).Elem())
		wantCuts, gotCuts := 0, 0
		sanitize(&want, diffRedactor, func() { wantCuts++ })
		got.sanitize(diffRedactor, func() { gotCuts++ })
		if !reflect.DeepEqual(got, want) || gotCuts != wantCuts {
			t.Fatalf("seed %d: Service.sanitize\n%#v (%d cut)\nsanitize\n%#v (%d cut)", seed, got, gotCuts, want, wantCuts)
		}
	}
}
