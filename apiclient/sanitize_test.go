package apiclient

import (
	"fmt"
	"strings"
	"testing"
)

// Types whose texts are reachable only through each other, so that what
// sanitize looks at is found through recursion.
type (
	sanitizeOuter struct {
		Inner    *sanitizeInner
		Count    int
		Password Secret
		Raw      []byte
		Any      any
	}
	sanitizeInner struct {
		Outer  *sanitizeOuter
		Labels map[string]string
		Texts  []string
		Deep   [1]struct{ Text string }
	}
)

// TestSanitizeReachesEveryText: sanitize remembers by type which fields may
// hold text; every text is still redacted, through recursive types,
// pointers, maps, slices, arrays and interfaces, and a Secret and raw
// bytes are left as they came.
func TestSanitizeReachesEveryText(t *testing.T) {
	red := newRedactor(testAccessKey, testSecretKey, testAPIKey)
	for range 2 { // The second time from what was remembered.
		v := &sanitizeOuter{
			Inner: &sanitizeInner{
				Outer:  &sanitizeOuter{Any: &struct{ S string }{"x " + testAPIKey}},
				Labels: map[string]string{testSecretKey: "v " + testAccessKey},
				Texts:  []string{"a " + testSecretKey},
				Deep:   [1]struct{ Text string }{{testAPIKey}},
			},
			Password: Secret(testSecretKey),
			Raw:      []byte(testSecretKey),
		}
		sanitize(v, red, nil)
		got := fmt.Sprintf("%v %v %v %v", *v.Inner, *v.Inner.Outer, v.Inner.Outer.Any, v.Inner.Labels)
		for _, key := range []string{testAccessKey, testSecretKey, testAPIKey} {
			if strings.Contains(got, key) {
				t.Errorf("%q left in %s", key, got)
			}
		}
		if v.Password.Reveal() != testSecretKey || string(v.Raw) != testSecretKey {
			t.Error("a Secret or raw bytes changed")
		}
	}
}
