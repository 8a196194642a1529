package apiclient

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// validJSON walks a JSON text that a json.Decoder has already checked, so it
// validates nothing; it serves the hand decoders of the answers read in bulk
// (usage series, log entries), where reflection was most of a call's cost.
type validJSON struct {
	b []byte
	i int
}

// next skips white space and returns the next byte, 0 at the end.
func (s *validJSON) next() byte {
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; c {
		case ' ', '\t', '\r', '\n':
		default:
			return c
		}
	}
	return 0
}

// more moves past a comma and reports whether the object or array goes on,
// moving past its end when not.
func (s *validJSON) more() bool {
	c := s.next()
	if c == ',' {
		s.i++
		c = s.next()
	}
	if c == '}' || c == ']' {
		s.i++
		return false
	}
	return true
}

// key returns a member's quoted key and moves past the colon.
func (s *validJSON) key() []byte {
	k := s.value()
	s.next()
	s.i++
	return k
}

// value returns the next value's bytes and moves past it.
func (s *validJSON) value() []byte {
	s.next()
	start := s.i
	switch s.b[s.i] {
	case '"':
		s.skipString()
	case '{', '[':
		depth := 0
		for ; s.i < len(s.b); s.i++ {
			switch s.b[s.i] {
			case '"':
				s.skipString()
				s.i--
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					s.i++
					return s.b[start:s.i]
				}
			}
		}
	default:
		for s.i < len(s.b) && !isDelim(s.b[s.i]) {
			s.i++
		}
	}
	return s.b[start:s.i]
}

func isDelim(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

// skipString moves past the string at s.i.
func (s *validJSON) skipString() {
	for s.i++; s.i < len(s.b); s.i++ {
		switch s.b[s.i] {
		case '\\':
			s.i++
		case '"':
			s.i++
			return
		}
	}
}

// unquote decodes a quoted string as encoding/json does; escapes and
// invalid UTF-8 (which it replaces) are left to it.
func unquote(q []byte) string {
	c := q[1 : len(q)-1]
	if bytes.IndexByte(c, '\\') < 0 && utf8.Valid(c) {
		if s, ok := knownText(c); ok {
			return s
		}
		return string(c)
	}
	var s string
	_ = json.Unmarshal(q, &s)
	return s
}

// keyIs reports whether the quoted key q names a field called name, which
// encoding/json matches regardless of case.
func keyIs(q []byte, name string) bool {
	c := q[1 : len(q)-1]
	if bytes.IndexByte(c, '\\') < 0 {
		return string(c) == name || bytes.EqualFold(c, []byte(name))
	}
	return strings.EqualFold(unquote(q), name)
}

// keyExact reports whether the quoted key q is name, as a switch on the
// decoded key does.
func keyExact(q []byte, name string) bool {
	c := q[1 : len(q)-1]
	if bytes.IndexByte(c, '\\') < 0 {
		return string(c) == name
	}
	return unquote(q) == name
}

// timeOf reads raw as Time.UnmarshalJSON does, the zero Time for anything
// it would refuse.
func timeOf(raw []byte) Time {
	if len(raw) == 0 || raw[0] != '"' {
		return Time{}
	}
	if c := raw[1 : len(raw)-1]; bytes.IndexByte(c, '\\') < 0 && utf8.Valid(c) {
		return parsedTime(string(c)) // on the stack: no allocation
	}
	return parsedTime(unquote(raw))
}

func parsedTime(s string) Time {
	if strings.TrimSpace(s) == "" {
		return Time{}
	}
	t, err := ParseTime(s)
	if err != nil {
		return Time{}
	}
	return Time{t}
}

// textOf reads raw as json.Unmarshal into a string does, "" for a value
// that is no string.
func textOf(raw []byte) string {
	if len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	return unquote(raw)
}

// knownText returns the texts every usage answer repeats without a copy:
// label names and values, severities.
func knownText(c []byte) (string, bool) {
	switch string(c) {
	case LabelRole:
		return LabelRole, true
	case LabelOrdinal:
		return LabelOrdinal, true
	case "primary":
		return "primary", true
	case "replica":
		return "replica", true
	case "0":
		return "0", true
	case "1":
		return "1", true
	case SeverityLog:
		return SeverityLog, true
	case SeverityInfo:
		return SeverityInfo, true
	case SeverityNotice:
		return SeverityNotice, true
	case SeverityWarning:
		return SeverityWarning, true
	case SeverityError:
		return SeverityError, true
	case SeverityFatal:
		return SeverityFatal, true
	case SeverityPanic:
		return SeverityPanic, true
	}
	return "", false
}
