package config

import (
	"errors"
	"fmt"
	"net/url"

	"github.com/alecthomas/kingpin/v2"
	promconfig "github.com/prometheus/common/config"

	"github.com/clouddb/clouddb_exporter/internal/flagval"
)

// Credential environment variables, read directly rather than bound to flags so
// that no value can ever show in --help.
const (
	EnvAccessKey = "CLOUDDB_ACCESS_KEY"
	EnvSecretKey = "CLOUDDB_SECRET_KEY"
	EnvAPIKey    = "CLOUDDB_API_KEY"
)

// Flags are the api.*, collect.* and config.file flags.
type Flags struct {
	URL           string
	ProjectID     string
	AccessKeyFile string
	SecretKeyFile string
	APIKeyFile    string
	API           API
	Collect       Collect
	ConfigFile    string
	proxyURL      string
	// given: whether the user set each flag with a demo value (Setting.Demo).
	given map[string]*bool
}

// AddFlags registers the flags on app.
func AddFlags(app *kingpin.Application) *Flags {
	f := &Flags{}
	app.Flag("api.url", "Base URL of the cloud API, with its version: https://api.example.net/v1.").
		Envar("CLOUDDB_API_URL").StringVar(&f.URL)
	app.Flag("api.project-id", "Project to poll; unset, every project the keys reach is discovered.").
		Envar("CLOUDDB_API_PROJECT_ID").StringVar(&f.ProjectID)
	app.Flag("api.access-key-file", "File holding the API access key (or $"+EnvAccessKey+").").
		Envar("CLOUDDB_API_ACCESS_KEY_FILE").StringVar(&f.AccessKeyFile)
	app.Flag("api.secret-key-file", "File holding the API secret key (or $"+EnvSecretKey+").").
		Envar("CLOUDDB_API_SECRET_KEY_FILE").StringVar(&f.SecretKeyFile)
	app.Flag("api.key-file", "File holding the key of GET /auth/info (or $"+EnvAPIKey+"; optional).").
		Envar("CLOUDDB_API_KEY_FILE").StringVar(&f.APIKeyFile)
	addSettingFlags(app, &f.API, &f.Collect)
	f.given = map[string]*bool{}
	for _, s := range settings {
		if s.demo || s.flag == "collect.interval" {
			f.given[s.flag] = new(bool)
			app.GetFlag(s.flag).IsSetByUser(f.given[s.flag])
		}
	}
	flagval.Duration(app, "collect.min-data-interval", "Testing only: the shortest interval a data-plane reader allows (its --collect.<name>.interval).",
		"0s", "", &f.Collect.minDataInterval)
	app.GetFlag("collect.min-data-interval").Hidden()
	tls := &f.API.HTTPClient.TLSConfig
	app.Flag("api.tls.ca-file", "CA certificates (PEM) to verify the API's certificate with.").
		Envar("CLOUDDB_API_TLS_CA_FILE").StringVar(&tls.CAFile)
	app.Flag("api.tls.cert-file", "Client certificate (PEM) for mutual TLS with the API.").
		Envar("CLOUDDB_API_TLS_CERT_FILE").StringVar(&tls.CertFile)
	app.Flag("api.tls.key-file", "Private key (PEM) of --api.tls.cert-file.").
		Envar("CLOUDDB_API_TLS_KEY_FILE").StringVar(&tls.KeyFile)
	app.Flag("api.tls.server-name", "Name to verify the API's certificate against, if not --api.url's host.").
		Envar("CLOUDDB_API_TLS_SERVER_NAME").StringVar(&tls.ServerName)
	app.Flag("api.tls.insecure-skip-verify", "Do not verify the API's certificate (testing only).").
		Envar("CLOUDDB_API_TLS_INSECURE_SKIP_VERIFY").BoolVar(&tls.InsecureSkipVerify)
	app.Flag("api.proxy-url", "Proxy for the API (http, https, socks5; default: $HTTPS_PROXY).").
		Envar("CLOUDDB_API_PROXY_URL").StringVar(&f.proxyURL)
	app.Flag("config.file", "YAML file listing several projects and their credentials (reloadable).").
		Envar("CLOUDDB_CONFIG_FILE").StringVar(&f.ConfigFile)
	return f
}

// DemoDefaults are Defaults with the settings marked Demo (the data-plane readers) on
// for the simulator's demo, unless their flags (or variables) say otherwise.
func (f *Flags) DemoDefaults(getenv func(string) string) (API, Collect) {
	api, collect := f.Defaults()
	for _, s := range settings {
		if s.demo && !*f.given[s.flag] && getenv(flagval.Envar(s.flag)) == "" {
			*s.field(&api, &collect).(*bool) = true
		}
	}
	if !*f.given["collect.interval"] && getenv(flagval.Envar("collect.interval")) == "" {
		collect.Interval = DemoInterval
	}
	return api, collect
}

// Defaults returns the flags' API and collect settings, which a file's projects inherit
// (a project's http_client replaces --api.tls.* and --api.proxy-url as a whole).
func (f *Flags) Defaults() (API, Collect) {
	api := f.API
	api.URL = f.URL
	if f.proxyURL != "" {
		// Checked by CheckHTTPClient; an unparsable URL leaves no proxy.
		if u, err := url.Parse(f.proxyURL); err == nil {
			api.HTTPClient.ProxyURL = promconfig.URL{URL: u}
		}
	}
	return api, f.Collect.clone()
}

// CheckHTTPClient validates --api.tls.* and --api.proxy-url, reading the files.
func (f *Flags) CheckHTTPClient() error {
	if f.proxyURL != "" {
		u, err := url.Parse(f.proxyURL)
		if err != nil {
			return errors.New("--api.proxy-url is not a valid URL")
		}
		if u.User != nil {
			return fmt.Errorf("--api.proxy-url (CLOUDDB_API_PROXY_URL) %q must not carry credentials: they would show in process listings; set $HTTPS_PROXY in the environment instead", u.Redacted())
		}
	}
	api, _ := f.Defaults()
	return api.HTTPClient.check("--api.tls.* / --api.proxy-url")
}

func flagWhere(flag string) string {
	if flag == "api.url" || flag == "api.project-id" {
		return "--" + flag + " (" + flagval.Envar(flag) + ")"
	}
	return "--" + flag
}

// SingleProject resolves the one project the flags describe.
func (f *Flags) SingleProject(getenv func(string) string) (Project, error) {
	return f.singleProject(getenv, f.ProjectID)
}

// DiscoveryTemplate resolves single-project mode without --api.project-id: the
// settings every discovered project is polled with. Its ID is "".
func (f *Flags) DiscoveryTemplate(getenv func(string) string) (Project, error) {
	p, err := f.singleProject(getenv, discoveryPlaceholder)
	p.ID = ""
	return p, err
}

const discoveryPlaceholder = "(discovered)"

func (f *Flags) singleProject(getenv func(string) string, id string) (Project, error) {
	api, collect := f.Defaults()
	p := Project{ID: id, API: api, Collect: collect}
	var errs []error
	var err error
	if p.Credentials.AccessKey, err = secretSource(EnvAccessKey, getenv(EnvAccessKey), "--api.access-key-file", f.AccessKeyFile, true); err != nil {
		errs = append(errs, err)
	}
	if p.Credentials.SecretKey, err = secretSource(EnvSecretKey, getenv(EnvSecretKey), "--api.secret-key-file", f.SecretKeyFile, true); err != nil {
		errs = append(errs, err)
	}
	if p.Credentials.APIKey, err = secretSource(EnvAPIKey, getenv(EnvAPIKey), "--api.key-file", f.APIKeyFile, false); err != nil {
		errs = append(errs, err)
	}
	p.Credentials.Files = CredentialFiles{AccessKey: f.AccessKeyFile, SecretKey: f.SecretKeyFile, APIKey: f.APIKeyFile}
	p.Credentials.Source = keySource("--api.access-key-file", f.AccessKeyFile, EnvAccessKey) + " and " +
		keySource("--api.secret-key-file", f.SecretKeyFile, EnvSecretKey)
	if err := p.validate(flagWhere); err != nil {
		errs = append(errs, err)
	}
	if err := f.CheckHTTPClient(); err != nil {
		errs = append(errs, err)
	}
	return p, errors.Join(errs...)
}

func keySource(fileSetting, file, envName string) string {
	if file != "" {
		return fileSetting + " (" + file + ")"
	}
	return "$" + envName
}

// SingleProjectSettingsGiven lists the single-project settings given, which a file
// or --simulate would ignore; --api.url only withURL (a file's projects inherit it).
func (f *Flags) SingleProjectSettingsGiven(getenv func(string) string, withURL bool) []string {
	var given []string
	for _, c := range []struct {
		name string
		set  bool
	}{
		{"--api.url (CLOUDDB_API_URL)", withURL && f.URL != ""},
		{"--api.tls.* / --api.proxy-url", withURL && (!f.API.HTTPClient.IsZero() || f.proxyURL != "")},
		{"--api.project-id (CLOUDDB_API_PROJECT_ID)", f.ProjectID != ""},
		{"--api.access-key-file", f.AccessKeyFile != ""},
		{"--api.secret-key-file", f.SecretKeyFile != ""},
		{"--api.key-file", f.APIKeyFile != ""},
		{EnvAccessKey, getenv(EnvAccessKey) != ""},
		{EnvSecretKey, getenv(EnvSecretKey) != ""},
		{EnvAPIKey, getenv(EnvAPIKey) != ""},
	} {
		if c.set {
			given = append(given, c.name)
		}
	}
	return given
}
