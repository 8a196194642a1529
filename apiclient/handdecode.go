package apiclient

import (
	"io"
	"slices"
	"sync"
)

// Answers read in bulk (usage series, log pages) are decoded by hand when small: read whole, checked
// by json.Valid and walked once, not scanned twice and decoded through reflection.

const maxSmallAnswer = 64 << 10

// readSmall reads r whole when out has a hand decoder and it is under both bounds; else the decoder rereads data.
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

func decodeValid(out any, data []byte, red *Redactor, cut func()) bool {
	switch out := out.(type) {
	case *[]Series:
		return decodeSeriesList(data, out, red, cut)
	case *LogPage:
		return out.decodeValid(data)
	}
	return false
}

// scratchBuffers keeps the buffers answers are read whole into; the hand decoders copy what they keep.
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
