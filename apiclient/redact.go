package apiclient

import (
	"encoding/base64"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// Shorter runs of a key are too common in plain text to blank out, and too short to help guess it.
const minPartial = 8

// MinKeyLength is the length below which a key is not redacted: blanking "a" would garble every text.
const MinKeyLength = minPartial

// Redactor blanks any run of 8 or more characters of a Client's keys, "access:secret", their base64
// (any alphabet, padding, alignment) or their hex in server text, in any letter case and
// percent-encoded or JSON-escaped in part or whole; safe for concurrent use, the zero one a no-op.
// Grams and text are compared in ASCII lower case, the text once its %XX and JSON escapes are decoded.
type Redactor struct {
	grams map[uint64]struct{}
	// A bit per gram hash: almost no window is a gram, and a bit test is far cheaper than a map lookup.
	filter *[filterWords]uint64
}

const filterWords = 1 << 10

func filterBit(w uint64) (word int, mask uint64) {
	h := (w * 0x9E3779B97F4A7C15) >> 48
	return int(h >> 6), 1 << (h & 63)
}

func newRedactor(keys ...string) *Redactor {
	r := &Redactor{grams: map[uint64]struct{}{}, filter: new([filterWords]uint64)}
	var raw []string
	for i, s := range keys {
		if len(s) < MinKeyLength {
			continue
		}
		raw = append(raw, s)
		if i%3 == 0 && i+1 < len(keys) && len(keys[i+1]) >= MinKeyLength {
			raw = append(raw, s+":"+keys[i+1])
		}
	}
	forms := append([]string(nil), raw...)
	for _, s := range raw {
		forms = append(forms, encodedForms(s)...)
		forms = append(forms, hex.EncodeToString([]byte(s)))
	}
	for _, f := range forms {
		// A key of MinKeyLength or more has no form shorter than minPartial (cut base64 keeps 10).
		for i := 0; i+minPartial <= len(f); i++ {
			g := gram(f[i : i+minPartial])
			r.grams[g] = struct{}{}
			word, mask := filterBit(g)
			r.filter[word] |= mask
		}
	}
	return r
}

// lower folds ASCII upper case; c-'A' wraps for bytes below 'A': one
// comparison on the hot path.
func lower(c byte) byte {
	if c-'A' < 26 {
		return c + 'a' - 'A'
	}
	return c
}

// escapesDecoded returns s with its %XX escapes and its JSON escapes of
// ASCII characters (\uXXXX, \/) decoded, and where each of its bytes
// starts in s (one more entry: len(s)).
func escapesDecoded(s string) (string, []int) {
	view := make([]byte, 0, len(s))
	at := make([]int, 0, len(s)+1)
	for i := 0; i < len(s); {
		c, n := s[i], 1
		switch {
		case c == '%' && i+2 < len(s) && hexDigit(s[i+1]) && hexDigit(s[i+2]):
			c, n = unhex(s[i+1])<<4|unhex(s[i+2]), 3
		case c == '\\' && i+5 < len(s) && s[i+1] == 'u' && s[i+2] == '0' && s[i+3] == '0' && hexDigit(s[i+4]) && hexDigit(s[i+5]) && unhex(s[i+4]) < 8:
			c, n = unhex(s[i+4])<<4|unhex(s[i+5]), 6
		case c == '\\' && i+1 < len(s) && s[i+1] == '/':
			c, n = '/', 2
		}
		view = append(view, c)
		at = append(at, i)
		i += n
	}
	return string(view), append(at, len(s))
}

func hexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= lower(c) && lower(c) <= 'f'
}

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return lower(c) - 'a' + 10
}

func gram(s string) uint64 {
	var w uint64
	for i := range minPartial {
		w = w<<8 | uint64(lower(s[i]))
	}
	return w
}

// encodedForms returns, per alignment and alphabet, the base64 characters that depend on s alone.
func encodedForms(s string) []string {
	var out []string
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for k := range 3 {
			e := enc.EncodeToString([]byte(strings.Repeat("\x00", k) + s))
			// The first k+1 characters (k>0) mix in the bytes before s.
			if k > 0 {
				e = e[min(len(e), k+1):]
			}
			// The last character mixes in what follows s unless s ends a 3-byte group.
			if (k+len(s))%3 != 0 && len(e) > 0 {
				e = e[:len(e)-1]
			}
			out = append(out, e)
		}
	}
	return out
}

// Redact returns s with every credential form blanked out as "<redacted>".
func (r *Redactor) Redact(s string) string {
	if r == nil || len(r.grams) == 0 || len(s) < minPartial {
		return s
	}
	// view is what is matched: s itself, or s with its escapes decoded.
	view, at := s, []int(nil)
	if strings.IndexByte(s, '%') >= 0 || strings.IndexByte(s, '\\') >= 0 {
		view, at = escapesDecoded(s)
	}
	var marked []bool
	var w uint64 // the window ending at end, rolled one byte at a time
	for end := 0; end < len(view); end++ {
		w = w<<8 | uint64(lower(view[end]))
		if end+1 < minPartial {
			continue
		}
		if word, mask := filterBit(w); r.filter[word]&mask == 0 {
			continue
		}
		if _, ok := r.grams[w]; ok {
			if marked == nil {
				marked = make([]bool, len(s))
			}
			from, to := end+1-minPartial, end+1
			if at != nil {
				from, to = at[from], at[to]
			}
			for j := from; j < to; j++ {
				marked[j] = true
			}
		}
	}
	if marked == nil {
		return s
	}
	// Keys need not be ASCII: widen each run to whole runes, so that what is left stays valid UTF-8.
	for i := 1; i < len(s); i++ {
		if marked[i-1] && !utf8.RuneStart(s[i]) {
			marked[i] = true
		}
	}
	for i := len(s) - 1; i > 0; i-- {
		if marked[i] && !utf8.RuneStart(s[i]) {
			marked[i-1] = true
		}
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		if !marked[i] {
			b.WriteByte(s[i])
			i++
			continue
		}
		for i < len(s) && marked[i] {
			i++
		}
		b.WriteString(redacted)
	}
	return b.String()
}

// Snippet redacts data, then cuts it to n bytes of valid UTF-8: redaction sees all that was read.
// truncated says data starts a longer body; its last bytes are dropped then.
func (r *Redactor) Snippet(data []byte, n int, truncated bool) string {
	if truncated {
		// A credential cut at the end keeps too few characters to be recognised.
		data = data[:max(0, len(data)-minPartial)]
	}
	s := r.Redact(strings.ToValidUTF8(string(data), "\uFFFD"))
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
