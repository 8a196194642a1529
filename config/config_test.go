package config

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/alecthomas/kingpin/v2"
)

func parseFlags(t *testing.T, args ...string) *Flags {
	t.Helper()
	app := kingpin.New("test", "")
	f := AddFlags(app)
	if _, err := app.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f
}

func env(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSingleProject(t *testing.T) {
	keyFile := writeFile(t, "from-file\n")
	for _, tc := range []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr []string // substrings; empty means success
		check   func(t *testing.T, p Project)
	}{
		{
			name: "env credentials",
			args: []string{"--api.url=https://api.example.net/v1", "--api.project-id=p1"},
			env:  map[string]string{EnvAccessKey: "ak", EnvSecretKey: "sk"},
			check: func(t *testing.T, p Project) {
				if p.Credentials.AccessKey.Reveal() != "ak" || p.Credentials.SecretKey.Reveal() != "sk" || p.Credentials.APIKey != "" {
					t.Errorf("credentials not taken from env: %+v", p.Credentials)
				}
				if p.Collect.Interval != 60*time.Second || p.API.RateLimit != 5 {
					t.Errorf("defaults not applied: %+v %+v", p.Collect, p.API)
				}
			},
		},
		{
			name: "file credentials, trimmed",
			args: []string{"--api.url=https://api.example.net/v1", "--api.project-id=p1",
				"--api.access-key-file=" + keyFile, "--api.secret-key-file=" + keyFile, "--api.key-file=" + keyFile},
			check: func(t *testing.T, p Project) {
				if p.Credentials.SecretKey.Reveal() != "from-file" || p.Credentials.APIKey.Reveal() != "from-file" {
					t.Errorf("credentials not read from file: %q", p.Credentials.SecretKey.Reveal())
				}
			},
		},
		{
			name:    "missing everything names flags and env vars",
			wantErr: []string{"--api.url (CLOUDDB_API_URL) is required", "--api.project-id (CLOUDDB_API_PROJECT_ID) is required", "CLOUDDB_ACCESS_KEY or --api.access-key-file is required", "CLOUDDB_SECRET_KEY or --api.secret-key-file"},
		},
		{
			name:    "contradictory credential sources",
			args:    []string{"--api.url=https://api.example.net/v1", "--api.project-id=p1", "--api.access-key-file=" + keyFile},
			env:     map[string]string{EnvAccessKey: "ak", EnvSecretKey: "sk"},
			wantErr: []string{"both CLOUDDB_ACCESS_KEY and --api.access-key-file are set"},
		},
		{
			name:    "credentials in the URL are refused without echoing them",
			args:    []string{"--api.url=https://user:hunter2@api.example.net/v1", "--api.project-id=p1"},
			env:     map[string]string{EnvAccessKey: "ak", EnvSecretKey: "sk"},
			wantErr: []string{"--api.url (CLOUDDB_API_URL)", "must not carry credentials"},
		},
		{
			name:    "relative URL",
			args:    []string{"--api.url=api.example.net/v1", "--api.project-id=p1"},
			env:     map[string]string{EnvAccessKey: "ak", EnvSecretKey: "sk"},
			wantErr: []string{"--api.url (CLOUDDB_API_URL)", "absolute http or https URL"},
		},
		{
			name:    "non-positive settings",
			args:    []string{"--api.url=https://api.example.net/v1", "--api.project-id=p1", "--collect.concurrency=0", "--api.rate-limit=0", "--collect.max-staleness=10s"},
			env:     map[string]string{EnvAccessKey: "ak", EnvSecretKey: "sk"},
			wantErr: []string{"--collect.concurrency must be positive", "--api.rate-limit must be positive", "--collect.max-staleness (10s) must not be shorter than --collect.interval"},
		},
		{
			name:    "unreadable key file",
			args:    []string{"--api.url=https://api.example.net/v1", "--api.project-id=p1", "--api.access-key-file=/nonexistent/key"},
			env:     map[string]string{EnvSecretKey: "sk"},
			wantErr: []string{"--api.access-key-file: open /nonexistent/key"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := parseFlags(t, tc.args...).SingleProject(env(tc.env))
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				tc.check(t, p)
				return
			}
			if err == nil {
				t.Fatal("want an error")
			}
			for _, want := range tc.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error leaks a password: %q", err)
			}
		})
	}
}

func TestParseFile(t *testing.T) {
	keyFile := writeFile(t, "file-secret")
	api := API{URL: "https://default.example.net/v1", Timeout: time.Second, RateLimit: 5, MaxRetries: 3}
	collect := Collect{Interval: time.Minute, TransitionInterval: 10 * time.Second, MaxStaleness: 5 * time.Minute, Concurrency: 4}
	getenv := env(map[string]string{"A_KEY": "a-access", "A_SECRET": "a-secret"})

	good := fmt.Sprintf(`
projects:
  - id: prod
    access_key_env: A_KEY
    secret_key_env: A_SECRET
  - id: dev
    api_url: https://other.example.net/v1
    access_key_file: %[1]s
    secret_key_file: %[1]s
    api_key_file: %[1]s
    api:
      rate_limit: 1.5
    collect:
      interval: 2m
      concurrency: 8
      max_resources_per_list: 500
`, keyFile)
	projects, err := parse([]byte(good), "", api, collect, getenv)
	if err != nil {
		t.Fatal(err)
	}
	if len(projects) != 2 {
		t.Fatalf("got %d projects", len(projects))
	}
	prod, dev := projects[0], projects[1]
	if prod.API.URL != api.URL || !reflect.DeepEqual(prod.Collect, collect) || prod.Credentials.AccessKey.Reveal() != "a-access" {
		t.Errorf("prod does not inherit the flags: %+v", prod)
	}
	if dev.API.URL != "https://other.example.net/v1" || dev.API.RateLimit != 1.5 || dev.Collect.Interval != 2*time.Minute ||
		dev.Collect.Concurrency != 8 || dev.Collect.MaxResourcesPerList != 500 || dev.Collect.TransitionInterval != 10*time.Second || dev.Credentials.APIKey.Reveal() != "file-secret" {
		t.Errorf("dev overrides not applied: %+v", dev)
	}

	for _, tc := range []struct {
		name, yaml string
		want       []string
	}{
		{"unknown key", "projects:\n  - id: a\n    acess_key_env: A_KEY\n", []string{"projects[0].acess_key_env: unknown key (did you mean access_key_env?)"}},
		{"unknown nested key", "projects:\n  - {id: a, collect: {intervall: 2m, example: {enabeld: true}}}\n",
			[]string{"projects[0].collect.intervall: unknown key (did you mean interval?)", "projects[0].collect.example.enabeld: unknown key (did you mean enabled?)"}},
		{"far from any key", "projects:\n  - {id: a, zzzzzzzz: 1}\n", []string{"projects[0].zzzzzzzz: unknown key; valid keys: access_key_env, access_key_file, api,"}},
		{"top-level key", "project:\n  - id: a\n", []string{"project: unknown key (did you mean projects?)"}},
		{"wrong types", "projects:\n  - {id: a, collect: {interval: two minutes, concurrency: many, example: {enabled: maybe, tags: x}}, api: {rate_limit: fast}}\n",
			[]string{`projects[0].collect.interval: "two minutes" is not a duration (write it like 2m, 90s or 1h)`, `projects[0].collect.concurrency: "many" is not a whole number`,
				`projects[0].collect.example.enabled: "maybe" is not true or false`, `projects[0].collect.example.tags: "x" is not a list of strings`, `projects[0].api.rate_limit: "fast" is not a number`}},
		{"a list for a mapping", "projects:\n  - {id: a, http_client: [1]}\n", []string{"projects[0].http_client: a list is not a mapping of keys"}},
		{"not a list", "projects: {id: a}\n", []string{"projects: a mapping is not a list of mappings"}},
		{"unknown TLS key", "projects:\n  - {id: a, http_client: {tls_config: {ca_fiel: ca.pem}, proxy_ur: x}}\n",
			[]string{"projects[0].http_client.tls_config.ca_fiel: unknown key (did you mean ca_file?)", "projects[0].http_client.proxy_ur: unknown key (did you mean proxy_url?)"}},
		{"empty file", "", []string{"the file is empty"}},
		{"no projects", "projects: []\n", []string{"no projects listed"}},
		{"duplicate ids", "projects:\n  - {id: a, access_key_env: A_KEY, secret_key_env: A_SECRET}\n  - {id: a, access_key_env: A_KEY, secret_key_env: A_SECRET}\n",
			[]string{`projects[1].id: duplicate project "a"`}},
		{"missing credentials and id", "projects:\n  - {}\n",
			[]string{"projects[0].id is required", "projects[0].access_key_env or --config.file: projects[0].access_key_file is required"}},
		{"unset env var", "projects:\n  - {id: a, access_key_env: NOPE, secret_key_env: A_SECRET}\n",
			[]string{"projects[0].access_key_env: environment variable NOPE is empty or unset"}},
		{"both sources", fmt.Sprintf("projects:\n  - {id: a, access_key_env: A_KEY, access_key_file: %s, secret_key_env: A_SECRET}\n", keyFile),
			[]string{"both --config.file: projects[0].access_key_env and --config.file: projects[0].access_key_file are set"}},
		{"bad override", "projects:\n  - {id: a, access_key_env: A_KEY, secret_key_env: A_SECRET, collect: {concurrency: 0}}\n",
			[]string{"projects[0].collect.concurrency must be positive"}},
		{"negative list bound", "projects:\n  - {id: a, access_key_env: A_KEY, secret_key_env: A_SECRET, collect: {max_resources_per_list: -1}}\n",
			[]string{"projects[0].collect.max_resources_per_list must be positive"}},
		{"bad duration", "projects:\n  - {id: a, access_key_env: A_KEY, secret_key_env: A_SECRET, collect: {interval: soon}}\n",
			[]string{"--config.file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parse([]byte(tc.yaml), "", api, collect, getenv)
			if err == nil {
				t.Fatal("want an error")
			}
			for _, want := range tc.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
			if strings.Contains(err.Error(), "struct") {
				t.Errorf("error %q names Go types", err)
			}
		})
	}
}

func TestSingleProjectSettingsGiven(t *testing.T) {
	f := parseFlags(t, "--api.url=https://x.example/v1", "--api.key-file=/k")
	got := f.SingleProjectSettingsGiven(env(map[string]string{EnvSecretKey: "s"}), true)
	want := []string{"--api.url (CLOUDDB_API_URL)", "--api.key-file", EnvSecretKey}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if got := f.SingleProjectSettingsGiven(env(nil), false); fmt.Sprint(got) != "[--api.key-file]" {
		t.Errorf("without URL: got %v", got)
	}
}

func TestClientConfigRetries(t *testing.T) {
	for flagValue, want := range map[int]int{0: -1, 1: 1, 5: 5} {
		p := Project{API: API{MaxRetries: flagValue}}
		cc, err := p.ClientConfig()
		if err != nil {
			t.Fatal(err)
		}
		if got := cc.MaxRetries; got != want {
			t.Errorf("--api.max-retries=%d gives apiclient MaxRetries %d, want %d (apiclient reads 0 as its default)", flagValue, got, want)
		}
	}
}

// TestDemoDefaults: the demo turns a reader marked Demo on (the example
// reader of readers_test.go), unless the command line or the environment chose.
func TestDemoDefaults(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		on   bool
	}{
		{nil, nil, true},
		{[]string{"--no-collect.example"}, nil, false},
		{nil, map[string]string{"CLOUDDB_COLLECT_EXAMPLE": "false"}, false},
	} {
		_, c := parseFlags(t, tc.args...).DemoDefaults(env(tc.env))
		if on := exampleKey.Of(c).Enabled; on != tc.on {
			t.Errorf("%v %v: example reader on %v, want %v", tc.args, tc.env, on, tc.on)
		}
		if _, d := parseFlags(t, tc.args...).Defaults(); exampleKey.Of(d).Enabled {
			t.Errorf("%v: Defaults turned the example reader on", tc.args)
		}
	}
}

// TestDemoInterval: the demo polls every DemoInterval unless the command
// line or the environment gives --collect.interval; Defaults keep 60s.
func TestDemoInterval(t *testing.T) {
	if _, d := parseFlags(t).Defaults(); d.Interval != DefaultInterval {
		t.Errorf("Defaults: interval %v, want %v", d.Interval, DefaultInterval)
	}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want time.Duration
	}{
		{nil, nil, DemoInterval},
		{[]string{"--collect.interval=2m"}, nil, 2 * time.Minute},
		{[]string{"--collect.interval=60s"}, nil, time.Minute},
		{nil, map[string]string{"CLOUDDB_COLLECT_INTERVAL": "30s"}, 30 * time.Second},
	} {
		for k, v := range tc.env {
			t.Setenv(k, v) // as the flag reads it (the last case)
		}
		if _, c := parseFlags(t, tc.args...).DemoDefaults(env(tc.env)); c.Interval != tc.want {
			t.Errorf("%v %v: demo interval %v, want %v", tc.args, tc.env, c.Interval, tc.want)
		}
	}
}
