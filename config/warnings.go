package config

import (
	"fmt"
	"net/netip"
	"net/url"

	"github.com/clouddb/clouddb_exporter/internal/flagval"
)

// Warnings reports settings that work but expose the credentials (http off loopback,
// unverified TLS, readable key files); loaded is the file's projects, errors ignored.
func (f *Flags) Warnings(getenv func(string) string, loaded []Project) []flagval.Warning {
	if f.ConfigFile == "" {
		p, _ := f.singleProject(getenv, discoveryPlaceholder)
		return p.warnings(flagWhere)
	}
	var out []flagval.Warning
	for i, p := range loaded {
		out = append(out, p.warnings(fileWhere(i))...)
	}
	return out
}

func (p Project) warnings(where func(setting string) string) []flagval.Warning {
	var out []flagval.Warning
	if u, err := url.Parse(p.API.URL); err == nil && u.Scheme == "http" && !loopbackHost(u.Hostname()) {
		out = append(out, flagval.Warning{Setting: where("api.url"), Reason: "the credentials cross the network in clear text to a host that is not loopback: use https"})
	}
	if p.API.HTTPClient.TLSConfig.InsecureSkipVerify {
		out = append(out, flagval.Warning{Setting: where("api.tls.insecure-skip-verify"), Reason: "the API's certificate is not verified: anyone on the path can read the credentials"})
	}
	files := p.Credentials.Files
	for _, k := range []struct{ setting, path string }{
		{"api.access-key-file", files.AccessKey}, {"api.secret-key-file", files.SecretKey}, {"api.key-file", files.APIKey},
	} {
		if w, ok := flagval.SecretFileWarning(where(k.setting), k.path); k.path != "" && ok {
			out = append(out, w)
		}
	}
	return out
}

func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

func fileWhere(i int) func(setting string) string {
	return func(s string) string { return fmt.Sprintf("--config.file: projects[%d].%s", i, fileKeyOf(s)) }
}
