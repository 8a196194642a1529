package apiclient

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"
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

// TestLogPagesOwnTheirEntries: the entries of a page are a slice of their
// number that decoding the next page, in the same decoder's array, leaves
// as they were.
func TestLogPagesOwnTheirEntries(t *testing.T) {
	entry := `{"timestamp":"2026-01-02T03:04:%02dZ","severity":"%s","message":"m%d \"q\""}`
	var first, second LogPage
	body := `{"entries":[` + fmt.Sprintf(entry, 1, "LOG", 1) + `,` + fmt.Sprintf(entry, 2, "DEBUG3", 2) + `,` + fmt.Sprintf(entry, 3, "Custom", 3) + `]}`
	if err := decodeBody(OpGetServiceLogs, []byte(body), &first, nil); err != nil {
		t.Fatal(err)
	}
	if err := decodeBody(OpGetServiceLogs, []byte(`{"entries":[`+fmt.Sprintf(entry, 9, "ERROR", 9)+`]}`), &second, nil); err != nil {
		t.Fatal(err)
	}
	want := []LogEntry{{Time{time.Date(2026, 1, 2, 3, 4, 1, 0, time.UTC)}, `m1 "q"`, "LOG"}, {Time{time.Date(2026, 1, 2, 3, 4, 2, 0, time.UTC)}, `m2 "q"`, "DEBUG3"},
		{Time{time.Date(2026, 1, 2, 3, 4, 3, 0, time.UTC)}, `m3 "q"`, "Custom"}}
	if !reflect.DeepEqual(first.Entries, want) || cap(first.Entries) != 3 || len(second.Entries) != 1 || second.Entries[0].Message != `m9 "q"` {
		t.Errorf("first page %+v (cap %d), second %+v", first.Entries, cap(first.Entries), second.Entries)
	}
}

// TestLogsQueryEncoding: a log read's query, escapes, repeated keys and
// zones included; empty parameters are left out.
func TestLogsQueryEncoding(t *testing.T) {
	node, negative := 2, -1
	since := time.Date(2026, 11, 24, 1, 31, 5, 123456789, time.FixedZone("x", 3600))
	for q, want := range map[*LogsQuery]string{
		{}: "",
		{Since: since, Until: since.Add(time.Minute)}:                                                               "?since=2026-11-24T00%3A31%3A05.123456789Z&until=2026-11-24T00%3A32%3A05.123456789Z",
		{Node: &node, Cursor: "1795482284000000000.2"}:                                                              "?cursor=1795482284000000000.2&node=2",
		{Node: &negative, Cursor: "a+b/c&d=e f%"}:                                                                   "?cursor=a%2Bb%2Fc%26d%3De+f%25&node=-1",
		{Search: []string{"deadlock", `relation "x"`, "é & ü"}, Severities: []string{SeverityError, SeverityFatal}}: "?search=deadlock&search=relation+%22x%22&search=%C3%A9+%26+%C3%BC&severities=ERROR&severities=FATAL",
	} {
		if got := q.query(); got != want {
			t.Errorf("%+v: query %q, want %q", *q, got, want)
		}
	}
}
