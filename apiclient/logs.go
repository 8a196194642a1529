package apiclient

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// LogsPageSize is the most entries one getServiceLogs answer holds.
const LogsPageSize = 500

// Log severities: PostgreSQL's, which the API passes on (DEBUG1 to DEBUG5
// too). Others may come; callers must not reject them.
const (
	SeverityLog     = "LOG"
	SeverityInfo    = "INFO"
	SeverityNotice  = "NOTICE"
	SeverityWarning = "WARNING"
	SeverityError   = "ERROR"
	SeverityFatal   = "FATAL"
	SeverityPanic   = "PANIC"
)

// LogsQuery holds the optional query parameters of getServiceLogs. Zero
// values are not sent.
type LogsQuery struct {
	// Node selects one node of the service (0 is the primary); nil for
	// the API's default.
	Node *int
	// Cursor is a previous answer's LastCursor: the next, older page.
	Cursor string
	// Since and Until bound the entries' timestamps.
	Since, Until time.Time
	// Search and Severities filter the entries; each is repeatable.
	Search, Severities []string
}

// values encodes q as query parameters.
func (q LogsQuery) values() url.Values {
	v := url.Values{}
	if q.Node != nil {
		v.Set("node", strconv.Itoa(*q.Node))
	}
	if q.Cursor != "" {
		v.Set("cursor", q.Cursor)
	}
	if !q.Since.IsZero() {
		v.Set("since", q.Since.UTC().Format(time.RFC3339Nano))
	}
	if !q.Until.IsZero() {
		v.Set("until", q.Until.UTC().Format(time.RFC3339Nano))
	}
	for _, s := range q.Search {
		v.Add("search", s)
	}
	for _, s := range q.Severities {
		v.Add("severities", s)
	}
	return v
}

// LogEntry is one log entry of a service.
type LogEntry struct {
	Timestamp Time   `json:"timestamp"`
	Message   string `json:"message"`
	Severity  string `json:"severity"`
}

// UnmarshalJSON implements json.Unmarshaler: a field that does not decode
// is left empty (a timestamp that does not decode is the zero time) rather
// than failing the page, since every entry must still be counted.
func (e *LogEntry) UnmarshalJSON(b []byte) error {
	var raw struct {
		Timestamp json.RawMessage `json:"timestamp"`
		Message   json.RawMessage `json:"message"`
		Severity  json.RawMessage `json:"severity"`
	}
	*e = LogEntry{}
	if json.Unmarshal(b, &raw) != nil {
		return nil
	}
	if raw.Timestamp != nil && e.Timestamp.UnmarshalJSON(raw.Timestamp) != nil {
		e.Timestamp = Time{}
	}
	_ = json.Unmarshal(raw.Message, &e.Message)
	_ = json.Unmarshal(raw.Severity, &e.Severity)
	return nil
}

// LogPage is one answer of getServiceLogs: at most LogsPageSize entries,
// newest first, and the cursor of the next, older page ("" when there is
// none). Deployments that still send the deprecated shape (logs as plain
// lines, lastCursor) are read into the same fields.
type LogPage struct {
	Entries    []LogEntry `json:"entries"`
	LastCursor string     `json:"last_cursor"`
	// Logs and LastCursorDeprecated are the deprecated fields as sent.
	Logs                 []string `json:"logs,omitempty"`
	LastCursorDeprecated string   `json:"lastCursor,omitempty"`
}

// decodeFrom implements streamedValue: a page of 500 entries may hold
// long messages (statements), more than one value's bound in all, while
// each entry stays within it.
func (p *LogPage) decodeFrom(dec *json.Decoder, reset func()) error {
	*p = LogPage{}
	tok, err := dec.Token()
	if err != nil || tok == nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return fmt.Errorf("json: cannot unmarshal %v into a log page", tok)
	}
	for {
		reset()
		if !dec.More() {
			break
		}
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		reset()
		switch key {
		case "entries":
			p.Entries, err = decodeList[LogEntry](dec, reset)
		case "logs":
			p.Logs, err = decodeList[string](dec, reset)
		case "last_cursor":
			err = dec.Decode(&p.LastCursor)
		case "lastCursor":
			err = dec.Decode(&p.LastCursorDeprecated)
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return err
		}
	}
	_, err = dec.Token() // the closing }
	return err
}

// normalize fills Entries and LastCursor from the deprecated fields when
// the current ones are absent.
func (p *LogPage) normalize() {
	if p.LastCursor == "" {
		p.LastCursor = p.LastCursorDeprecated
	}
	if p.Entries == nil && len(p.Logs) > 0 {
		p.Entries = make([]LogEntry, 0, len(p.Logs))
		for _, line := range p.Logs {
			p.Entries = append(p.Entries, parseLogLine(line))
		}
	}
}

// logLine reads a PostgreSQL log line as the deprecated field sends it:
// "2026-01-02 03:04:05.678 UTC [123] ERROR:  message". The timestamp and
// the severity are optional; what is not found stays empty.
var logLine = regexp.MustCompile(`^\s*(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d| UTC)?)?.*?\b([A-Z]+[1-5]?):\s+(.*)$`)

func parseLogLine(line string) LogEntry {
	e := LogEntry{Message: line}
	m := logLine.FindStringSubmatch(line)
	if m == nil {
		return e
	}
	if m[1] != "" {
		if t, err := ParseTime(strings.Replace(m[1], " UTC", "Z", 1)); err == nil {
			e.Timestamp = Time{t}
		}
	}
	e.Severity, e.Message = m[2], m[3]
	return e
}

// GetServiceLogs reads one page of the service's log entries (revision
// 2026; the first revision answers 404). Pass the answer's LastCursor as
// q.Cursor for the next, older page.
func (c *Client) GetServiceLogs(ctx context.Context, serviceID string, q LogsQuery) (*LogPage, error) {
	p, err := doValue[LogPage](ctx, c, call{op: OpGetServiceLogs, ids: []string{serviceID}, query: q.values()})
	if err != nil {
		return nil, err
	}
	p.normalize()
	return p, nil
}
