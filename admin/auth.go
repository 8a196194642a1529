package admin

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
	"go.yaml.in/yaml/v3"
	"golang.org/x/crypto/bcrypt"
)

const callerToken = "token"

const maxAuthCache = 1024

// A client out of failures is refused before any bcrypt comparison, which
// is what a password guesser spends the CPU on.
const (
	authFailureBurst = 10
	authFailureEvery = 6 * time.Second
)

type authResult int

const (
	authOK        authResult = iota
	authWrong                // missing or wrong credentials: 401
	authThrottled            // the client's failures spent: 429
	authBusy                 // no bcrypt slot free: 503
)

// authenticator checks a bearer token or HTTP Basic, never both: they
// share the Authorization header.
type authenticator struct {
	tokenSum [sha256.Size]byte
	hasToken bool
	users    map[string]string
	// dummy makes an unknown user take as long as the slowest user's
	// wrong password; a user whose hash costs less is also compared
	// against it, so that no user name answers faster than an unknown one.
	dummy   []byte
	cheaper map[string]bool
	compare func(hash, pass []byte) error
	now     func() time.Time

	// A request finding no bcrypt slot is refused, not queued, so that a
	// flood holds no goroutines; clean is one more slot that a guesser
	// cannot take. Good results are cached apart, so that a flood of wrong
	// passwords cannot evict them.
	slots    chan struct{}
	clean    chan struct{}
	failures *keyedLimiter
	mu       sync.Mutex
	good     map[[sha256.Size]byte]struct{}
	bad      map[[sha256.Size]byte]struct{}
}

func newAuthenticator(token string, users map[string]string, logger *slog.Logger) (*authenticator, error) {
	a := &authenticator{
		users: users, now: time.Now, compare: bcrypt.CompareHashAndPassword,
		slots:    make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2)),
		clean:    make(chan struct{}, 1),
		failures: newKeyedLimiter(authFailureEvery, authFailureBurst),
		good:     map[[sha256.Size]byte]struct{}{},
		bad:      map[[sha256.Size]byte]struct{}{},
	}
	switch {
	case token != "" && len(users) > 0:
		return nil, errors.New("a bearer token and basic_auth_users both use the Authorization header: configure one")
	case token == "" && len(users) == 0:
		return nil, errors.New("no authentication configured")
	case token != "":
		a.tokenSum, a.hasToken = sha256.Sum256([]byte(token)), true
		return a, nil
	}
	maxCost, err := checkHashes(users, func(user string, cost int) {
		logger.Warn("A basic-auth hash is cheap to crack: use bcrypt cost 10 or more", "user", user, "cost", cost)
	})
	if err != nil {
		return nil, err
	}
	dummy, err := bcrypt.GenerateFromPassword([]byte(rand.Text()), maxCost)
	if err != nil {
		return nil, fmt.Errorf("basic_auth_users: %w", err)
	}
	a.dummy, a.cheaper = dummy, map[string]bool{}
	for user, hash := range users {
		if cost, _ := bcrypt.Cost([]byte(hash)); cost < maxCost {
			a.cheaper[user] = true
		}
	}
	return a, nil
}

// checkHashes returns the highest bcrypt cost; cheap hears of each hash
// below bcrypt's default cost.
func checkHashes(users map[string]string, cheap func(user string, cost int)) (int, error) {
	maxCost := 0
	for _, user := range slices.Sorted(maps.Keys(users)) {
		cost, err := bcrypt.Cost([]byte(users[user]))
		if err != nil {
			return 0, fmt.Errorf("basic_auth_users: the hash of user %q is not a bcrypt hash", user)
		}
		if cost < bcrypt.DefaultCost && cheap != nil {
			cheap(user, cost)
		}
		maxCost = max(maxCost, cost)
	}
	return maxCost, nil
}

func (a *authenticator) scheme() string {
	if a.hasToken {
		return `Bearer realm="clouddb_exporter admin"`
	}
	return `Basic realm="clouddb_exporter admin", charset="UTF-8"`
}

func (a *authenticator) authenticate(r *http.Request) (string, authResult) {
	if a.hasToken {
		return a.authenticateToken(r)
	}
	user, pass, ok := r.BasicAuth()
	if !ok {
		return "", authWrong
	}
	hash, known := a.users[user]
	if !known {
		hash = string(a.dummy)
	}
	key := sha256.Sum256([]byte(user + "\x00" + pass + "\x00" + hash))
	a.mu.Lock()
	_, good := a.good[key]
	_, bad := a.bad[key]
	a.mu.Unlock()
	switch {
	case good:
		return user, authOK
	case bad:
		return "", authWrong
	}
	// A comparison is promised one of the client's failures beforehand, so
	// that concurrent guesses cannot overdraw; only a failed one takes it.
	done, clean, ok := a.failures.take(clientKey(r.RemoteAddr), a.now())
	if !ok {
		return "", authThrottled
	}
	release, ok := a.acquire(r.Context(), clean)
	if !ok {
		done(false, a.now())
		return "", authBusy
	}
	good = a.compare([]byte(hash), []byte(pass)) == nil && known
	if a.cheaper[user] {
		_ = a.compare(a.dummy, []byte(pass)) // as long as an unknown user, at least
	}
	release()
	a.remember(key, good)
	done(!good, a.now())
	if !good {
		return "", authWrong
	}
	return user, authOK
}

// authenticateToken: a wrong token spends one of the client's failures as a
// wrong password does, so that a flood of guesses gets 429; the right one
// is taken whatever the client's failures.
func (a *authenticator) authenticateToken(r *http.Request) (string, authResult) {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	// Digests keep the comparison constant-time whatever the lengths.
	sum := sha256.Sum256([]byte(strings.TrimSpace(got)))
	switch {
	case !ok:
		return "", authWrong // no guess: nothing to limit
	case subtle.ConstantTimeCompare(sum[:], a.tokenSum[:]) == 1:
		return callerToken, authOK
	}
	done, _, ok := a.failures.take(clientKey(r.RemoteAddr), a.now())
	if !ok {
		return "", authThrottled
	}
	done(true, a.now())
	return "", authWrong
}

func (a *authenticator) acquire(ctx context.Context, clean bool) (release func(), ok bool) {
	select {
	case a.slots <- struct{}{}:
		return func() { <-a.slots }, true
	default:
	}
	if !clean {
		return nil, false
	}
	wait := time.NewTimer(cleanWait)
	defer wait.Stop()
	select {
	case a.clean <- struct{}{}:
		return func() { <-a.clean }, true
	case <-wait.C:
	case <-ctx.Done():
	}
	return nil, false
}

// cleanWait is a few comparisons at the highest usual cost: a guesser's
// own first, clean, comparison may hold the reserved slot.
const cleanWait = 5 * time.Second

func (a *authenticator) remember(key [sha256.Size]byte, good bool) {
	cache := a.bad
	if good {
		cache = a.good
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(cache) >= maxAuthCache {
		clear(cache)
	}
	cache[key] = struct{}{}
}

// LoadWebConfig decodes a web configuration file checked by web.Validate,
// with the toolkit's defaults and TLS paths relative to the file.
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

// users returns c's basic-auth users, which the surface checks itself so
// that a wrong password is answered and audited like every other refusal.
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
