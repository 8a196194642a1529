package admin

import (
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

const maxLimiterKeys = 10000

// RateLimit is the rate_limit of --admin.web-config.file: a burst of
// requests, then one per Interval.
type RateLimit struct {
	Interval time.Duration
	Burst    int
}

// keyedLimiter keeps a token bucket per caller or client address.
type keyedLimiter struct {
	limit rate.Limit
	burst int

	mu      sync.Mutex
	buckets map[string]*rate.Limiter
	pending map[string]int // attempts in flight per key
}

func newKeyedLimiter(every time.Duration, burst int) *keyedLimiter {
	return &keyedLimiter{limit: rate.Every(every), burst: burst, buckets: map[string]*rate.Limiter{}, pending: map[string]int{}}
}

func (k *keyedLimiter) allow(key string, now time.Time) bool {
	return k.bucket(key, now).AllowN(now, 1)
}

// take promises a token to an attempt, and done takes it only if the
// attempt failed: a token reserved and given back with CancelAt restores
// less than it took once later reservations exist, draining the bucket.
func (k *keyedLimiter) take(key string, now time.Time) (done func(failed bool, at time.Time), full, ok bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	b := k.bucketLocked(key, now)
	tokens := b.TokensAt(now)
	if tokens-float64(k.pending[key]) < 1 {
		return nil, false, false
	}
	full = tokens >= float64(k.burst) && k.pending[key] == 0
	k.pending[key]++
	return func(failed bool, at time.Time) {
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.pending[key]--; k.pending[key] <= 0 {
			delete(k.pending, key)
		}
		if failed {
			b.ReserveN(at, 1) // may run into debt: the next attempt waits for it
		}
	}, full, true
}

func (k *keyedLimiter) bucket(key string, now time.Time) *rate.Limiter {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.bucketLocked(key, now)
}

func (k *keyedLimiter) bucketLocked(key string, now time.Time) *rate.Limiter {
	if b, ok := k.buckets[key]; ok {
		return b
	}
	if len(k.buckets) >= maxLimiterKeys {
		// Forgetting a full bucket loses nothing; forgetting all is the
		// price of the bound.
		for key, b := range k.buckets {
			if b.TokensAt(now) >= float64(k.burst) {
				delete(k.buckets, key)
			}
		}
		if len(k.buckets) >= maxLimiterKeys*3/4 {
			clear(k.buckets)
		}
	}
	b := rate.NewLimiter(k.limit, k.burst)
	k.buckets[key] = b
	return b
}

// clientKey is an IPv6 address's /64, which one host commonly has whole.
func clientKey(remoteAddr string) string {
	ap, err := netip.ParseAddrPort(remoteAddr)
	if err != nil {
		return capField(remoteAddr)
	}
	addr := ap.Addr().Unmap().WithZone("")
	if addr.Is6() {
		p, _ := addr.Prefix(64)
		return p.String()
	}
	return addr.String()
}
