package apiclient

import (
	"encoding/base64"
	"strings"
	"unicode/utf8"
)

// minPartial is the shortest run of a credential's characters that is
// taken for (part of) the credential. Shorter runs are too common in plain
// text to blank out, and too short to help guess a key of real length.
const minPartial = 8

// MinKeyLength is the length below which a key is not redacted: a key of a
// few characters (a placeholder such as "a") is no real secret, and
// blanking every occurrence of it would garble every text the API sends
// ("<redacted>nv<redacted>l<redacted>d"). It equals the shortest run
// taken for part of a longer key, for the same reason.
const MinKeyLength = minPartial

// Redactor removes a Client's credentials from text the server sent back:
// an API that echoes the Authorization header, or a proxy's error page
// quoting the request, would otherwise put them in logs, metrics and admin
// answers. It removes every form a credential can take in such text: the
// raw access key, secret key and API key, "access:secret", and the base64
// of each (standard and URL alphabets, padded or not, at each of the three
// byte alignments a credential can have inside a longer encoded string), in
// whole or in part: any run of at least 8 characters of one of these forms
// is blanked, so that a form cut short (by the server, or by a limit
// further on) cannot be decoded back to the keys.
//
// The zero Redactor removes nothing. It is safe for concurrent use.
type Redactor struct {
	// grams are the minPartial-long substrings of every form, each as
	// the integer of its 8 bytes: every text the API sends is looked up
	// at every offset, and an integer key is hashed several times faster.
	grams map[uint64]struct{}
	// filter has a bit set for the hash of every gram: almost every
	// window of a text is no gram, and a bit test costs far less than a
	// map lookup (the lookups were most of the redaction's cost).
	filter *[filterWords]uint64
}

// filterWords is the size of Redactor.filter: 65,536 bits, for some
// hundreds of grams.
const filterWords = 1 << 10

// filterBit is the bit of gram w in Redactor.filter.
func filterBit(w uint64) (word int, mask uint64) {
	h := (w * 0x9E3779B97F4A7C15) >> 48
	return int(h >> 6), 1 << (h & 63)
}

// newRedactor builds the Redactor of sets of credentials given as
// access key, secret key and API key in turn; keys shorter than
// MinKeyLength are skipped (and so are their encoded forms).
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
	}
	for _, f := range forms {
		// A key of MinKeyLength or more has no form shorter than
		// minPartial (its base64 forms, cut at both ends, keep 10).
		for i := 0; i+minPartial <= len(f); i++ {
			g := gram(f[i : i+minPartial])
			r.grams[g] = struct{}{}
			word, mask := filterBit(g)
			r.filter[word] |= mask
		}
	}
	return r
}

// gram is the integer of an 8-byte window, as Redact rolls it.
func gram(s string) uint64 {
	var w uint64
	for i := range minPartial {
		w = w<<8 | uint64(s[i])
	}
	return w
}

// encodedForms returns the base64 text that s becomes inside any encoded
// string, in both alphabets: for each alignment k (bytes before s within
// its 3-byte group), the characters that depend on s alone.
func encodedForms(s string) []string {
	var out []string
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for k := range 3 {
			e := enc.EncodeToString([]byte(strings.Repeat("\x00", k) + s))
			// The first k+1 characters (k>0) mix in the bytes before s.
			if k > 0 {
				e = e[min(len(e), k+1):]
			}
			// The last character mixes in what follows s unless s ends
			// a 3-byte group.
			if (k+len(s))%3 != 0 && len(e) > 0 {
				e = e[:len(e)-1]
			}
			out = append(out, e)
		}
	}
	return out
}

// Redact returns s with every credential form blanked out as
// "<redacted>".
func (r *Redactor) Redact(s string) string {
	if r == nil || len(r.grams) == 0 || len(s) < minPartial {
		return s
	}
	// Mark every byte covered by a window that is part of a credential
	// form, then replace each marked run once.
	var marked []bool
	var w uint64 // the window ending at end, rolled one byte at a time
	for end := 0; end < len(s); end++ {
		w = w<<8 | uint64(s[end])
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
			for j := end + 1 - minPartial; j <= end; j++ {
				marked[j] = true
			}
		}
	}
	if marked == nil {
		return s
	}
	// A window may start or end inside a multi-byte rune (keys need not
	// be ASCII): widen each run to whole runes, so that what is left
	// stays valid UTF-8.
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

// Snippet redacts data and then returns at most n bytes of it as valid
// UTF-8 text, cut at a rune boundary: the credentials are removed from the
// whole of what was read before anything is cut. truncated tells that data
// is itself the start of a longer body; its last bytes are dropped then,
// because a credential cut there would be too short to be recognised.
func (r *Redactor) Snippet(data []byte, n int, truncated bool) string {
	if truncated {
		// A credential cut at the end keeps at most minPartial-1 of its
		// characters there, too few to be recognised as one.
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
