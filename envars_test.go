package main

import (
	"slices"
	"testing"
)

// TestEveryFlagHasItsDerivedEnvar: every flag a user can see is set by the
// variable its name derives, so that a variable guessed from the pattern is
// never silently ignored.
func TestEveryFlagHasItsDerivedEnvar(t *testing.T) {
	app, _ := newApp()
	n := 0
	for _, fl := range app.Model().Flags {
		if fl.Hidden || fl.Name == "help" || fl.Name == "version" {
			continue
		}
		n++
		if want := envarOf(fl.Name); fl.Envar != want {
			t.Errorf("--%s: environment variable %q, want %q", fl.Name, fl.Envar, want)
		}
	}
	if n < 20 {
		t.Fatalf("found %d flags: the command line was not read", n)
	}
}

func TestEnvarOf(t *testing.T) {
	for flag, want := range map[string]string{
		"api.project-id":     "CLOUDDB_API_PROJECT_ID",
		"web.listen-address": "CLOUDDB_WEB_LISTEN_ADDRESS",
		"web.config.file":    "CLOUDDB_WEB_CONFIG_FILE",
	} {
		if got := envarOf(flag); got != want {
			t.Errorf("envarOf(%q) = %q, want %q", flag, got, want)
		}
	}
}

// TestDeprecatedEnvars: the variables used before the names were derived
// still work when the new one is unset, are reported for a warning, and
// give way to the new variable and to the flag.
func TestDeprecatedEnvars(t *testing.T) {
	for _, tc := range []struct {
		name     string
		args     []string
		env      map[string]string
		want     string
		reported []string
	}{
		{"old name alone", nil, map[string]string{"CLOUDDB_PROJECT_ID": "old"}, "old", []string{"CLOUDDB_PROJECT_ID"}},
		{"new name wins", nil, map[string]string{"CLOUDDB_PROJECT_ID": "old", "CLOUDDB_API_PROJECT_ID": "new"}, "new", []string{"CLOUDDB_PROJECT_ID"}},
		{"flag wins", []string{"--api.project-id=flag"}, map[string]string{"CLOUDDB_PROJECT_ID": "old"}, "flag", []string{"CLOUDDB_PROJECT_ID"}},
		{"neither", nil, nil, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, name := range []string{"CLOUDDB_PROJECT_ID", "CLOUDDB_API_PROJECT_ID"} {
				t.Setenv(name, tc.env[name]) // kingpin reads the process's environment
			}
			f, err := parseFlags(tc.args, func(k string) string { return tc.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			if f.config.ProjectID != tc.want {
				t.Errorf("project id %q, want %q", f.config.ProjectID, tc.want)
			}
			var got []string
			for _, d := range f.deprecatedEnvars {
				got = append(got, d.old)
			}
			if !slices.Equal(got, tc.reported) {
				t.Errorf("deprecated variables reported %q, want %q", got, tc.reported)
			}
		})
	}
	f, err := parseFlags(nil, func(k string) string {
		return map[string]string{"CLOUDDB_ACCESS_KEY_FILE": "/a", "CLOUDDB_SECRET_KEY_FILE": "/s"}[k]
	})
	if err != nil || f.config.AccessKeyFile != "/a" || f.config.SecretKeyFile != "/s" {
		t.Errorf("key files %q and %q (err %v), want the deprecated variables' /a and /s", f.config.AccessKeyFile, f.config.SecretKeyFile, err)
	}
}

// TestBoolArgs: --flag=true and --flag=false of a boolean flag mean --flag
// and --no-flag (kingpin alone refuses both with "unexpected true"); any
// other value, on the command line or in the variable, is an error naming
// the flag and its variable.
func TestBoolArgs(t *testing.T) {
	app, _ := newApp()
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want []string
		err  string
	}{
		{args: []string{"--collect.usage=true", "--collect.logs=0", "--no-simulate=false"}, want: []string{"--collect.usage", "--no-collect.logs", "--simulate"}},
		{args: []string{"--collect.usage", "--api.url=x=y", "--", "--collect.usage=yes"}, want: []string{"--collect.usage", "--api.url=x=y", "--", "--collect.usage=yes"}},
		{args: []string{"--collect.usage=yes"}, err: `--collect.usage=yes: --collect.usage (CLOUDDB_COLLECT_USAGE) is true or false, not "yes": write --collect.usage or --no-collect.usage`},
		{env: map[string]string{"CLOUDDB_COLLECT_USAGE": "yes"}, err: `CLOUDDB_COLLECT_USAGE=yes: --collect.usage (CLOUDDB_COLLECT_USAGE) is true or false, not "yes"`},
		{env: map[string]string{"CLOUDDB_COLLECT_USAGE": "TRUE"}, want: []string{}},
	} {
		got, err := boolArgs(app, tc.args, func(k string) string { return tc.env[k] })
		switch {
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("%q %v: %v, want %q", tc.args, tc.env, err, tc.err)
		case tc.err == "" && (err != nil || !slices.Equal(got, tc.want)):
			t.Errorf("%q %v: %q %v, want %q", tc.args, tc.env, got, err, tc.want)
		}
	}
}

// TestUnknownEnvars: a CLOUDDB_ variable that is no flag's, no credential
// nor deprecated one, and that the configuration did not name, is
// reported with the nearest name.
func TestUnknownEnvars(t *testing.T) {
	app, _ := newApp()
	got := unknownEnvars(app, []string{
		"CLOUDDB_API_ULR=https://x/v1", "CLOUDDB_COLLECT_USAGES=true", "CLOUDDB_SECRET_KY=s",
		"CLOUDDB_API_URL=https://x/v1", "CLOUDDB_PROJECT_ID=p", "CLOUDDB_ACCESS_KEY=a", "CLOUDDB_API_CREDENTIALS_CHECK_INTERVAL=1s",
		"CLOUDDB_DEV_ACCESS_KEY=named-by-the-file", "CLOUDDB_EMPTY=", "HOME=/root",
	}, map[string]bool{"CLOUDDB_DEV_ACCESS_KEY": true})
	want := []unknownEnvar{{"CLOUDDB_API_ULR", "CLOUDDB_API_URL"}, {"CLOUDDB_COLLECT_USAGES", "CLOUDDB_COLLECT_USAGE"}, {"CLOUDDB_SECRET_KY", "CLOUDDB_SECRET_KEY"}}
	if !slices.Equal(got, want) {
		t.Errorf("unknown variables %v, want %v", got, want)
	}
}
