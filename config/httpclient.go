package config

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"net/url"
	"reflect"

	promconfig "github.com/prometheus/common/config"
)

// HTTPClient is the TLS and proxy part of prometheus/common's HTTPClientConfig, with
// its YAML keys; no authentication: the project's keys are the API's credentials.
type HTTPClient struct {
	TLSConfig              promconfig.TLSConfig `yaml:"tls_config,omitempty"`
	promconfig.ProxyConfig `yaml:",inline"`
}

// IsZero reports whether nothing is set, so that the transport's defaults apply.
func (h HTTPClient) IsZero() bool { return reflect.ValueOf(h).IsZero() }

// build reads the CA and checks the certificate, so a wrong file is a configuration
// error, not a poll error. It works on copies: ProxyConfig caches its function,
// which would make two equal configurations differ.
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

func (h HTTPClient) check(where string) error {
	if _, _, err := h.build(); err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	return nil
}
