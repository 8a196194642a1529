package apiclient

import (
	"bytes"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

var jsonNull = []byte("null")

// Int is an integer that also decodes from a string and from null (0): one must not fail a list.
type Int int64

// UnmarshalJSON implements json.Unmarshaler.
func (i *Int) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if n, err := strconv.ParseInt(string(b), 10, 64); err == nil { // the common case, with no copy of b
		*i = Int(n)
		return nil
	}
	if bytes.Equal(b, jsonNull) {
		*i = 0
		return nil
	}
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		var err error
		if s, err = unquote(b); err != nil {
			return err
		}
		s = strings.TrimSpace(s)
		if s == "" {
			*i = 0
			return nil
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil || f != float64(int64(f)) {
			return fmt.Errorf("apiclient: %q is not an integer", truncate(s, 40))
		}
		n = int64(f)
	}
	*i = Int(n)
	return nil
}

// The zone-less forms are read as UTC, as the spec says all times are.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
}

// Time decodes from RFC 3339 with or without fractions or zone (UTC), and from null or "" (zero).
type Time struct {
	time.Time
}

// ParseTime parses s with the tolerant layouts Time accepts.
func ParseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("apiclient: %q is not an ISO 8601 date-time", truncate(s, 40))
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *Time) UnmarshalJSON(b []byte) error {
	if len(b) > 2 && b[0] == '"' && b[len(b)-1] == '"' {
		// The common case, with no copy of b: a text with escapes fails here.
		if parsed, err := time.Parse(time.RFC3339Nano, string(b[1:len(b)-1])); err == nil {
			t.Time = parsed.UTC()
			return nil
		}
	}
	if bytes.Equal(bytes.TrimSpace(b), jsonNull) {
		t.Time = time.Time{}
		return nil
	}
	s, err := unquote(b)
	if err != nil {
		return fmt.Errorf("apiclient: date-time must be a string: %w", err)
	}
	if strings.TrimSpace(s) == "" {
		t.Time = time.Time{}
		return nil
	}
	parsed, err := ParseTime(s)
	if err != nil {
		return err
	}
	t.Time = parsed
	return nil
}

// MarshalJSON writes RFC 3339 in UTC, null when zero.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return append(t.UTC().AppendFormat([]byte{'"'}, time.RFC3339Nano), '"'), nil
}

// unquote is the text of the JSON string b, invalid UTF-8 replaced; plain text is not copied twice,
// nor is escaped text that unquotes without a fault (the decoder's own path for the rest).
func unquote(b []byte) (string, error) {
	if len(b) >= 2 && b[0] == '"' && bytes.IndexByte(b, '\\') < 0 && bytes.IndexByte(b[1:], '"') == len(b)-2 && utf8.Valid(b) {
		return string(b[1 : len(b)-1]), nil
	}
	var buf [128]byte
	if t, err := jsontext.AppendUnquote(buf[:0], b); err == nil {
		return string(t), nil
	}
	var s string
	err := json.Unmarshal(b, &s, decodeOptions)
	return s, err
}

// Secret is a string that never shows itself in fmt or slog output. It marshals to JSON as its value
// (it travels on the wire): never log a struct holding one through a JSON encoder.
type Secret string

const redacted = "<redacted>"

// String implements fmt.Stringer.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// Format implements fmt.Formatter so that no verb reveals the value.
func (s Secret) Format(f fmt.State, _ rune) { _, _ = f.Write([]byte(s.String())) }

// LogValue implements slog.LogValuer.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// Reveal returns the secret's value, for the few places that must send it.
func (s Secret) Reveal() string { return string(s) }

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// members calls each with the members of an object, in order: those whose names are among names,
// whatever their case (field: the name's index), or with names nil every one (name: its text). A
// value that is no object is skipped.
func members(dec *jsontext.Decoder, names []string, each func(field int, name string, v jsontext.Value)) error {
	return membersFrom(dec, names, func(field int, name string) error {
		v, err := dec.ReadValue()
		if err == nil && (field >= 0 || names == nil) {
			each(field, name, v)
		}
		return err
	})
}

// membersFrom is members with each reading the value from dec itself.
func membersFrom(dec *jsontext.Decoder, names []string, each func(field int, name string) error) error {
	if dec.PeekKind() != '{' {
		return dec.SkipValue()
	}
	if _, err := dec.ReadToken(); err != nil {
		return err
	}
	for dec.PeekKind() != '}' {
		q, err := dec.ReadValue()
		if err != nil {
			return err
		}
		field, name := -1, ""
		if names == nil {
			name, _ = text(q)
		} else {
			field = fieldOf(q, names)
		}
		if err := each(field, name); err != nil {
			return err
		}
	}
	_, err := dec.ReadToken()
	return err
}

func fieldOf(q jsontext.Value, names []string) int {
	for i, n := range names { // the spelling of the spec, before its other cases
		if len(q) == len(n)+2 && string(q[1:len(q)-1]) == n {
			return i
		}
	}
	name := ""
	if bytes.IndexByte(q, '\\') >= 0 {
		name, _ = unquote(q)
	}
	for i, n := range names {
		if name != "" && strings.EqualFold(name, n) || name == "" && strings.EqualFold(string(q[1:len(q)-1]), n) {
			return i
		}
	}
	return -1
}

// fromBytes decodes b, one value that encoding/json checked, with a decoder method.
func fromBytes(b []byte, from func(*jsontext.Decoder) error) error {
	return from(jsontext.NewDecoder(bytes.NewReader(b), decodeOptions))
}

// knownTexts recur in most answers (severities, labels): decoded as these constants, they cost no allocation.
var knownTexts = []string{SeverityLog, SeverityInfo, SeverityNotice, SeverityWarning, SeverityError, SeverityFatal, SeverityPanic,
	"DEBUG", "DEBUG1", "DEBUG2", "DEBUG3", "DEBUG4", "DEBUG5", LabelRole, LabelOrdinal, LabelJobID, "primary", "replica"}

// text is unquote's text of q, a known one without allocating.
func text(q []byte) (string, error) {
	for _, k := range knownTexts {
		if len(q) == len(k)+2 && q[0] == '"' && string(q[1:len(q)-1]) == k {
			return k, nil
		}
	}
	return unquote(q)
}
