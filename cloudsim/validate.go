package cloudsim

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

func invalidf(format string, args ...any) error {
	return &apiError{status: http.StatusBadRequest, code: "INVALID_REQUEST", message: fmt.Sprintf(format, args...)}
}

func notFoundf(format string, args ...any) error {
	return &apiError{status: http.StatusNotFound, code: "NOT_FOUND", message: fmt.Sprintf(format, args...)}
}

func conflictf(format string, args ...any) error {
	return &apiError{status: http.StatusConflict, code: "CONFLICT", message: fmt.Sprintf(format, args...)}
}

// The spec gives no bounds; these are the simulator's.
const (
	maxNameRunes    = 128
	maxSize         = math.MaxInt32
	maxReplicaCount = 5
)

// body's getters record the first failure, so a handler reads every field
// and asks err() once.
type body struct {
	fields map[string]json.RawMessage
	first  error
}

func parseBody(raw []byte) (*body, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, invalidf("request body is required")
	}
	if !json.Valid(raw) {
		return nil, invalidf("request body is not valid JSON")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return nil, invalidf("request body must be a JSON object")
	}
	return &body{fields: fields}, nil
}

func (b *body) err() error { return b.first }

func (b *body) fail(err error) {
	if b.first == nil {
		b.first = err
	}
}

// failOn: revision 2026 names the field in the error's details.
func (b *body) failOn(name string, err error) {
	var ae *apiError
	if errors.As(err, &ae) {
		ae.details = map[string]any{"field": name}
	}
	b.fail(err)
}

func (b *body) has(name string) bool {
	v, ok := b.fields[name]
	return ok && !bytes.Equal(bytes.TrimSpace(v), []byte("null"))
}

// sizeString takes strings (revision 2026) or integers; with shared, "shared" gives 0.
func (b *body) sizeString(name string, shared bool) int64 {
	v, ok := b.raw(name)
	if !ok {
		return 0
	}
	if v[0] != '"' {
		return b.size(name)
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		b.failOn(name, invalidf("%s must be a string of digits", name))
		return 0
	}
	if shared && s == "shared" {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || strings.TrimLeft(s, "0123456789") != "" || n < 1 || n > maxSize {
		want := "a string of digits"
		if shared {
			want += ` or "shared"`
		}
		b.failOn(name, invalidf("%s must be %s between 1 and %d, got %q", name, want, int64(maxSize), truncate(s, 32)))
		return 0
	}
	return n
}

// raw records a missing or null field as required.
func (b *body) raw(name string) (json.RawMessage, bool) {
	v, ok := b.fields[name]
	v = bytes.TrimSpace(v)
	if !ok || len(v) == 0 || bytes.Equal(v, []byte("null")) {
		b.failOn(name, invalidf("%s is required", name))
		return nil, false
	}
	return v, true
}

func (b *body) string(name string) string {
	v, ok := b.raw(name)
	if !ok {
		return ""
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		b.failOn(name, invalidf("%s must be a string", name))
		return ""
	}
	return s
}

// text: names, identifiers and region codes; not blank, at most maxNameRunes.
func (b *body) text(name string) string {
	s := b.string(name)
	if b.first != nil {
		return ""
	}
	if strings.TrimSpace(s) == "" {
		b.failOn(name, invalidf("%s must not be blank", name))
		return ""
	}
	if n := utf8.RuneCountInString(s); n > maxNameRunes {
		b.failOn(name, invalidf("%s must be at most %d characters, got %d", name, maxNameRunes, n))
		return ""
	}
	return s
}

func (b *body) nonEmpty(name string) string {
	s := b.string(name)
	if b.first == nil && s == "" {
		b.failOn(name, invalidf("%s must not be empty", name))
	}
	return s
}

func (b *body) int(name string, lo, hi int64) int64 {
	v, ok := b.raw(name)
	if !ok {
		return 0
	}
	if v[0] != '-' && (v[0] < '0' || v[0] > '9') {
		b.failOn(name, invalidf("%s must be an integer", name))
		return 0
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		if _, ferr := strconv.ParseFloat(string(v), 64); ferr == nil && !bytes.ContainsAny(v, ".eE") {
			// A whole number too large for int64.
			b.failOn(name, invalidf("%s must be between %d and %d", name, lo, hi))
		} else {
			b.failOn(name, invalidf("%s must be an integer", name))
		}
		return 0
	}
	if n < lo || n > hi {
		b.failOn(name, invalidf("%s must be between %d and %d, got %d", name, lo, hi, n))
		return 0
	}
	return n
}

func (b *body) size(name string) int64 { return b.int(name, 1, maxSize) }

func (b *body) enum(name string, allowed ...string) string {
	s := b.string(name)
	if b.first == nil && !slices.Contains(allowed, s) {
		b.failOn(name, invalidf("%s must be one of %s, got %q", name, strings.Join(allowed, ", "), s))
		return ""
	}
	return s
}

func (b *body) set(name string, allowed ...string) []string {
	v, ok := b.raw(name)
	if !ok {
		return nil
	}
	var items []string
	if err := json.Unmarshal(v, &items); err != nil {
		b.failOn(name, invalidf("%s must be an array of strings", name))
		return nil
	}
	for i, item := range items {
		if !slices.Contains(allowed, item) {
			b.failOn(name, invalidf("%s must contain only %s, got %q", name, strings.Join(allowed, ", "), item))
			return nil
		}
		if slices.Contains(items[:i], item) {
			b.failOn(name, invalidf("%s must not repeat %q", name, item))
			return nil
		}
	}
	return items
}

func (b *body) cidr(name string) string {
	s := b.string(name)
	if b.first != nil {
		return ""
	}
	p, err := netip.ParsePrefix(s)
	if err != nil || !p.Addr().Is4() {
		b.failOn(name, invalidf("%s must be an IPv4 CIDR block such as 10.0.0.0/16, got %q", name, truncate(s, 64)))
		return ""
	}
	return s
}

// nullableString: must be present; a string or null.
func (b *body) nullableString(name string) *string {
	v, ok := b.fields[name]
	if !ok {
		b.failOn(name, invalidf("%s is required (a string or null)", name))
		return nil
	}
	if bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
		return nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		b.failOn(name, invalidf("%s must be a string or null", name))
		return nil
	}
	return &s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func (b *body) time(name string) time.Time {
	s := b.string(name)
	if b.first != nil {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		b.failOn(name, invalidf("%s must be an RFC 3339 date-time, got %q", name, truncate(s, 40)))
		return time.Time{}
	}
	return t.UTC()
}
