package config

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestEveryFileKeyOverridesItsFlag: each setting's file key sets the very
// value its flag sets, and a project that leaves it out keeps the flag's.
func TestEveryFileKeyOverridesItsFlag(t *testing.T) {
	api, collect := parseFlags(t, "--api.url=https://x/v1").Defaults()
	samples := map[reflect.Type]struct {
		yaml string
		want any
	}{
		reflect.TypeFor[time.Duration](): {"7m", 7 * time.Minute},
		reflect.TypeFor[int]():           {"7", 7},
		reflect.TypeFor[float64]():       {"7.5", 7.5},
		reflect.TypeFor[bool]():          {"true", true},
		reflect.TypeFor[string]():        {"x-.*", "x-.*"},
		reflect.TypeFor[[]string]():      {"[PROD]", []string{"PROD"}},
	}
	n := 0
	for _, s := range settings {
		if s.key == "" {
			continue
		}
		n++
		flagValue := reflect.ValueOf(s.field(&api, &collect)).Elem().Interface()
		sample := samples[reflect.TypeOf(flagValue)]
		// {api: {timeout: 7m}} for api.timeout.
		parts := strings.Split(s.key, ".")
		value := sample.yaml
		for i := len(parts) - 1; i >= 0; i-- {
			value = "{" + parts[i] + ": " + value + "}"
		}
		doc := fmt.Sprintf("projects:\n  - {id: a, access_key_env: K, secret_key_env: K, %s}\n  - {id: b, access_key_env: K, secret_key_env: K}\n",
			strings.TrimSuffix(strings.TrimPrefix(value, "{"), "}"))
		ps, err := parse([]byte(doc), "", api, collect, func(string) string { return "k" })
		if err != nil {
			t.Errorf("%s: %v", s.key, err)
			continue
		}
		if got := reflect.ValueOf(s.field(&ps[0].API, &ps[0].Collect)).Elem().Interface(); !reflect.DeepEqual(got, sample.want) {
			t.Errorf("%s: %v gives %#v, want %#v", s.key, sample.yaml, got, sample.want)
		}
		if got := reflect.ValueOf(s.field(&ps[1].API, &ps[1].Collect)).Elem().Interface(); !reflect.DeepEqual(got, flagValue) {
			t.Errorf("%s left out: %#v, want the flag's %#v", s.key, got, flagValue)
		}
	}
	if n < 14 {
		t.Fatalf("%d file keys in the settings table", n)
	}
}

// TestFileSettingsRefuseDuplicates: a key given twice is an error, not
// whichever copy is read first.
func TestFileSettingsRefuseDuplicates(t *testing.T) {
	doc := "projects:\n  - id: a\n    access_key_env: K\n    secret_key_env: K\n    collect:\n      interval: 2m\n      interval: 3m\n"
	_, err := parse([]byte(doc), "", API{URL: "https://x/v1"}, Collect{}, func(string) string { return "k" })
	if err == nil || !strings.Contains(err.Error(), "projects[0].collect.interval") {
		t.Errorf("err = %v, want one naming projects[0].collect.interval", err)
	}
}
