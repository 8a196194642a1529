package main

import (
	"encoding/json"
	"fmt"
	"math"
	"mime"
	"net/http"
	"strconv"
	"time"

	"golang.org/x/time/rate"
)

// reloadInterval: in discovery mode every reload is an upstream call.
const reloadInterval = 5 * time.Second

// lifecycle serves POST /-/reload, off unless --web.enable-lifecycle as in
// Prometheus: anyone reaching the metrics port could make it call the API.
type lifecycle struct {
	enabled bool
	// nil when there is nothing to re-read; errors are logged by the reloader.
	reload func() error
	now    func() time.Time
	limit  *rate.Limiter
}

func newLifecycle(enabled bool, reload func() error, now func() time.Time) *lifecycle {
	return &lifecycle{enabled: enabled, reload: reload, now: now, limit: rate.NewLimiter(rate.Every(reloadInterval), 1)}
}

// crossSite refuses what a page on another site can make a browser send.
var crossSite = http.NewCrossOriginProtection()

func (l *lifecycle) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case !l.enabled:
		lifecycleError(w, http.StatusForbidden, "LIFECYCLE_DISABLED", "Lifecycle API is not enabled: start the exporter with --web.enable-lifecycle")
		return
	case crossSite.Check(r) != nil:
		lifecycleError(w, http.StatusForbidden, "CROSS_ORIGIN_REQUEST", "cross-origin browser requests are refused (Sec-Fetch-Site or Origin names another site)")
		return
	case formLike(r):
		lifecycleError(w, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "send no body, or a body with a Content-Type other than a form's or text/plain")
		return
	case l.reload == nil:
		lifecycleError(w, http.StatusBadRequest, "NOTHING_TO_RELOAD", "Nothing to reload: the simulator's project never changes")
		return
	}
	now := l.now()
	res := l.limit.ReserveN(now, 1)
	if wait := res.DelayFrom(now); wait > 0 {
		res.CancelAt(now)
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
		lifecycleError(w, http.StatusTooManyRequests, "RELOAD_RATE_LIMITED",
			fmt.Sprintf("at most one reload every %s; retry later", reloadInterval))
		return
	}
	if err := l.reload(); err != nil {
		// The reason names files and settings: it goes to the log only.
		lifecycleError(w, http.StatusBadRequest, "RELOAD_FAILED", "Configuration not applied; the previous one stays in use. The reason is in the exporter's log.")
		return
	}
	_, _ = fmt.Fprintln(w, "Reloaded")
}

// formLike: what a cross-site form or no-cors fetch sends without a preflight.
func formLike(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return r.ContentLength != 0
	}
	mt, _, err := mime.ParseMediaType(ct)
	return err != nil || mt == "application/x-www-form-urlencoded" || mt == "multipart/form-data" || mt == "text/plain"
}

func lifecycleError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}{code, message})
}
