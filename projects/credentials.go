package projects

import (
	"log/slog"
	"strings"
	"sync"

	"github.com/clouddb/clouddb_exporter/apiclient"
	"github.com/clouddb/clouddb_exporter/config"
)

// credentials has its own lock: a rotation after a 401 happens inside a
// client call, which may run while the Manager's lock is held.
type credentials struct {
	mu     sync.Mutex
	cur    config.Credentials
	client *apiclient.Client
	logger *slog.Logger
	seen   config.Credentials
	// unreadable is the error last warned about ("" while the files read):
	// the check runs every few seconds, and an unreadable file repeated the
	// same WARN at each.
	unreadable string
}

func (c *credentials) current() config.Credentials {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cur
}

// reread is also the OnUnauthorized hook; an unreadable file keeps the current keys.
func (c *credentials) reread(reason string) bool {
	cur := c.current()
	if cur.Files == (config.CredentialFiles{}) {
		return false
	}
	fresh, ok := c.readFiles(cur)
	if !ok {
		return false
	}
	return c.install(fresh, reason)
}

// settled installs keys once two checks in a row read them: a pair written
// file by file must not be installed half-rotated. A 401 does not wait.
func (c *credentials) settled(reason string) bool {
	cur := c.current()
	if cur.Files == (config.CredentialFiles{}) {
		return false
	}
	fresh, ok := c.readFiles(cur)
	if !ok {
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

// readFiles re-reads cur's files, warning once per change of what fails
// and saying once when they read again.
func (c *credentials) readFiles(cur config.Credentials) (config.Credentials, bool) {
	fresh, err := cur.Reread()
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case err != nil && err.Error() != c.unreadable:
		c.unreadable = err.Error()
		c.logger.Warn("Cannot re-read the API credential files; the current keys stay in use", "err", err)
	case err == nil && c.unreadable != "":
		c.unreadable = ""
		c.logger.Info("The API credential files are readable again")
	}
	return fresh, err == nil
}

// install logs which keys changed, never their values.
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
