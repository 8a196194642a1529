package apiclient

import (
	"io"
	"slices"
	"sync"
)

// Answers read in bulk (a usage read asks for every series of the fleet, a
// logs read for a page of every service) are decoded by hand when small:
// read whole, checked by json.Valid, and walked once, where the decoder
// scanned each value twice and decoded it through reflection.

// maxSmallAnswer bounds what is read whole before a hand decoder runs;
// past it the answer streams through the json.Decoder as any other.
const maxSmallAnswer = 64 << 10

// readSmall reads r to its end when out has a hand decoder and the answer
// is smaller than maxSmallAnswer and the value bound (limit, 0 for none),
// so that it cannot reach either: the decoder would then have read it
// without error. ok is false otherwise; data holds what was read, for the
// decoder to read again.
func readSmall(r io.Reader, limit int64, out any, scratch *scratchBuffers) (data []byte, ok bool) {
	switch out.(type) {
	case *[]Series, *LogPage:
	default:
		return nil, false
	}
	bound := maxSmallAnswer
	if limit > 0 {
		bound = int(min(limit, maxSmallAnswer))
	}
	data = scratch.get()
	for {
		if len(data) >= bound {
			return data, false
		}
		if len(data) == cap(data) {
			data = slices.Grow(data, min(cap(data), bound-len(data)))
		}
		n, err := r.Read(data[len(data):min(cap(data), bound)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, len(data) < bound
		}
		if err != nil {
			return data, false
		}
	}
}

// decodeValid decodes data, one JSON value, into out by hand; false when
// out has no hand decoder or data is of another shape, which the decoder
// then refuses with its own error.
func decodeValid(out any, data []byte, red *Redactor, cut func()) bool {
	switch out := out.(type) {
	case *[]Series:
		return decodeSeriesList(data, out, red, cut)
	case *LogPage:
		return out.decodeValid(data)
	}
	return false
}

// scratchBuffers keeps the buffers answers are read whole into: the hand
// decoders copy what they keep, so a buffer serves the next answer.
type scratchBuffers struct{ pool sync.Pool }

func (s *scratchBuffers) get() []byte {
	if s != nil {
		if b, ok := s.pool.Get().(*[]byte); ok {
			return (*b)[:0]
		}
	}
	return make([]byte, 0, 2<<10)
}

func (s *scratchBuffers) put(b []byte) {
	if s != nil && cap(b) <= maxSmallAnswer {
		s.pool.Put(&b)
	}
}
