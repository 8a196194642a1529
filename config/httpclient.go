package config

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"net/url"
	"reflect"

	promconfig "github.com/prometheus/common/config"
)

// HTTPClient is how a project's API is reached over HTTP: the TLS and proxy
// settings of the Prometheus ecosystem's HTTP client configuration
// (prometheus/common/config.HTTPClientConfig), with the same YAML keys:
// tls_config (ca_file, cert_file, key_file, ca, cert, key, server_name,
// insecure_skip_verify, min_version, max_version), proxy_url, no_proxy,
// proxy_from_environment (not proxy_connect_header). Authentication is not
// among them: the API's credentials are the project's keys. Redirects are
// never followed (they would resend the credentials).
type HTTPClient struct {
	TLSConfig              promconfig.TLSConfig `yaml:"tls_config,omitempty"`
	promconfig.ProxyConfig `yaml:",inline"`
}

// IsZero reports whether nothing is configured: the transport's defaults
// (system CAs, proxy from the environment) apply.
func (h HTTPClient) IsZero() bool { return reflect.ValueOf(h).IsZero() }

// build returns the TLS configuration and the proxy function, or nil for
// the transport's defaults. Building reads the CA and checks the client
// certificate, so that a wrong file is a configuration error, not a poll
// error. It works on copies: the ProxyConfig caches its function, which
// would make two equal configurations differ.
func (h HTTPClient) build() (*tls.Config, func(*http.Request) (*url.URL, error), error) {
	if h.IsZero() {
		return nil, nil, nil
	}
	tlsCfg := h.TLSConfig
	if err := tlsCfg.Validate(); err != nil {
		return nil, nil, fmt.Errorf("tls_config: %w", err)
	}
	t, err := promconfig.NewTLSConfig(&tlsCfg)
	if err != nil {
		return nil, nil, fmt.Errorf("tls_config: %w", err)
	}
	proxy := h.ProxyConfig
	if err := proxy.Validate(); err != nil {
		return nil, nil, err
	}
	if len(proxy.ProxyConnectHeader) > 0 {
		return nil, nil, fmt.Errorf("proxy_connect_header is not supported")
	}
	if u := proxy.ProxyURL.URL; u != nil && u.String() != "" && u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "socks5" {
		return nil, nil, fmt.Errorf("proxy_url %q: scheme must be http, https or socks5", u.Redacted())
	}
	if u := proxy.ProxyURL.URL; u != nil && u.User != nil {
		// Whoever reads the configuration (a ConfigMap, say) would read them.
		return nil, nil, fmt.Errorf("proxy_url %q must not carry credentials: set $HTTPS_PROXY in the environment and proxy_from_environment instead", u.Redacted())
	}
	var fn func(*http.Request) (*url.URL, error)
	if proxy.ProxyFromEnvironment || (proxy.ProxyURL.URL != nil && proxy.ProxyURL.String() != "") {
		fn = proxy.Proxy()
	} else {
		fn = http.ProxyFromEnvironment // the transport's default
	}
	return t, fn, nil
}

// check validates the settings; where names them for the message.
func (h HTTPClient) check(where string) error {
	if _, _, err := h.build(); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	return nil
}
