package admin

import (
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/prometheus/exporter-toolkit/web"
	"go.yaml.in/yaml/v3"
	"golang.org/x/crypto/bcrypt"
)

// Callers as recorded in the audit log for token authentication.
const callerToken = "token"

// dummyHash is compared against when the user is unknown, so that a wrong
// user name takes as long as a wrong password (exporter-toolkit's, the hash
// of "fakepassword"; an unknown user is refused whatever the comparison says).
const dummyHash = "$2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi"

// maxAuthCache bounds the cache of bcrypt results.
const maxAuthCache = 1024

// authenticator checks the Authorization header: a bearer token or HTTP
// Basic against bcrypt hashes, never both (they share the header).
type authenticator struct {
	tokenSum [sha256.Size]byte
	hasToken bool
	users    map[string]string

	// bcrypt is slow on purpose: one comparison at a time, and results
	// cached by a hash of user, password and stored hash.
	bcryptMu sync.Mutex
	mu       sync.Mutex
	cache    map[[sha256.Size]byte]bool
}

func newAuthenticator(token string, users map[string]string) (*authenticator, error) {
	a := &authenticator{users: users, cache: map[[sha256.Size]byte]bool{}}
	switch {
	case token != "" && len(users) > 0:
		return nil, errors.New("a bearer token and basic_auth_users both use the Authorization header: configure one")
	case token == "" && len(users) == 0:
		return nil, errors.New("no authentication configured")
	case token != "":
		a.tokenSum, a.hasToken = sha256.Sum256([]byte(token)), true
	}
	for user, hash := range users {
		if _, err := bcrypt.Cost([]byte(hash)); err != nil {
			return nil, fmt.Errorf("basic_auth_users: the hash of user %q is not a bcrypt hash", user)
		}
	}
	return a, nil
}

// scheme is the WWW-Authenticate challenge.
func (a *authenticator) scheme() string {
	if a.hasToken {
		return `Bearer realm="clouddb_exporter admin"`
	}
	return `Basic realm="clouddb_exporter admin", charset="UTF-8"`
}

// authenticate returns the caller's name: the basic-auth user or "token".
func (a *authenticator) authenticate(r *http.Request) (string, bool) {
	if a.hasToken {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			return "", false
		}
		// Comparing digests keeps the comparison constant-time whatever
		// the lengths.
		sum := sha256.Sum256([]byte(strings.TrimSpace(got)))
		return callerToken, subtle.ConstantTimeCompare(sum[:], a.tokenSum[:]) == 1
	}
	user, pass, ok := r.BasicAuth()
	if !ok {
		return "", false
	}
	hash, known := a.users[user]
	if !known {
		hash = dummyHash
	}
	key := sha256.Sum256([]byte(user + "\x00" + pass + "\x00" + hash))
	a.mu.Lock()
	good, cached := a.cache[key]
	a.mu.Unlock()
	if !cached {
		a.bcryptMu.Lock()
		good = bcrypt.CompareHashAndPassword([]byte(hash), []byte(pass)) == nil
		a.bcryptMu.Unlock()
		a.mu.Lock()
		if len(a.cache) >= maxAuthCache {
			clear(a.cache)
		}
		a.cache[key] = good
		a.mu.Unlock()
	}
	if !known || !good {
		return "", false
	}
	return user, true
}

// LoadWebConfig decodes an exporter-toolkit web configuration file into the
// toolkit's own web.Config, with the toolkit's defaults (TLS 1.2 to 1.3,
// HTTP/2) and relative TLS file paths resolved against the file's
// directory. The caller should have checked the file with web.Validate.
// Nothing is written: the admin listener serves from the decoded value
// (see Listener.Serve), so a read-only root filesystem is fine.
func LoadWebConfig(path string) (*web.Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only: nothing to lose
	c := &web.Config{
		TLSConfig:  web.TLSConfig{MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS13},
		HTTPConfig: web.HTTPConfig{HTTP2: true},
	}
	dec := yaml.NewDecoder(f)
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("not a valid web configuration: %w", err)
	}
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	c.TLSConfig.SetDirectory(dir)
	return c, nil
}

// users returns the basic-auth users of c, which the admin surface checks
// itself so that a wrong password gets a JSON answer and an audit record
// like every other refusal.
func users(c *web.Config) map[string]string {
	if len(c.Users) == 0 {
		return nil
	}
	m := make(map[string]string, len(c.Users))
	for user, hash := range c.Users {
		m[user] = string(hash)
	}
	return m
}
