package apiclient

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
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

// query is the encoded query of q after a "?", "" for none.
func (q LogsQuery) query() string {
	v := url.Values{"search": q.Search, "severities": q.Severities}
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
	if enc := v.Encode(); enc != "" {
		return "?" + enc
	}
	return ""
}

// LogEntry is one log entry of a service.
type LogEntry struct {
	Timestamp Time   `json:"timestamp"`
	Message   string `json:"message"`
	Severity  string `json:"severity"`
}

// UnmarshalJSONFrom leaves a field that does not decode empty: every entry must still be counted.
func (e *LogEntry) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*e = LogEntry{}
	return members(dec, entryFields, func(field int, _ string, v jsontext.Value) {
		switch field {
		case 0:
			if e.Timestamp.UnmarshalJSON(v) != nil {
				e.Timestamp = Time{}
			}
		case 1:
			e.Message, _ = unquote(v)
		default:
			e.Severity, _ = text(v)
		}
	})
}

var entryFields = []string{"timestamp", "message", "severity"}

// UnmarshalJSON implements json.Unmarshaler for encoding/json.
func (e *LogEntry) UnmarshalJSON(b []byte) error { return fromBytes(b, e.UnmarshalJSONFrom) }

// LogPage is one getServiceLogs answer, newest first; the deprecated shape is read into the same fields.
type LogPage struct {
	Entries              []LogEntry `json:"entries"`
	LastCursor           string     `json:"last_cursor"`
	Logs                 []string   `json:"logs,omitempty"`
	LastCursorDeprecated string     `json:"lastCursor,omitempty"`
}

// A page may exceed one value's bound in all; each entry stays within it. The entries are decoded in
// scratch, an array kept with the decoder, and the page gets a copy at their number.
func (p *LogPage) decodeFrom(dec *jsontext.Decoder, reset func(), scratch *[]LogEntry) error {
	*p = LogPage{}
	tok, err := dec.ReadToken()
	if err != nil || tok.Kind() == 'n' {
		return err
	}
	if tok.Kind() != '{' {
		return fmt.Errorf("json: cannot unmarshal %v into a log page", tok.Kind())
	}
	for reset(); dec.PeekKind() != '}'; reset() {
		name, err := dec.ReadToken()
		if err != nil {
			return err
		}
		reset()
		switch name.String() {
		case "entries":
			p.Entries, err = decodeItems(dec, reset, scratch)
		case "logs":
			p.Logs, err = decodeItems(dec, reset, new([]string))
		case "last_cursor":
			err = json.UnmarshalDecode(dec, &p.LastCursor)
		case "lastCursor":
			err = json.UnmarshalDecode(dec, &p.LastCursorDeprecated)
		default:
			err = dec.SkipValue()
		}
		if err != nil {
			return err
		}
	}
	_, err = dec.ReadToken() // the closing }
	return err
}

// decodeItems decodes a list each of whose elements stays within the value bound; null is nil. The
// elements are decoded in *scratch, left grown and cleared.
func decodeItems[T any](dec *jsontext.Decoder, reset func(), scratch *[]T) ([]T, error) {
	tok, err := dec.ReadToken()
	if err != nil || tok.Kind() == 'n' {
		return nil, err
	}
	if tok.Kind() != '[' {
		return nil, fmt.Errorf("json: cannot unmarshal %v into a list", tok.Kind())
	}
	list := (*scratch)[:0]
	defer func() { clear(list); *scratch = list[:0] }()
	for reset(); dec.PeekKind() != ']'; reset() {
		list = append(list, *new(T))
		e := &list[len(list)-1]
		if u, ok := any(e).(json.UnmarshalerFrom); ok {
			err = u.UnmarshalJSONFrom(dec) // as json would, without looking the method up
		} else {
			err = json.UnmarshalDecode(dec, e)
		}
		if err != nil {
			return nil, err
		}
	}
	_, err = dec.ReadToken() // the closing ]
	return append(make([]T, 0, len(list)), list...), err
}

func (p *LogPage) normalize() {
	p.LastCursor = cmp.Or(p.LastCursor, p.LastCursorDeprecated)
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
	p, err := doValue[LogPage](ctx, c, call{op: OpGetServiceLogs, ids: []string{serviceID}, query: q.query()})
	if err != nil {
		return nil, err
	}
	p.normalize()
	return p, nil
}
