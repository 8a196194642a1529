package safefile

import "io"

// ValueReader reads a state file whose values are decoded one at a time, so
// that one value can be bounded: after Bound(n), a read past n more bytes
// fails with the reader's error, until Unbound.
type ValueReader struct {
	r     io.Reader
	err   error
	n     int64
	limit int64
}

// NewValueReader returns an unbounded ValueReader of r whose bounded reads
// fail with err.
func NewValueReader(r io.Reader, err error) *ValueReader {
	return &ValueReader{r: r, err: err, limit: -1}
}

// Bound fails reads past n more bytes.
func (b *ValueReader) Bound(n int64) { b.limit = b.n + n }

// Unbound lifts the bound.
func (b *ValueReader) Unbound() { b.limit = -1 }

func (b *ValueReader) Read(p []byte) (int, error) {
	if b.limit >= 0 {
		if b.n >= b.limit {
			return 0, b.err
		}
		p = p[:min(int64(len(p)), b.limit-b.n)]
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	return n, err
}
