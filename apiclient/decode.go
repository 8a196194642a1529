package apiclient

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
)

var jsonNull = []byte("null")

// Int is an integer that also decodes from a string and from null (0): one must not fail a list.
type Int int64

// UnmarshalJSON implements json.Unmarshaler.
func (i *Int) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if bytes.Equal(b, jsonNull) {
		*i = 0
		return nil
	}
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
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
	// A copy, so that s does not escape: the hand decoders parse from a string on the stack.
	return time.Time{}, fmt.Errorf("apiclient: %q is not an ISO 8601 date-time", truncate(strings.Clone(s), 40))
}

// UnmarshalJSON implements json.Unmarshaler.
func (t *Time) UnmarshalJSON(b []byte) error {
	if bytes.Equal(bytes.TrimSpace(b), jsonNull) {
		t.Time = time.Time{}
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
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
		return jsonNull, nil
	}
	return json.Marshal(t.UTC().Format(time.RFC3339Nano))
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

// GoString implements fmt.GoStringer.
func (s Secret) GoString() string { return s.String() }

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
