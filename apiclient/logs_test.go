package apiclient

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestLogPageOverValueBound: a full page of long messages (500 entries of
// 4 KiB, 2 MiB in all: PostgreSQL's messages carry statements) decodes
// entry by entry under the 1 MiB bound of one value, as a list does, in
// both shapes; one entry over the bound still fails the call.
func TestLogPageOverValueBound(t *testing.T) {
	long := strings.Repeat("x", 4<<10)
	var entries, lines []string
	for i := range LogsPageSize {
		entries = append(entries, fmt.Sprintf(`{"timestamp":"2026-01-02T03:04:%02dZ","severity":"ERROR","message":"%s"}`, i%60, long))
		lines = append(lines, fmt.Sprintf(`"2026-01-02 03:04:%02d UTC [1] ERROR:  %s"`, i%60, long))
	}
	bodies := map[string]string{
		"/cur/logs":  `{"entries":[` + strings.Join(entries, ",") + `],"last_cursor":"c2","extra":{"a":[1,2]}}`,
		"/old/logs":  `{"logs":[` + strings.Join(lines, ",") + `],"lastCursor":"c3"}`,
		"/huge/logs": `{"entries":[{"timestamp":"2026-01-02T03:04:05Z","severity":"ERROR","message":"` + strings.Repeat("y", 2<<20) + `"}],"last_cursor":""}`,
	}
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		for suffix, body := range bodies {
			if strings.HasSuffix(r.URL.Path, suffix) {
				writeJSON(w, http.StatusOK, body)
				return
			}
		}
		writeJSON(w, http.StatusNotFound, `{"code":"NOT_FOUND","message":"no"}`)
	})
	c, _, _ := newTestClient(t, srv, nil)
	for id, cursor := range map[string]string{"cur": "c2", "old": "c3"} {
		page, err := c.GetServiceLogs(t.Context(), id, LogsQuery{})
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if len(page.Entries) != LogsPageSize || page.LastCursor != cursor || page.Entries[7].Severity != "ERROR" || page.Entries[7].Timestamp.Second() != 7 || len(page.Entries[7].Message) != len(long) {
			t.Errorf("%s: %d entries, cursor %q, entry 7 = %q at %v", id, len(page.Entries), page.LastCursor, page.Entries[7].Severity, page.Entries[7].Timestamp)
		}
	}
	if _, err := c.GetServiceLogs(t.Context(), "huge", LogsQuery{}); !errors.Is(err, ErrValueTooLarge) {
		t.Errorf("an entry of 2 MiB: %v, want ErrValueTooLarge", err)
	}
}
