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

// Log severities: PostgreSQL's, which the API passes on; others may come and must not be rejected.
const (
	SeverityLog     = "LOG"
	SeverityInfo    = "INFO"
	SeverityNotice  = "NOTICE"
	SeverityWarning = "WARNING"
	SeverityError   = "ERROR"
	SeverityFatal   = "FATAL"
	SeverityPanic   = "PANIC"
)

// LogsQuery holds the optional query parameters of getServiceLogs; zero values are not sent.
type LogsQuery struct {
	// 0 is the primary; nil for the API's default.
	Node               *int
	Cursor             string
	Since, Until       time.Time
	Search, Severities []string
}

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

// UnmarshalJSON leaves a field that does not decode empty: every entry must still be counted.
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

// LogPage is one getServiceLogs answer, newest first; the deprecated shape is read into the same fields.
type LogPage struct {
	Entries              []LogEntry `json:"entries"`
	LastCursor           string     `json:"last_cursor"`
	Logs                 []string   `json:"logs,omitempty"`
	LastCursorDeprecated string     `json:"lastCursor,omitempty"`
}

// A page may exceed one value's bound in all; each entry stays within it.
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
			p.Entries, err = decodeEntries(dec, reset)
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

func decodeEntries(dec *json.Decoder, reset func()) ([]LogEntry, error) {
	tok, err := dec.Token()
	if err != nil || tok == nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("json: cannot unmarshal %v into a list", tok)
	}
	var buf [32]LogEntry // a minute's page holds some tens
	list := buf[:0]
	var raw json.RawMessage // its bytes reused from entry to entry
	for {
		reset()
		if !dec.More() {
			break
		}
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		s := validJSON{b: raw}
		list = append(list, s.entry())
	}
	_, err = dec.Token() // the closing ]
	return append(make([]LogEntry, 0, len(list)), list...), err
}

func (p *LogPage) decodeValid(data []byte) bool {
	*p = LogPage{}
	s := validJSON{b: data}
	switch s.next() {
	case 'n':
		return true
	case '{':
		s.i++
	default:
		return false
	}
	for s.more() {
		ok := true
		switch k := s.key(); {
		case keyExact(k, "entries"):
			p.Entries, ok = s.entries()
		case keyExact(k, "logs"):
			p.Logs, ok = s.lines()
		case keyExact(k, "last_cursor"):
			ok = s.cursor(&p.LastCursor)
		case keyExact(k, "lastCursor"):
			ok = s.cursor(&p.LastCursorDeprecated)
		default:
			s.value()
		}
		if !ok {
			return false
		}
	}
	return true
}

func (s *validJSON) entries() ([]LogEntry, bool) {
	if null, ok := s.openList(); null || !ok {
		return nil, ok
	}
	var buf [32]LogEntry
	list := buf[:0]
	for s.more() {
		list = append(list, s.entry())
	}
	return append(make([]LogEntry, 0, len(list)), list...), true
}

func (s *validJSON) lines() ([]string, bool) {
	if null, ok := s.openList(); null || !ok {
		return nil, ok
	}
	list := []string{}
	for s.more() {
		switch v := s.value(); v[0] {
		case 'n':
			list = append(list, "")
		case '"':
			list = append(list, unquote(v))
		default:
			return nil, false
		}
	}
	return list, true
}

func (s *validJSON) cursor(to *string) bool {
	switch v := s.value(); v[0] {
	case 'n':
	case '"':
		*to = unquote(v)
	default:
		return false
	}
	return true
}

func (s *validJSON) entry() LogEntry {
	if s.next() != '{' {
		s.value()
		return LogEntry{}
	}
	s.i++
	var ts, msg, sev []byte
	for s.more() {
		k := s.key()
		switch v := s.value(); {
		case keyIs(k, "timestamp"):
			ts = v
		case keyIs(k, "message"):
			msg = v
		case keyIs(k, "severity"):
			sev = v
		}
	}
	return LogEntry{Timestamp: timeOf(ts), Message: textOf(msg), Severity: textOf(sev)}
}

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

// logLine reads a line of the deprecated field, "2026-01-02 03:04:05.678 UTC [123] ERROR:  message";
// the timestamp and the severity are optional.
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

// GetServiceLogs reads one page of a service's log (revision 2026); LastCursor as q.Cursor reads the next.
func (c *Client) GetServiceLogs(ctx context.Context, serviceID string, q LogsQuery) (*LogPage, error) {
	p, err := doValue[LogPage](ctx, c, call{op: OpGetServiceLogs, ids: []string{serviceID}, query: q.values()})
	if err != nil {
		return nil, err
	}
	p.normalize()
	return p, nil
}
