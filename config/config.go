// Package config resolves which projects the exporter polls and how: from flags
// for one project, or from a strict YAML file (--config.file) listing several.
// Credentials come from environment variables or files, never from flags.
package config

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/internal/safefile"
)

// API holds how one project's API is reached.
type API struct {
	URL             string
	Timeout         time.Duration
	RateLimit       float64
	Burst           int
	MaxRetries      int
	RetryBaseDelay  time.Duration
	RetryMaxDelay   time.Duration
	MaxResponseSize int64
	MaxValueSize    int64
	HTTPClient      HTTPClient
}

// Defaults of the --collect.* flags, which the poller also applies to zero settings.
const (
	DefaultInterval           = 60 * time.Second
	DefaultTransitionInterval = 10 * time.Second
	DefaultMaxStaleness       = time.Duration(0)
	DefaultConcurrency        = 4
	// DemoInterval is --collect.interval under --simulate unless it is
	// given: the demo's change timeline reaches the feed within a minute.
	// A demo cycle makes a handful of list calls, far under the rate limit.
	DemoInterval = 10 * time.Second
)

// Collect holds how one project is polled.
type Collect struct {
	Interval            time.Duration
	TransitionInterval  time.Duration
	MaxStaleness        time.Duration
	Concurrency         int
	MaxResourcesPerList int
	// readers holds each data-plane reader's settings (ReaderKey).
	readers         map[string]any
	minDataInterval time.Duration
}

// Credentials authenticate one project.
type Credentials struct {
	AccessKey apiclient.Secret
	SecretKey apiclient.Secret
	// APIKey is optional: without it the auth collector reads GET /auth/info with the key
	// pair (Basic), and stops once the API refuses that (a first-revision API does).
	APIKey apiclient.Secret
	// Files are the keys' files ("" for the environment), which Reread reads again.
	Files CredentialFiles
	// Source names where the key pair came from, for the message when the API refuses it.
	Source string
}

// CredentialFiles names the files of a project's keys.
type CredentialFiles struct {
	AccessKey, SecretKey, APIKey string
}

// Reread returns c with its key files read again. An unreadable or empty file is an
// error, so that a non-atomic rotation never installs half of the keys.
func (c Credentials) Reread() (Credentials, error) {
	var errs []error
	for _, k := range []struct {
		file string
		dst  *apiclient.Secret
	}{{c.Files.AccessKey, &c.AccessKey}, {c.Files.SecretKey, &c.SecretKey}, {c.Files.APIKey, &c.APIKey}} {
		if k.file == "" {
			continue
		}
		s, err := readSecretFile("credential file", k.file)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		*k.dst = s
	}
	return c, errors.Join(errs...)
}

// Project is one fully resolved project.
type Project struct {
	ID string
	// Name is found by discovery (GET /projects); "" otherwise.
	Name        string
	API         API
	Collect     Collect
	Credentials Credentials
}

// ClientConfig returns the project's apiclient configuration. It fails only when
// the TLS files changed since the project was resolved.
func (p Project) ClientConfig() (apiclient.Config, error) {
	maxRetries := p.API.MaxRetries
	if maxRetries == 0 {
		// apiclient reads 0 as its default; a user's 0 means none.
		maxRetries = -1
	}
	tlsConfig, proxy, err := p.API.HTTPClient.build()
	if err != nil {
		return apiclient.Config{}, err
	}
	return apiclient.Config{
		TLSConfig:      tlsConfig,
		Proxy:          proxy,
		BaseURL:        p.API.URL,
		ProjectID:      p.ID,
		AccessKey:      p.Credentials.AccessKey,
		SecretKey:      p.Credentials.SecretKey,
		APIKey:         p.Credentials.APIKey,
		Timeout:        p.API.Timeout,
		RateLimit:      p.API.RateLimit,
		Burst:          p.API.Burst,
		MaxRetries:     maxRetries,
		RetryBaseDelay: p.API.RetryBaseDelay,
		RetryMaxDelay:  p.API.RetryMaxDelay,
		Concurrency:    p.Collect.Concurrency,
		MaxListLength:  p.Collect.MaxResourcesPerList,
		MaxBodyBytes:   p.API.MaxResponseSize,
		MaxValueBytes:  p.API.MaxValueSize,
	}, nil
}

// validate checks what both flags and file can get wrong; where(flag) names a setting.
func (p Project) validate(where func(flag string) string) error {
	var errs []error
	if p.ID == "" {
		errs = append(errs, fmt.Errorf("%s is required", where("api.project-id")))
	}
	if p.API.URL == "" {
		errs = append(errs, fmt.Errorf("%s is required", where("api.url")))
	} else if err := validateURL(p.API.URL); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w", where("api.url"), err))
	}
	errs = append(errs, checkSettings(p, where)...)
	if p.Collect.MaxStaleness > 0 && p.Collect.MaxStaleness < p.Collect.Interval {
		errs = append(errs, fmt.Errorf("%s (%s) must not be shorter than %s (%s): every cycle would drop data",
			where("collect.max-staleness"), p.Collect.MaxStaleness, where("collect.interval"), p.Collect.Interval))
	}
	return errors.Join(errs...)
}

// validateURL is the client's check: --config.check passes no URL the start refuses.
func validateURL(raw string) error { return apiclient.CheckBaseURL(raw) }

// secretSource reads a credential from env or file; both set is a contradiction.
func secretSource(envName, envValue, fileSetting, file string, required bool) (apiclient.Secret, error) {
	switch {
	case envValue != "" && file != "":
		return "", fmt.Errorf("both %s and %s are set: use one", envName, fileSetting)
	case envValue != "":
		return apiclient.Secret(strings.TrimSpace(envValue)), nil
	case file != "":
		return readSecretFile(fileSetting, file)
	case required:
		return "", fmt.Errorf("%s or %s is required", envName, fileSetting)
	}
	return "", nil
}

// maxSecretFile bounds a key file: a key is a line, not a megabyte.
const maxSecretFile = 64 << 10

func readSecretFile(setting, path string) (apiclient.Secret, error) {
	b, err := safefile.ReadLinked(path, maxSecretFile)
	if err != nil {
		return "", fmt.Errorf("%s: %w", setting, err)
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return "", fmt.Errorf("%s: %s is empty", setting, path)
	}
	return apiclient.Secret(s), nil
}
