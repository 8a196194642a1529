package apiclient

import (
	"encoding/base64"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRotationAfter401: a 401 makes the Client ask its source for new
// keys; with new ones it tries again at once, once, and redacts both the
// old and the new keys.
func TestRotationAfter401(t *testing.T) {
	const newAccess, newSecret = "AKrotatedaccess", "SKrotatedsecretvalue"
	good := "Basic " + base64.StdEncoding.EncodeToString([]byte(newAccess+":"+newSecret))
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != good {
			writeJSON(w, http.StatusUnauthorized, `{"code":"UNAUTHORIZED","message":"bad key `+r.Header.Get("Authorization")+`"}`)
			return
		}
		writeJSON(w, http.StatusOK, `[]`)
	})
	var calls atomic.Int32
	var c *Client
	next := [2]Secret{newAccess, newSecret} // what the source holds
	c, _, _ = newTestClient(t, srv, func(cfg *Config) {
		cfg.MaxRetries = -1
		cfg.OnUnauthorized = func() bool {
			calls.Add(1)
			changed, err := c.SetCredentials(next[0], next[1], "")
			if err != nil {
				t.Error(err)
			}
			return changed
		}
	})
	if _, err := c.ListVPCs(t.Context()); err != nil {
		t.Fatalf("ListVPCs after rotation: %v", err)
	}
	if calls.Load() != 1 {
		t.Errorf("OnUnauthorized called %d times, want 1", calls.Load())
	}
	// Nothing new to install: the 401 stands, after one look.
	next = [2]Secret{"AKother", "SKothervalue"}
	if _, err := c.SetCredentials("AKother", "SKothervalue", ""); err != nil {
		t.Fatal(err)
	}
	_, err := c.ListVPCs(t.Context())
	if !IsUnauthorized(err) || calls.Load() != 2 {
		t.Fatalf("err = %v after %d looks, want a 401 after 2", err, calls.Load())
	}
	if msg := err.Error(); strings.Contains(msg, "AKother") || !strings.Contains(msg, redacted) {
		t.Errorf("the echoed key is not redacted: %s", msg)
	}
	if changed, _ := c.SetCredentials("AKother", "SKothervalue", ""); changed {
		t.Error("SetCredentials of the same keys reports a change")
	}
	if _, err := c.SetCredentials("", "x", ""); err == nil {
		t.Error("SetCredentials accepts an empty access key")
	}
}

// TestTrackingShare: calls marked by Tracking are paced by their own,
// smaller share of the rate limit (so that many tracked operations cannot
// starve the poll cycle; docs/admin.md, "Rate budget of the admin
// surface"), and still count against the whole limit.
func TestTrackingShare(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusOK, `[]`) })
	c, clock, _ := newTestClient(t, srv, func(cfg *Config) { cfg.RateLimit, cfg.Burst, cfg.TrackingShare = 100, 1, 0.01 })
	ctx := Tracking(t.Context())
	for range 2 {
		if _, err := c.ListVPCs(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var longest time.Duration
	for _, d := range clock.recorded() {
		longest = max(longest, d)
	}
	// At 100/s a call waits 10ms at most; a tracking call waits for its
	// share, 1/s.
	if longest < 500*time.Millisecond {
		t.Errorf("the second tracking call waited %s, want about 1s (its share of 1/s)", longest)
	}
	if _, err := New(Config{BaseURL: "http://x/v1", ProjectID: "p", AccessKey: "a", SecretKey: "s", TrackingShare: 2}); err == nil {
		t.Error("a TrackingShare above 1 is accepted")
	}
}
