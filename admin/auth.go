package admin

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"

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

// WebConfig is the admin listener's web configuration, split in two: the
// basic_auth_users, which the admin surface checks itself so that a wrong
// password gets a JSON answer and an audit record like every other refusal,
// and a file with everything else (TLS, headers, rate limit) for
// exporter-toolkit.
type WebConfig struct {
	// Users maps basic-auth user names to bcrypt hashes.
	Users map[string]string
	// ServeFile is the web configuration file to give exporter-toolkit.
	ServeFile string
	// Close removes ServeFile when it is a derived copy.
	Close func()
}

// LoadWebConfig reads an exporter-toolkit web configuration file. Without
// basic_auth_users, ServeFile is path itself; with them, it is a private
// copy without them (TLS file paths made absolute, since exporter-toolkit
// resolves relative ones against the file's directory). The caller should
// have checked the whole file with web.Validate.
func LoadWebConfig(path string) (*WebConfig, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("not valid YAML: %w", err)
	}
	wc := &WebConfig{ServeFile: path, Close: func() {}}
	usersNode, ok := doc["basic_auth_users"]
	if !ok || usersNode == nil {
		return wc, nil
	}
	users, ok := usersNode.(map[string]any)
	if !ok {
		return nil, errors.New("basic_auth_users must map user names to bcrypt hashes")
	}
	wc.Users = make(map[string]string, len(users))
	for user, hash := range users {
		s, ok := hash.(string)
		if !ok {
			return nil, fmt.Errorf("basic_auth_users: the hash of user %q must be a string", user)
		}
		wc.Users[user] = s
	}
	if len(wc.Users) == 0 {
		return wc, nil
	}
	delete(doc, "basic_auth_users")
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, err
	}
	if tlsCfg, ok := doc["tls_server_config"].(map[string]any); ok {
		for _, key := range []string{"cert_file", "key_file", "client_ca_file"} {
			if p, ok := tlsCfg[key].(string); ok && p != "" && !filepath.IsAbs(p) {
				tlsCfg[key] = filepath.Join(dir, p)
			}
		}
	}
	derived, err := yaml.Marshal(doc)
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp("", "clouddb-admin-web-*.yml") // created 0600
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(derived); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return nil, err
	}
	wc.ServeFile = f.Name()
	wc.Close = func() { _ = os.Remove(f.Name()) }
	return wc, nil
}
