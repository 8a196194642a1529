package projects

import (
	"log/slog"
	"strings"
	"sync"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/config"
)

// credentials are the current keys of one client (a project's, or the
// discovery's), with their own lock: a rotation after a 401 happens inside
// a client call, which may run while the Manager's lock is held (Apply
// waiting for a poller to stop).
type credentials struct {
	mu  sync.Mutex
	cur config.Credentials
	// client takes the rotated keys; set before its first request.
	client *apiclient.Client
	// logger tells whose keys they are (project_id, or the discovery).
	logger *slog.Logger
	// seen is what the previous periodic check read (settled).
	seen config.Credentials
}

// current returns the keys in use.
func (c *credentials) current() config.Credentials {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur
}

// reread re-reads the credential files and installs the keys if they
// changed; it reports whether they did. It is the client's OnUnauthorized
// hook too: a 401 is often the first sign of a rotation. A file that is
// empty or unreadable mid-rotation keeps the current keys.
func (c *credentials) reread(reason string) bool {
	cur := c.current()
	if cur.Files == (config.CredentialFiles{}) {
		return false
	}
	fresh, err := cur.Reread()
	if err != nil {
		c.logger.Warn("Cannot re-read the API credential files; the current keys stay in use", "err", err)
		return false
	}
	return c.install(fresh, reason)
}

// settled is the periodic check: it installs the keys the files hold only
// once two checks in a row read the same ones. Plain files are written one
// after the other, so a check can fall between the access key's write and
// the secret key's; installing that half-rotated pair would get 401s
// while the old pair, still valid at the provider, would have worked
// (docs/security.md). A 401 does not wait (reread): the keys in use are
// refused anyway.
func (c *credentials) settled(reason string) bool {
	cur := c.current()
	if cur.Files == (config.CredentialFiles{}) {
		return false
	}
	fresh, err := cur.Reread()
	if err != nil {
		c.logger.Warn("Cannot re-read the API credential files; the current keys stay in use", "err", err)
		return false
	}
	c.mu.Lock()
	prev := c.seen
	c.seen = fresh
	c.mu.Unlock()
	if fresh != prev {
		return false
	}
	return c.install(fresh, reason)
}

// install gives the client the keys next, logging which keys changed (never
// their values); it reports whether any did.
func (c *credentials) install(next config.Credentials, reason string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	var changed []string
	for _, k := range []struct {
		name     string
		old, new apiclient.Secret
	}{{"access_key", c.cur.AccessKey, next.AccessKey}, {"secret_key", c.cur.SecretKey, next.SecretKey}, {"api_key", c.cur.APIKey, next.APIKey}} {
		if k.old != k.new {
			changed = append(changed, k.name)
		}
	}
	if len(changed) == 0 {
		return false
	}
	if (next.APIKey == "") != (c.cur.APIKey == "") {
		c.logger.Warn("An API key file became empty or appeared; reload to turn the auth collector off or on")
		return false
	}
	if _, err := c.client.SetCredentials(next.AccessKey, next.SecretKey, next.APIKey); err != nil {
		c.logger.Warn("Rotated API credentials refused; the current keys stay in use", "err", err)
		return false
	}
	c.cur = next
	c.logger.Info("API credentials rotated", "changed", strings.Join(changed, ","), "reason", reason)
	return true
}
