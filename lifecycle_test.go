package main

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/clouddb/clouddb_exporter/internal/fakeclock"
)

// TestReloadRoute covers POST /-/reload on the main listener: off without
// --web.enable-lifecycle, refused for cross-site and form requests, at
// most one reload per reloadInterval (on the fake clock), and a failed
// reload answered without its reason (which names files).
func TestReloadRoute(t *testing.T) {
	clock := fakeclock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	reloads := 0
	var reloadErr error
	reload := func() error { reloads++; return reloadErr }
	post := func(l *lifecycle, body string, header ...string) *httptest.ResponseRecorder {
		t.Helper()
		mux := newMux(routes{telemetryPath: "/metrics", metrics: http.NotFoundHandler(), notReady: func() string { return "" }, reload: l})
		req := httptest.NewRequest(http.MethodPost, "http://exporter:9866/-/reload", strings.NewReader(body))
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec
	}
	check := func(rec *httptest.ResponseRecorder, status int, code string, wantReloads int) {
		t.Helper()
		if rec.Code != status || !strings.Contains(rec.Body.String(), code) || reloads != wantReloads {
			t.Errorf("%d %q after %d reloads, want %d %s after %d", rec.Code, rec.Body.String(), reloads, status, code, wantReloads)
		}
	}

	check(post(newLifecycle(false, reload, clock.Now), ""), http.StatusForbidden, "LIFECYCLE_DISABLED", 0)
	check(post(newLifecycle(true, nil, clock.Now), ""), http.StatusBadRequest, "NOTHING_TO_RELOAD", 0)

	l := newLifecycle(true, reload, clock.Now)
	check(post(l, "", "Origin", "https://evil.example"), http.StatusForbidden, "CROSS_ORIGIN_REQUEST", 0)
	check(post(l, "", "Sec-Fetch-Site", "cross-site"), http.StatusForbidden, "CROSS_ORIGIN_REQUEST", 0)
	check(post(l, "a=b", "Content-Type", "application/x-www-form-urlencoded"), http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", 0)
	check(post(l, "", "Content-Type", "text/plain"), http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", 0)
	check(post(l, "x"), http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", 0)

	check(post(l, ""), http.StatusOK, "Reloaded", 1)
	for range 200 {
		rec := post(l, "", "Content-Type", "application/json")
		check(rec, http.StatusTooManyRequests, "RELOAD_RATE_LIMITED", 1)
		if got := rec.Header().Get("Retry-After"); got != "5" {
			t.Fatalf("Retry-After %q, want 5", got)
		}
	}
	clock.Advance(reloadInterval - time.Second)
	check(post(l, ""), http.StatusTooManyRequests, "RELOAD_RATE_LIMITED", 1)
	clock.Advance(time.Second)
	check(post(l, "", "Sec-Fetch-Site", "same-origin"), http.StatusOK, "Reloaded", 2)

	clock.Advance(reloadInterval)
	reloadErr = errors.New("--config.file: open /etc/clouddb/secret/clouddb.yml: permission denied")
	rec := post(l, "")
	check(rec, http.StatusBadRequest, "RELOAD_FAILED", 3)
	if strings.Contains(rec.Body.String(), "/etc/clouddb") {
		t.Errorf("the answer to a failed reload shows the reason: %q", rec.Body.String())
	}
}
