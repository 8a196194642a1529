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
}

var exampleKey = NewReaderKey[exampleReader]("example")

func init() {
	on := func(p Project) bool { return exampleKey.Of(p.Collect).Enabled }
	AddSettings(
		Setting{"collect.example", "collect.example.enabled", "Test only.", "",
			func(_ *API, c *Collect) any { return &exampleKey.In(c).Enabled }, nil},
		Setting{"collect.example.interval", "collect.example.interval", "Test only.", "2m",
			func(_ *API, c *Collect) any { return &exampleKey.In(c).Interval }, IfEnabled(on, AtLeastDataInterval(time.Minute))},
	)
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
	ps, err := Parse([]byte(doc), api, collect, env(map[string]string{"K": "k"}))
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
	if _, err := Parse([]byte(doc), api, collect, env(map[string]string{"K": "k"})); err == nil || !strings.Contains(err.Error(), "projects[0].collect.example.interval must be at least 1m") {
		t.Errorf("err = %v, want one naming collect.example.interval", err)
	}
}
