package apiclient

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// validJSON walks JSON text a json.Decoder already checked, for the hand decoders: it validates nothing.
type validJSON struct {
	b []byte
	i int
}

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

func (s *validJSON) key() []byte {
	k := s.value()
	s.next()
	s.i++
	return k
}

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

func unquote(q []byte) string {
	c := q[1 : len(q)-1]
	if bytes.IndexByte(c, '\\') < 0 && utf8.Valid(c) {
		if s, ok := knownText(c); ok {
			return s
		}
		return string(c)
	}
	if s, ok := unescape(c); ok {
		return s
	}
	var s string
	_ = json.Unmarshal(q, &s)
	return s
}

// unescape takes the escapes of one byte in valid UTF-8 (a log message's quotes), leaving \u escapes
// and invalid UTF-8 to encoding/json, whose reflective Unmarshal a quoted text cost before.
func unescape(c []byte) (string, bool) {
	if !utf8.Valid(c) {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(c))
	for i := 0; i < len(c); i++ {
		if c[i] != '\\' {
			b.WriteByte(c[i])
			continue
		}
		if i++; i == len(c) {
			return "", false
		}
		switch c[i] {
		case '"', '\\', '/':
			b.WriteByte(c[i])
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		default:
			return "", false
		}
	}
	return b.String(), true
}

func keyIs(q []byte, name string) bool {
	c := q[1 : len(q)-1]
	if bytes.IndexByte(c, '\\') < 0 {
		return string(c) == name || bytes.EqualFold(c, []byte(name))
	}
	return strings.EqualFold(unquote(q), name)
}

func keyExact(q []byte, name string) bool {
	c := q[1 : len(q)-1]
	if bytes.IndexByte(c, '\\') < 0 {
		return string(c) == name
	}
	return unquote(q) == name
}

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

func textOf(raw []byte) string {
	if len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	return unquote(raw)
}

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

// openList enters an array; a null is a list with nothing in it.
func (s *validJSON) openList() (null, ok bool) {
	switch s.next() {
	case 'n':
		s.value()
		return true, true
	case '[':
		s.i++
		return false, true
	}
	return false, false
}
