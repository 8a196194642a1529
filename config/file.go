package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/clouddb/clouddb_exporter/apiclient"
)

// File is the YAML configuration file.
type File struct {
	Projects []FileProject `yaml:"projects"`
}

// FileProject is one project of the configuration file. Unset optional
// settings inherit the flags' values.
type FileProject struct {
	ID            string `yaml:"id"`
	APIURL        string `yaml:"api_url"`
	AccessKeyFile string `yaml:"access_key_file"`
	SecretKeyFile string `yaml:"secret_key_file"`
	APIKeyFile    string `yaml:"api_key_file"`
	AccessKeyEnv  string `yaml:"access_key_env"`
	SecretKeyEnv  string `yaml:"secret_key_env"`
	APIKeyEnv     string `yaml:"api_key_env"`
	// HTTPClient replaces the --api.tls.* and --api.proxy-url settings for
	// this project; its relative file paths are relative to the file.
	HTTPClient *HTTPClient `yaml:"http_client"`
	API        struct {
		Timeout    *time.Duration `yaml:"timeout"`
		RateLimit  *float64       `yaml:"rate_limit"`
		Burst      *int           `yaml:"burst"`
		MaxRetries *int           `yaml:"max_retries"`
	} `yaml:"api"`
	Collect struct {
		Interval           *time.Duration `yaml:"interval"`
		TransitionInterval *time.Duration `yaml:"transition_interval"`
		MaxStaleness       *time.Duration `yaml:"max_staleness"`
		Concurrency        *int           `yaml:"concurrency"`
		MaxResources       *int           `yaml:"max_resources_per_list"`
		Usage              struct {
			Enabled          *bool          `yaml:"enabled"`
			Interval         *time.Duration `yaml:"interval"`
			Series           *[]string      `yaml:"series"`
			Environments     *[]string      `yaml:"environments"`
			ServiceNameRegex *string        `yaml:"service_name_regex"`
			MaxJobs          *int           `yaml:"max_jobs"`
			Timestamps       *bool          `yaml:"timestamps"`
		} `yaml:"usage"`
		Logs struct {
			Enabled          *bool          `yaml:"enabled"`
			Interval         *time.Duration `yaml:"interval"`
			Environments     *[]string      `yaml:"environments"`
			ServiceNameRegex *string        `yaml:"service_name_regex"`
			MaxPages         *int           `yaml:"max_pages"`
			Delay            *time.Duration `yaml:"delay"`
		} `yaml:"logs"`
	} `yaml:"collect"`
}

// LoadFile reads and resolves the configuration file at path. Unknown keys,
// duplicate project ids and missing or contradictory credentials are errors;
// every problem is reported, not just the first.
func LoadFile(path string, api API, collect Collect, getenv func(string) string) ([]Project, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--config.file: %w", err)
	}
	return parse(b, filepath.Dir(path), api, collect, getenv)
}

// Parse resolves a configuration file's content; see LoadFile. Relative
// paths in http_client are relative to the working directory.
func Parse(b []byte, api API, collect Collect, getenv func(string) string) ([]Project, error) {
	return parse(b, "", api, collect, getenv)
}

func parse(b []byte, dir string, api API, collect Collect, getenv func(string) string) ([]Project, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("--config.file: %w", err)
	}
	if errs := checkNode(&doc, reflect.TypeFor[File](), ""); len(errs) > 0 {
		for i, err := range errs {
			errs[i] = fmt.Errorf("--config.file: %w", err)
		}
		return nil, errors.Join(errs...)
	}
	var f File
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("--config.file: the file is empty")
		}
		return nil, fmt.Errorf("--config.file: %w", err)
	}
	if len(f.Projects) == 0 {
		return nil, errors.New("--config.file: no projects listed")
	}
	var errs []error
	seen := map[string]bool{}
	projects := make([]Project, 0, len(f.Projects))
	for i, fp := range f.Projects {
		where := func(setting string) string { return fmt.Sprintf("--config.file: projects[%d].%s", i, setting) }
		if fp.ID != "" && seen[fp.ID] {
			errs = append(errs, fmt.Errorf("%s: duplicate project %q", where("id"), fp.ID))
		}
		seen[fp.ID] = true
		p, err := fp.resolve(dir, api, collect, getenv, where)
		if err != nil {
			errs = append(errs, err)
		}
		projects = append(projects, p)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return projects, nil
}

// fileKeySource names the setting of a project of the file that a key
// came from.
func fileKeySource(where func(string) string, key, envName, file string) string {
	if envName != "" {
		return strings.TrimPrefix(where(key+"_env"), "--config.file: ") + " ($" + envName + ")"
	}
	return strings.TrimPrefix(where(key+"_file"), "--config.file: ") + " (" + file + ")"
}

func (fp FileProject) resolve(dir string, api API, collect Collect, getenv func(string) string, where func(string) string) (Project, error) {
	p := Project{ID: fp.ID, API: api, Collect: collect}
	if fp.APIURL != "" {
		p.API.URL = fp.APIURL
	}
	if fp.HTTPClient != nil {
		p.API.HTTPClient = *fp.HTTPClient
		if dir != "" {
			p.API.HTTPClient.TLSConfig.SetDirectory(dir)
		}
	}
	set(&p.API.Timeout, fp.API.Timeout)
	set(&p.API.RateLimit, fp.API.RateLimit)
	set(&p.API.Burst, fp.API.Burst)
	set(&p.API.MaxRetries, fp.API.MaxRetries)
	set(&p.Collect.Interval, fp.Collect.Interval)
	set(&p.Collect.TransitionInterval, fp.Collect.TransitionInterval)
	set(&p.Collect.MaxStaleness, fp.Collect.MaxStaleness)
	set(&p.Collect.Concurrency, fp.Collect.Concurrency)
	set(&p.Collect.MaxResourcesPerList, fp.Collect.MaxResources)
	u := fp.Collect.Usage
	set(&p.Collect.Usage.Enabled, u.Enabled)
	set(&p.Collect.Usage.Interval, u.Interval)
	set(&p.Collect.Usage.Series, u.Series)
	set(&p.Collect.Usage.Environments, u.Environments)
	set(&p.Collect.Usage.ServiceNameRegex, u.ServiceNameRegex)
	set(&p.Collect.Usage.MaxJobs, u.MaxJobs)
	set(&p.Collect.Usage.Timestamps, u.Timestamps)
	lg := fp.Collect.Logs
	set(&p.Collect.Logs.Enabled, lg.Enabled)
	set(&p.Collect.Logs.Interval, lg.Interval)
	set(&p.Collect.Logs.Environments, lg.Environments)
	set(&p.Collect.Logs.ServiceNameRegex, lg.ServiceNameRegex)
	set(&p.Collect.Logs.MaxPages, lg.MaxPages)
	set(&p.Collect.Logs.Delay, lg.Delay)

	var errs []error
	secret := func(envKey, envName, fileKey, file string, required bool) apiclient.Secret {
		value := ""
		if envName != "" {
			if value = getenv(envName); value == "" {
				errs = append(errs, fmt.Errorf("%s: environment variable %s is empty or unset", where(envKey), envName))
				return ""
			}
		}
		s, err := secretSource(where(envKey), value, where(fileKey), file, required)
		if err != nil {
			errs = append(errs, err)
		}
		return s
	}
	p.Credentials.AccessKey = secret("access_key_env", fp.AccessKeyEnv, "access_key_file", fp.AccessKeyFile, true)
	p.Credentials.SecretKey = secret("secret_key_env", fp.SecretKeyEnv, "secret_key_file", fp.SecretKeyFile, true)
	p.Credentials.APIKey = secret("api_key_env", fp.APIKeyEnv, "api_key_file", fp.APIKeyFile, false)
	p.Credentials.Files = CredentialFiles{AccessKey: fp.AccessKeyFile, SecretKey: fp.SecretKeyFile, APIKey: fp.APIKeyFile}
	p.Credentials.Source = "--config.file " + fileKeySource(where, "access_key", fp.AccessKeyEnv, fp.AccessKeyFile) + " and " +
		fileKeySource(where, "secret_key", fp.SecretKeyEnv, fp.SecretKeyFile)
	if err := p.validate(func(s string) string { return where(fileKeys[s]) }); err != nil {
		errs = append(errs, err)
	}
	if !p.API.HTTPClient.IsZero() {
		if err := p.API.HTTPClient.check(where("http_client (or the inherited --api.tls.*, --api.proxy-url)")); err != nil {
			errs = append(errs, err)
		}
	}
	return p, errors.Join(errs...)
}

// fileKeys maps a setting to its key in a file's project.
var fileKeys = map[string]string{
	"project_id":               "id",
	"url":                      "api_url (or --api.url)",
	"timeout":                  "api.timeout",
	"rate_limit":               "api.rate_limit",
	"max_retries":              "api.max_retries",
	"interval":                 "collect.interval",
	"transition_interval":      "collect.transition_interval",
	"max_staleness":            "collect.max_staleness",
	"concurrency":              "collect.concurrency",
	"max_resources_per_list":   "collect.max_resources_per_list",
	"usage_interval":           "collect.usage.interval",
	"usage_series":             "collect.usage.series",
	"usage_max_jobs":           "collect.usage.max_jobs",
	"usage_environment":        "collect.usage.environments",
	"usage_service_name_regex": "collect.usage.service_name_regex",
	"logs_interval":            "collect.logs.interval",
	"logs_max_pages":           "collect.logs.max_pages",
	"logs_delay":               "collect.logs.delay",
	"logs_environment":         "collect.logs.environments",
	"logs_service_name_regex":  "collect.logs.service_name_regex",
	"access_key_file":          "access_key_file",
	"secret_key_file":          "secret_key_file",
	"api_key_file":             "api_key_file",
	"insecure_skip_verify":     "http_client.tls_config.insecure_skip_verify (or --api.tls.insecure-skip-verify)",
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}
