package apiclient

import (
	"bytes"
	"encoding/json"
	"io"
	"reflect"
	"strings"
)

// A services list is split into elements by hand, each checked by a strict walk that accepts only what
// json.Valid does, and decoded by hand where it can: json.Decoder's scan of each element, then the
// reflective decoding's, cost most of a poll cycle. Whatever the split does not take for sure (a
// syntax error, the value bound, the list's end, the item bound, an element that is no object, over
// 64 KiB or nested deeper than 64) goes with the rest of the list to a json.Decoder placed where the
// split stopped, so that errors and bounds are json.Decoder's.

var servicesType = reflect.TypeFor[[]Service]()

// elementSplit holds the bytes read past the last element taken; the reader is read directly, the
// value bound being checked here on the same span json.Decoder counts (see valueLimit).
type elementSplit struct {
	r     io.Reader
	err   error // the reader's last error, io.EOF included
	buf   []byte
	pos   int // just past the last element taken (or the list's [)
	limit int64
}

const splitRead = 32 << 10

// An element larger than this (a service with hundreds of inline replica sets) is left to
// json.Decoder with the rest of the list, so that the split adds little to the memory of one.
const maxSplitElement = 64 << 10

// element returns the next element's bytes as json.Decoder.Decode reads them (after the comma) and
// the index just past it; false where json.Decoder must take over at pos.
func (sp *elementSplit) element(first bool) (data []byte, end int, ok bool) {
	for {
		start, st := sp.elementStart(first)
		if st == valDone {
			n, vst := skipValue(sp.buf[start:])
			if vst == valDone {
				end = start + n
				if sp.limit > 0 && int64(end-sp.pos) > sp.limit {
					return nil, 0, false
				}
				from := start
				if !first {
					from = sp.pos + bytes.IndexByte(sp.buf[sp.pos:], ',') + 1
				}
				return sp.buf[from:end], end, true
			}
			st = vst
		}
		if st == valBad || !sp.fill() {
			return nil, 0, false
		}
	}
}

// elementStart finds the { that starts the next element.
func (sp *elementSplit) elementStart(first bool) (int, int) {
	i := skipSpace(sp.buf, sp.pos)
	if !first {
		if i == len(sp.buf) {
			return 0, valShort
		}
		if sp.buf[i] != ',' {
			return 0, valBad
		}
		i = skipSpace(sp.buf, i+1)
	}
	if i == len(sp.buf) {
		return 0, valShort
	}
	if sp.buf[i] != '{' { // a list's end, or an element the split leaves to json.Decoder
		return 0, valBad
	}
	return i, valDone
}

// fill reads more, keeping the bytes from pos; false at the reader's end or error, or past a bound.
// It reads at least as much as it holds, so that checking an element again from its start after each
// fill costs a constant factor, however small the reader's pieces.
func (sp *elementSplit) fill() bool {
	if n := int64(len(sp.buf) - sp.pos); sp.err != nil || n > maxSplitElement || sp.limit > 0 && n > sp.limit {
		return false
	}
	if sp.pos > 0 {
		sp.buf = sp.buf[:copy(sp.buf, sp.buf[sp.pos:])]
		sp.pos = 0
	}
	want := max(len(sp.buf), 512)
	if cap(sp.buf)-len(sp.buf) < want {
		grown := make([]byte, len(sp.buf), max(2*cap(sp.buf), len(sp.buf)+want, splitRead))
		copy(grown, sp.buf)
		sp.buf = grown
	}
	for read := 0; read < want && sp.err == nil; {
		n, err := sp.r.Read(sp.buf[len(sp.buf):cap(sp.buf)])
		sp.buf = sp.buf[:len(sp.buf)+n]
		read += n
		sp.err = err
	}
	return true
}

// handOver places a json.Decoder where the split stopped: in a list, after pos, with vl reading what
// the split holds, then the rest. The decoder reads a synthetic [ (and an element when one was taken)
// first, outside vl, so that its state is the one the list's own decoder would be in.
func (sp *elementSplit) handOver(vl *valueLimit, first bool) *json.Decoder {
	rest := sp.r
	if sp.err != nil {
		rest = errorReader{sp.err}
	}
	vl.r = io.MultiReader(bytes.NewReader(sp.buf[sp.pos:]), rest)
	synthetic := "[{}"
	if first {
		synthetic = "["
	}
	dec := json.NewDecoder(io.MultiReader(strings.NewReader(synthetic), vl))
	vl.dec = dec
	vl.tee = elementBytes{on: true, base: int64(len(synthetic))}
	vl.reset()
	_, _ = dec.Token()
	if !first {
		var taken struct{}
		_ = dec.Decode(&taken)
	}
	return dec
}

type errorReader struct{ err error }

func (e errorReader) Read([]byte) (int, error) { return 0, e.err }

// decodeServices takes the elements the split can, then hands the rest to the reflective loop.
func decodeServices(op string, dec *json.Decoder, vl *valueLimit, drop func(FieldError), red *Redactor, opts streamOptions) (reflect.Value, *json.Decoder, error) {
	sp := &elementSplit{r: vl.r, limit: vl.limit}
	if b, ok := dec.Buffered().(*bytes.Reader); ok {
		sp.buf = make([]byte, b.Len(), b.Len()+splitRead)
		_, _ = b.Read(sp.buf)
	}
	var list []Service
	st := listState{}
	for ; ; st.i++ {
		if opts.maxItems > 0 && st.kept == opts.maxItems {
			break
		}
		data, end, ok := sp.element(st.i == 0)
		if !ok {
			break
		}
		sp.pos = end
		var svc Service
		keep, err := decodeService(data, &svc, drop, red, opts.cut, &st)
		if err != nil {
			return reflect.ValueOf(list), dec, err
		}
		if !keep {
			continue
		}
		st.kept++
		if opts.each != nil {
			opts.each(&svc)
			continue
		}
		list = append(list, svc)
	}
	st.list = reflect.ValueOf(list)
	if list == nil {
		st.list = reflect.MakeSlice(servicesType, 0, 0)
	}
	dec = sp.handOver(vl, st.i == 0)
	return decodeElements(op, dec, vl, &st, drop, red, opts)
}

// decodeService decodes one element by hand, else as json.Decoder.Decode did, leniently after an error.
func decodeService(data []byte, svc *Service, drop func(FieldError), red *Redactor, cut func(), st *listState) (bool, error) {
	s := validJSON{b: data}
	if s.service(svc) {
		svc.sanitize(red, cut)
		return true, nil
	}
	*svc = Service{}
	if err := json.Unmarshal(data, svc); err != nil {
		if drop == nil {
			return false, err
		}
		*svc = Service{}
		if !decodeResource(bytes.TrimLeft(data, " \t\r\n,"), reflect.ValueOf(svc).Elem(), drop) {
			return false, st.invalidElement(drop)
		}
	}
	sanitize(svc, red, cut)
	return true, nil
}
