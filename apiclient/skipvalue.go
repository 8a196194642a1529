package apiclient

// skipValue's verdicts on the bytes it is given.
const (
	valDone  = iota // a whole value, valid as json.Valid has it
	valShort        // valid so far, cut short
	valBad          // not valid, or not taken (nested deeper than maxSkipDepth)
)

const maxSkipDepth = 64

// skipValue checks the JSON value at the start of b as json.Valid does and returns its length; a
// number or literal counts as whole only once a byte follows it.
func skipValue(b []byte) (int, int) {
	var closers [maxSkipDepth]byte
	depth, i := 0, 0
	for {
		i = skipSpace(b, i)
		if i == len(b) {
			return i, valShort
		}
		var st int
		switch c := b[i]; {
		case c == '{' || c == '[':
			closer := c + 2 // } and ]
			if i = skipSpace(b, i+1); i == len(b) {
				return i, valShort
			}
			if b[i] == closer {
				i++
				break
			}
			if depth == maxSkipDepth {
				return i, valBad
			}
			closers[depth] = closer
			depth++
			if closer == '}' {
				if i, st = skipMemberKey(b, i); st != valDone {
					return i, st
				}
			}
			continue
		case c == '"':
			i, st = skipString(b, i)
		case c == '-' || c >= '0' && c <= '9':
			i, st = skipNumber(b, i)
		default:
			i, st = skipLiteral(b, i)
		}
		if st != valDone {
			return i, st
		}
		if i, st = afterValue(b, i, closers[:], &depth); st != valDone || depth == 0 {
			return i, st
		}
	}
}

// afterValue closes what a value ended and moves on to the next member or element; depth 0 is done.
func afterValue(b []byte, i int, closers []byte, depth *int) (int, int) {
	for *depth > 0 {
		if i = skipSpace(b, i); i == len(b) {
			return i, valShort
		}
		if c := b[i]; c == closers[*depth-1] {
			i++
			*depth--
			continue
		} else if c != ',' {
			return i, valBad
		}
		if closers[*depth-1] == '}' {
			return skipMemberKey(b, skipSpace(b, i+1))
		}
		return i + 1, valDone
	}
	return i, valDone
}

// skipMemberKey skips a key and its colon.
func skipMemberKey(b []byte, i int) (int, int) {
	if i == len(b) {
		return i, valShort
	}
	if b[i] != '"' {
		return i, valBad
	}
	i, st := skipString(b, i)
	if st != valDone {
		return i, st
	}
	if i = skipSpace(b, i); i == len(b) {
		return i, valShort
	}
	if b[i] != ':' {
		return i, valBad
	}
	return i + 1, valDone
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// skipString checks a string as json.Valid does: no control byte, known escapes; any other byte.
func skipString(b []byte, i int) (int, int) {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1, valDone
		case c < 0x20:
			return i, valBad
		case c == '\\':
			if i++; i == len(b) {
				return i, valShort
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				for range 4 {
					if i++; i == len(b) {
						return i, valShort
					}
					if !isHex(b[i]) {
						return i, valBad
					}
				}
			default:
				return i, valBad
			}
		}
	}
	return i, valShort
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// skipNumber checks -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?; what follows is its caller's.
func skipNumber(b []byte, i int) (int, int) {
	if b[i] == '-' {
		i++
	}
	if i == len(b) {
		return i, valShort
	}
	switch {
	case b[i] == '0':
		i++
	case b[i] >= '1' && b[i] <= '9':
		i = skipDigits(b, i)
	default:
		return i, valBad
	}
	if i < len(b) && b[i] == '.' {
		if i++; i == len(b) {
			return i, valShort
		}
		if b[i] < '0' || b[i] > '9' {
			return i, valBad
		}
		i = skipDigits(b, i)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		if i++; i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i == len(b) {
			return i, valShort
		}
		if b[i] < '0' || b[i] > '9' {
			return i, valBad
		}
		i = skipDigits(b, i)
	}
	if i == len(b) {
		return i, valShort
	}
	return i, valDone
}

func skipDigits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

func skipLiteral(b []byte, i int) (int, int) {
	for _, lit := range []string{"true", "false", "null"} {
		if b[i] != lit[0] {
			continue
		}
		n := min(len(lit), len(b)-i)
		if string(b[i:i+n]) != lit[:n] {
			return i, valBad
		}
		if n < len(lit) || i+n == len(b) {
			return i + n, valShort
		}
		return i + n, valDone
	}
	return i, valBad
}
