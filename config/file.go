package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/internal/safefile"
)

// File is the YAML configuration file.
type File struct {
	Projects []FileProject `yaml:"projects"`
}

// FileProject is one project of the file; unset settings inherit the flags'.
type FileProject struct {
	ID            string `yaml:"id"`
	APIURL        string `yaml:"api_url"`
	AccessKeyFile string `yaml:"access_key_file"`
	SecretKeyFile string `yaml:"secret_key_file"`
	APIKeyFile    string `yaml:"api_key_file"`
	AccessKeyEnv  string `yaml:"access_key_env"`
	SecretKeyEnv  string `yaml:"secret_key_env"`
	APIKeyEnv     string `yaml:"api_key_env"`
	// HTTPClient replaces --api.tls.* and --api.proxy-url; paths are relative to the file.
	HTTPClient *HTTPClient `yaml:"http_client"`
	// API and Collect hold the settings table's keys, checked by checkNode.
	API     yaml.Node `yaml:"api"`
	Collect yaml.Node `yaml:"collect"`
}

// maxConfigFile bounds --config.file far above any list of projects.
const maxConfigFile = 64 << 20

// LoadFile reads and resolves the file at path, reporting every problem, not the first.
func LoadFile(path string, api API, collect Collect, getenv func(string) string) ([]Project, error) {
	b, err := safefile.ReadLinked(path, maxConfigFile)
	if err != nil {
		return nil, fmt.Errorf("--config.file: %w", err)
	}
	return parse(b, filepath.Dir(path), api, collect, getenv)
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

func fileKeySource(where func(string) string, key, envName, file string) string {
	if envName != "" {
		return strings.TrimPrefix(where(key+"_env"), "--config.file: ") + " ($" + envName + ")"
	}
	return strings.TrimPrefix(where(key+"_file"), "--config.file: ") + " (" + file + ")"
}

func (fp FileProject) resolve(dir string, api API, collect Collect, getenv func(string) string, where func(string) string) (Project, error) {
	p := Project{ID: fp.ID, API: api, Collect: collect.clone()}
	if fp.APIURL != "" {
		p.API.URL = fp.APIURL
	}
	if fp.HTTPClient != nil {
		p.API.HTTPClient = *fp.HTTPClient
		if dir != "" {
			p.API.HTTPClient.TLSConfig.SetDirectory(dir)
		}
	}
	var errs []error
	if err := fp.mergeSettings(&p, where); err != nil {
		errs = append(errs, err)
	}
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
	if err := p.validate(func(flag string) string { return where(fileKeyOf(flag)) }); err != nil {
		errs = append(errs, err)
	}
	if !p.API.HTTPClient.IsZero() {
		if err := p.API.HTTPClient.check(where("http_client (or the inherited --api.tls.*, --api.proxy-url)")); err != nil {
			errs = append(errs, err)
		}
	}
	return p, errors.Join(errs...)
}

func (fp FileProject) mergeSettings(p *Project, where func(string) string) error {
	groups := map[string]*yaml.Node{"api": &fp.API, "collect": &fp.Collect}
	var errs []error
	for _, s := range settings {
		group, rest, _ := strings.Cut(s.key, ".")
		n := lookup(groups[group], rest)
		if n == nil || n.Tag == "!!null" {
			continue
		}
		if err := n.Decode(s.field(&p.API, &p.Collect)); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where(s.key), err))
		}
	}
	return errors.Join(errs...)
}

func lookup(n *yaml.Node, path string) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil || path == "" {
		return n
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	key, rest, _ := strings.Cut(path, ".")
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return lookup(n.Content[i+1], rest)
		}
	}
	return nil
}

func fileKeyOf(flag string) string {
	for _, s := range settings {
		if s.flag == flag && s.key != "" {
			return s.key
		}
	}
	return otherFileKeys[flag]
}

var otherFileKeys = map[string]string{
	"api.project-id":               "id",
	"api.url":                      "api_url (or --api.url)",
	"api.access-key-file":          "access_key_file",
	"api.secret-key-file":          "secret_key_file",
	"api.key-file":                 "api_key_file",
	"api.tls.insecure-skip-verify": "http_client.tls_config.insecure_skip_verify (or --api.tls.insecure-skip-verify)",
}
