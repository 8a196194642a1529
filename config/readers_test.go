package config

import (
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kingpin/v2"
)

// exampleReader stands for a data-plane reader declared outside this
// package: its settings are a type and rows of its own.
type exampleReader struct {
	Enabled  bool
	Interval time.Duration
	Tags     []string
	Selection
}

var exampleKey = NewReaderKey[exampleReader]("example")

func init() {
	on := func(p Project) bool { return exampleKey.Of(p.Collect).Enabled }
	AddSettings(
		Setting{Flag: "collect.example", Key: "collect.example.enabled", Help: "Test only.", Demo: true,
			Field: exampleKey.Field(func(r *exampleReader) any { return &r.Enabled })},
		Setting{Flag: "collect.example.interval", Key: "collect.example.interval", Help: "Test only.", Default: "2m",
			Field: exampleKey.Field(func(r *exampleReader) any { return &r.Interval }), Check: IfEnabled(on, AtLeastDataInterval(time.Minute))},
		Setting{Flag: "collect.example.tags", Key: "collect.example.tags", Help: "Test only.",
			Field: exampleKey.Field(func(r *exampleReader) any { return &r.Tags })},
	)
	AddSettings(SelectionSettings("example", "Read", func(c *Collect) *Selection { return &exampleKey.In(c).Selection }, on)...)
}

// TestAddedSettings: a setting added from outside the table gets its flag,
// its derived variable, its file key and its check, and a project's
// override stays in that project.
func TestAddedSettings(t *testing.T) {
	app := kingpin.New("test", "")
	f := AddFlags(app)
	if fl := app.GetFlag("collect.example.interval"); fl == nil || fl.Model().Envar != "CLOUDDB_COLLECT_EXAMPLE_INTERVAL" {
		t.Fatalf("flag %v: want one with CLOUDDB_COLLECT_EXAMPLE_INTERVAL", fl)
	}
	if _, err := app.Parse([]string{"--api.url=https://x/v1", "--collect.example"}); err != nil {
		t.Fatal(err)
	}
	api, collect := f.Defaults()
	if got := exampleKey.Of(collect); !got.Enabled || got.Interval != 2*time.Minute {
		t.Fatalf("flags give %+v", got)
	}
	doc := "projects:\n  - {id: a, access_key_env: K, secret_key_env: K, collect: {example: {interval: 5m}}}\n  - {id: b, access_key_env: K, secret_key_env: K}\n"
	ps, err := parse([]byte(doc), "", api, collect, env(map[string]string{"K": "k"}))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := exampleKey.Of(ps[0].Collect).Interval, exampleKey.Of(ps[1].Collect).Interval; a != 5*time.Minute || b != 2*time.Minute {
		t.Errorf("intervals %v, %v: want 5m, then the flag's 2m", a, b)
	}
	if exampleKey.Of(collect).Interval != 2*time.Minute {
		t.Errorf("a project's key changed the flags' value")
	}
	doc = "projects:\n  - {id: a, access_key_env: K, secret_key_env: K, collect: {example: {interval: 10s}}}\n"
	if _, err := parse([]byte(doc), "", api, collect, env(map[string]string{"K": "k"})); err == nil || !strings.Contains(err.Error(), "projects[0].collect.example.interval must be at least 1m") {
		t.Errorf("err = %v, want one naming collect.example.interval", err)
	}
}

// TestSelectionSettings: a reader's selection flags are checked when it is
// on, each error naming its flag (a regex's quoting the pattern as given),
// and the name pattern is anchored.
func TestSelectionSettings(t *testing.T) {
	for _, flag := range []string{"--collect.example.environment=prod", "--collect.example.service-name-regex=a("} {
		_, err := parseFlags(t, "--collect.example", flag, "--api.url=https://x/v1", "--api.project-id=p").SingleProject(env(map[string]string{"CLOUDDB_ACCESS_KEY": "k", "CLOUDDB_SECRET_KEY": "k"}))
		name, value, _ := strings.Cut(flag, "=")
		if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), value) {
			t.Errorf("%s: err = %v, want one naming %s and %s", flag, err, name, value)
		}
		if _, err := parseFlags(t, flag, "--api.url=https://x/v1", "--api.project-id=p").SingleProject(env(map[string]string{"CLOUDDB_ACCESS_KEY": "k", "CLOUDDB_SECRET_KEY": "k"})); err != nil {
			t.Errorf("%s with the reader off: %v", flag, err)
		}
	}
	p, err := parseFlags(t, "--collect.example", "--collect.example.environment=PROD", "--collect.example.service-name-regex=db-.*",
		"--api.url=https://x/v1", "--api.project-id=p").SingleProject(env(map[string]string{"CLOUDDB_ACCESS_KEY": "k", "CLOUDDB_SECRET_KEY": "k"}))
	if err != nil {
		t.Fatal(err)
	}
	sel := exampleKey.Of(p.Collect).Selection
	if re := sel.NameMatcher(); re == nil || !re.MatchString("db-1") || re.MatchString("x-db-1") || len(sel.Environments) != 1 {
		t.Errorf("selection %+v: want PROD and db-.* anchored", sel)
	}
	if (Selection{}).NameMatcher() != nil {
		t.Error("an empty pattern should select every name (nil matcher)")
	}
}
