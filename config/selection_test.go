package config

import (
	"strings"
	"testing"
)

// TestSelectionFlags: both opt-in collectors take the same selection
// flags, checked the same way, each error naming its own flag.
func TestSelectionFlags(t *testing.T) {
	for _, c := range []struct{ collector, flag string }{
		{"usage", "--collect.usage.environment=prod"},
		{"usage", "--collect.usage.service-name-regex=a("},
		{"logs", "--collect.logs.environment=staging"},
		{"logs", "--collect.logs.service-name-regex=a("},
	} {
		f := parseFlags(t, "--collect."+c.collector, c.flag, "--api.url=https://x/v1", "--api.project-id=p")
		_, err := f.SingleProject(func(string) string { return "k" })
		name, _, _ := strings.Cut(c.flag, "=")
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: err = %v, want one naming %s", c.flag, err, name)
		}
		if err != nil && strings.Contains(c.flag, "regex") && !strings.Contains(err.Error(), "a(") {
			t.Errorf("%s: err = %v, want the pattern as given", c.flag, err)
		}
	}
	f := parseFlags(t, "--collect.logs", "--collect.logs.environment=PROD", "--collect.logs.environment=DEV",
		"--collect.logs.service-name-regex=db-.*", "--api.url=https://x/v1", "--api.project-id=p")
	p, err := f.SingleProject(func(string) string { return "k" })
	if err != nil {
		t.Fatal(err)
	}
	re := p.Collect.Logs.NameMatcher()
	if re == nil || !re.MatchString("db-1") || re.MatchString("x-db-1") {
		t.Errorf("name matcher %v: want db-.* anchored", re)
	}
	if (Selection{}).NameMatcher() != nil {
		t.Error("an empty pattern should select every name (nil matcher)")
	}
}
