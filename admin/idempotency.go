package admin

import (
	"crypto/sha256"
	"net/http"
	"sync"
	"time"
)

const (
	idempotencyHeader  = "Idempotency-Key"
	replayedHeader     = "Idempotent-Replayed"
	maxKeyLen          = 255
	idempotencyTTL     = 24 * time.Hour
	maxIdempotencyKeys = 10000
)

// storedAnswer is an answer kept for replay: a success, or a failure after
// which the create may have happened.
type storedAnswer struct {
	status int
	header http.Header
	body   []byte
}

type idemEntry struct {
	fingerprint [sha256.Size]byte
	created     time.Time
	done        bool
	answer      storedAnswer
}

// idemKey scopes a key to its caller (a basic-auth user, or the token), a
// project and an operation: another caller repeating a key gets no answer
// of someone else's, which may hold a new database's password.
type idemKey struct{ caller, project, op, key string }

type idempotencyStore struct {
	now func() time.Time
	max int

	mu      sync.Mutex
	entries map[idemKey]*idemEntry
	order   []idemKey // insertion order, for eviction
}

func newIdempotencyStore(now func() time.Time, limit int) *idempotencyStore {
	return &idempotencyStore{now: now, max: limit, entries: map[idemKey]*idemEntry{}}
}

const (
	idemNew = iota
	idemReplay
	idemReused
	idemInProgress
)

// begin looks a key up. For idemNew the key is now held in flight and the
// caller must end it with complete or abort.
func (s *idempotencyStore) begin(k idemKey, fingerprint [sha256.Size]byte) (int, storedAnswer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if e, ok := s.entries[k]; ok && now.Sub(e.created) < idempotencyTTL {
		switch {
		case e.fingerprint != fingerprint:
			return idemReused, storedAnswer{}
		case !e.done:
			return idemInProgress, storedAnswer{}
		default:
			return idemReplay, e.answer
		}
	}
	s.dropLocked(k)
	for len(s.order) >= s.max {
		delete(s.entries, s.order[0])
		s.order = s.order[1:]
	}
	s.entries[k] = &idemEntry{fingerprint: fingerprint, created: now}
	s.order = append(s.order, k)
	return idemNew, storedAnswer{}
}

func (s *idempotencyStore) complete(k idemKey, a storedAnswer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.entries[k]; ok {
		e.done, e.answer = true, a
	}
}

// abort frees a key begun with idemNew for a retry.
func (s *idempotencyStore) abort(k idemKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropLocked(k)
}

func (s *idempotencyStore) dropLocked(k idemKey) {
	if _, ok := s.entries[k]; !ok {
		return
	}
	delete(s.entries, k)
	for i, o := range s.order {
		if o == k {
			s.order = append(s.order[:i], s.order[i+1:]...)
			break
		}
	}
}
