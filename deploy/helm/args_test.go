package helm

import (
	"slices"
	"strings"
	"testing"
)

// count returns how many args set the flag (--flag or --flag=value).
func count(a []string, flag string) int {
	n := 0
	for _, s := range a {
		if s == flag || strings.HasPrefix(s, flag+"=") {
			n++
		}
	}
	return n
}

// TestLogValues: the log flags are values (the chart passes them itself,
// so they cannot also come from extraArgs).
func TestLogValues(t *testing.T) {
	a := args(container(t, mustRender(t, minimalValues)))
	for _, want := range []string{"--log.format=json", "--log.level=info"} {
		if !slices.Contains(a, want) {
			t.Errorf("default args %v lack %s", a, want)
		}
	}
	a = args(container(t, mustRender(t, minimalValues+"logFormat: logfmt\nlogLevel: debug")))
	if !slices.Contains(a, "--log.format=logfmt") || !slices.Contains(a, "--log.level=debug") || count(a, "--log.format") != 1 || count(a, "--log.level") != 1 {
		t.Errorf("args %v, want --log.format=logfmt and --log.level=debug once each", a)
	}
	for values, want := range map[string]string{
		"logFormat: text": "at '/logFormat': value must be one of",
		"logLevel: trace": "at '/logLevel': value must be one of",
	} {
		if _, err := render(t, minimalValues+values); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", values, err, want)
		}
	}
}

// TestExtraArgsRepeatingChartFlags: a flag the chart sets itself, repeated
// in extraArgs, makes the exporter exit ("flag cannot be repeated") and the
// pod crash-loop; the chart refuses it and names the value to use. A flag
// the chart does not set with these values stays free.
func TestExtraArgsRepeatingChartFlags(t *testing.T) {
	for _, tc := range []struct{ values, want string }{
		{"extraArgs: [--log.format=logfmt]", "extraArgs: --log.format is set by the chart: use logFormat"},
		{"extraArgs: [--log.level=debug]", "use logLevel"},
		{"extraArgs: ['--log.level debug']", "use logLevel"},
		{"extraArgs: [--web.listen-address=:8080]", "use service.port"},
		{"extraArgs: [--api.url=https://other.example.net/v1]", "use api.url"},
		{"extraArgs: [--api.project-id=p2]", "use api.projectId"},
		{"extraArgs: [--api.access-key-file=/x]", "use credentials"},
		{"config: {existingConfigMap: cfg}\nextraArgs: [--config.file=/x]", "use config.content"},
		{"admin: {enabled: true, tokenSecret: {name: t}, allow: [resizeService]}\nextraArgs: [--admin.allow=setHA]", "use admin.allow"},
		{"sharding: {enabled: true}\nextraArgs: [--no-shard.from-hostname]", "use sharding.enabled"},
		{"webConfig: {existingSecret: web}\nextraArgs: [--web.config.file=/x]", "use webConfig"},
	} {
		// The template's own check: it stands without the schema.
		_, err := renderSkipSchema(t, minimalValues+tc.values)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.values, err, tc.want)
		}
	}
	// Flags the chart leaves alone stay free.
	a := args(container(t, mustRender(t, minimalValues+"extraArgs: [--collect.interval=2m, --api.key-file=/etc/other/api_key, --web.telemetry-path=/m]")))
	for _, want := range []string{"--collect.interval=2m", "--api.key-file=/etc/other/api_key", "--web.telemetry-path=/m"} {
		if count(a, strings.SplitN(want, "=", 2)[0]) != 1 {
			t.Errorf("args %v: want %s once", a, want)
		}
	}
}

// TestAPIKeyFileOnlyWhenInSecret: the API key is optional; the chart passes
// --api.key-file only when a value says the Secret holds it, so that a
// Secret made of the two required keys starts.
func TestAPIKeyFileOnlyWhenInSecret(t *testing.T) {
	const flag = "--api.key-file=/etc/clouddb/credentials/api_key"
	if a := args(container(t, mustRender(t, minimalValues))); slices.Contains(a, flag) {
		t.Errorf("default args %v: the Secret need not hold api_key", a)
	}
	if a := args(container(t, mustRender(t, minimalValues+"credentials: {existingSecret: c, existingSecretHasApiKey: true}"))); !slices.Contains(a, flag) {
		t.Errorf("args %v lack %s", a, flag)
	}
	a := args(container(t, mustRender(t, minimalValues+"credentials: {existingSecret: c, apiKeyKey: key, existingSecretHasApiKey: true}")))
	if !slices.Contains(a, "--api.key-file=/etc/clouddb/credentials/key") {
		t.Errorf("args %v: want the apiKeyKey's file", a)
	}
	// The chart's own Secret holds the key when apiKey is set.
	a = args(container(t, mustRender(t, minimalValues+"credentials: {accessKey: AK, secretKey: SK, apiKey: K}")))
	if !slices.Contains(a, flag) {
		t.Errorf("args %v lack %s with credentials.apiKey", a, flag)
	}
}

// TestAPIURLRequired: no placeholder URL; the API's URL is required unless
// a config file lists the projects.
func TestAPIURLRequired(t *testing.T) {
	for _, values := range []string{"", "api: {projectId: p1}", "api: {url: ''}"} {
		_, err := renderSkipSchema(t, values)
		if err == nil || !strings.Contains(err.Error(), "api.url is required") {
			t.Errorf("%q: %v, want the error asking for api.url", values, err)
		}
	}
	if _, err := render(t, "config: {content: {projects: [{id: p1, api_url: https://api.example.net/v1}]}}"); err != nil {
		t.Errorf("config without api.url: %v", err)
	}
	if _, err := render(t, "api: {url: https://api.example.net/v1}"); err != nil {
		t.Errorf("discovery mode with api.url: %v", err)
	}
}

func contains(err error, s string) bool { return strings.Contains(err.Error(), s) }
