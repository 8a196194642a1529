package apiclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"sync"
)

const maxErrorBody = 64 << 10

const snippetPrefix = 4 << 10

var errTooLarge = errors.New("response body too large")

type limitedBody struct {
	r         io.Reader
	remaining int64
	prefix    []byte // in buf, until release
	buf       *[snippetPrefix]byte
	tooLarge  bool
	readErr   error // the underlying reader's error, other than io.EOF
}

func newLimitedBody(r io.Reader, limit int64) *limitedBody {
	return &limitedBody{r: r, remaining: limit}
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.remaining <= 0 {
		var one [1]byte
		n, err := io.ReadFull(b.r, one[:])
		if n > 0 {
			b.tooLarge = true
			return 0, errTooLarge
		}
		if err == io.ErrUnexpectedEOF {
			err = io.EOF
		}
		return 0, err
	}
	if int64(len(p)) > b.remaining {
		p = p[:b.remaining]
	}
	n, err := b.r.Read(p)
	b.remaining -= int64(n)
	if keep := min(n, snippetPrefix-len(b.prefix)); keep > 0 {
		if b.buf == nil {
			b.buf = prefixBuffers.Get().(*[snippetPrefix]byte)
			b.prefix = b.buf[:0]
		}
		b.prefix = append(b.prefix, p[:keep]...)
	}
	if err != nil && err != io.EOF {
		b.readErr = err
	}
	return n, err
}

// prefixBuffers: a prefix is kept for every answer, and used only for the snippet of one that fails.
var prefixBuffers = sync.Pool{New: func() any { return new([snippetPrefix]byte) }}

// release returns the prefix's buffer, once nothing reads the prefix.
func (b *limitedBody) release() {
	if b.buf != nil {
		prefixBuffers.Put(b.buf)
		b.buf, b.prefix = nil, nil
	}
}

// valueLimit bounds what a json.Decoder reads for one value: the decoder buffers a value, and white
// space, whole, so one long string or a body of blanks would grow its buffer to the whole answer.
type valueLimit struct {
	r        io.Reader
	dec      *json.Decoder
	limit    int64 // 0: no limit
	left     int64
	exceeded bool
	tee      elementBytes
}

type elementBytes struct {
	on   bool
	buf  []byte
	base int64 // the stream offset of buf[0]
}

func (e *elementBytes) record(p []byte) {
	if e.on {
		e.buf = append(e.buf, p...)
	}
}

// Bytes move down only at half the buffer, so that each moves about once.
func (e *elementBytes) mark(off int64) {
	if n := off - e.base; n > 0 && n <= int64(len(e.buf)) && 2*n >= int64(len(e.buf)) {
		e.buf = e.buf[:copy(e.buf, e.buf[n:])]
		e.base = off
	}
}

func (e *elementBytes) since(start, end int64) []byte {
	if start < e.base || end > e.base+int64(len(e.buf)) || start > end {
		return nil
	}
	return bytes.TrimLeft(e.buf[start-e.base:end-e.base], " \t\r\n,")
}

func (l *valueLimit) reset() {
	l.left = l.limit
	if b, ok := l.dec.Buffered().(interface{ Len() int }); ok {
		l.left -= int64(b.Len())
	}
}

func (l *valueLimit) Read(p []byte) (int, error) {
	if l.limit <= 0 {
		n, err := l.r.Read(p)
		l.tee.record(p[:n])
		return n, err
	}
	if l.left <= 0 {
		l.exceeded = true
		return 0, ErrValueTooLarge
	}
	if int64(len(p)) > l.left {
		p = p[:l.left]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	l.tee.record(p[:n])
	return n, err
}

// decodeStream decodes a list element by element: memory follows what is kept, not what is received.
func decodeStream(op string, r io.Reader, out any, drop func(FieldError), red *Redactor, prefix func() ([]byte, bool), opts streamOptions) error {
	vl := &valueLimit{r: r, limit: opts.maxValue}
	err := decodeValues(op, vl, out, drop, red, prefix, opts)
	if vl.exceeded {
		return fmt.Errorf("apiclient: %s: %w: more than %d bytes in one list element, token or run of white space (see --api.max-value-size)", op, ErrValueTooLarge, opts.maxValue)
	}
	return err
}

type streamOptions struct {
	maxValue int64 // see valueLimit; 0: no bound
	begin    func()
	each     func(elem any)
	maxItems int
	tooLong  func()
	cut      func()
	scratch  *scratchBuffers // nil: a buffer per answer
}

func decodeValues(op string, vl *valueLimit, out any, drop func(FieldError), red *Redactor, prefix func() ([]byte, bool), opts streamOptions) error {
	if data, ok := readSmall(vl.r, vl.limit, out, opts.scratch); data != nil {
		// Neither decoder keeps data once it returns.
		defer opts.scratch.put(data)
		if ok && json.Valid(data) && decodeValid(out, data, red, opts.cut) {
			return nil
		}
		vl.r = io.MultiReader(bytes.NewReader(data), vl.r)
	}
	dec := json.NewDecoder(vl)
	vl.dec = dec
	v := reflect.ValueOf(out).Elem()
	vl.reset()
	if s, ok := out.(streamedValue); ok {
		if err := s.decodeFrom(dec, vl.reset); err != nil {
			return decodeError(op, err, red, prefix)
		}
		return expectEOFOr(op, dec, vl, red, prefix)
	}
	if v.Kind() != reflect.Slice || !isResource(v.Type().Elem()) {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return decodeError(op, err, red, prefix)
		}
		if err := expectEOF(dec, vl); err != nil {
			return decodeError(op, err, red, prefix)
		}
		if err := decodeValue(op, raw, out, drop, red, prefix); err != nil {
			return err
		}
		sanitize(out, red, opts.cut)
		return nil
	}

	vl.tee.on = true
	tok, err := dec.Token()
	if err != nil {
		return decodeError(op, err, red, prefix)
	}
	if (tok == nil || tok == json.Delim('[')) && opts.begin != nil {
		opts.begin()
	}
	if tok == nil { // null: an empty list
		v.Set(reflect.MakeSlice(v.Type(), 0, 0))
		return expectEOFOr(op, dec, vl, red, prefix)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return decodeError(op, fmt.Errorf("json: cannot unmarshal %v into a list", tok), red, prefix)
	}
	list, dec, err := decodeResources(op, dec, vl, v.Type(), drop, red, opts)
	if err != nil {
		if errors.Is(err, ErrTooManyResources) {
			return err
		}
		return decodeError(op, err, red, prefix)
	}
	if _, err := dec.Token(); err != nil { // the closing ]
		return decodeError(op, err, red, prefix)
	}
	v.Set(list)
	return expectEOFOr(op, dec, vl, red, prefix)
}

// A long answer fails when over half its elements were invalid: each costs a reflective walk, and a
// stream of tiny broken elements would burn the call timeout every cycle.
const minInvalidShare = 100

func decodeResources(op string, dec *json.Decoder, vl *valueLimit, t reflect.Type, drop func(FieldError), red *Redactor, opts streamOptions) (reflect.Value, *json.Decoder, error) {
	if t == servicesType {
		return decodeServices(op, dec, vl, drop, red, opts)
	}
	return decodeElements(op, dec, vl, &listState{list: reflect.MakeSlice(t, 0, 0)}, drop, red, opts)
}

// listState is where a list's decoding stands: the element at i is next.
type listState struct {
	list             reflect.Value
	i, kept, invalid int
}

func (st *listState) invalidElement(drop func(FieldError)) error {
	drop(FieldError{Field: strconv.Itoa(st.i), Err: "not an object with a valid id"})
	if st.invalid++; st.i+1 >= minInvalidShare && 2*st.invalid > st.i+1 {
		return fmt.Errorf("%w: %d of the first %d elements", ErrMostlyInvalid, st.invalid, st.i+1)
	}
	return nil
}

func decodeElements(op string, dec *json.Decoder, vl *valueLimit, st *listState, drop func(FieldError), red *Redactor, opts streamOptions) (reflect.Value, *json.Decoder, error) {
	t := st.list.Type()
	for ; ; st.i++ {
		vl.reset()
		if !dec.More() {
			return st.list, dec, nil
		}
		if opts.maxItems > 0 && st.kept == opts.maxItems {
			if opts.tooLong != nil {
				opts.tooLong()
			}
			return st.list, dec, fmt.Errorf("apiclient: %s: %w: more than %d in one list (see --collect.max-resources-per-list)", op, ErrTooManyResources, opts.maxItems)
		}
		elem := reflect.New(t.Elem()).Elem()
		start := dec.InputOffset()
		vl.tee.mark(start)
		if err := dec.Decode(elem.Addr().Interface()); err != nil {
			// Only a valid value of the wrong type is decoded again, leniently; anything else broke the stream.
			raw := vl.tee.since(start, dec.InputOffset())
			if drop == nil || !json.Valid(raw) {
				return st.list, dec, err
			}
			elem.SetZero()
			if !decodeResource(raw, elem, drop) {
				if err := st.invalidElement(drop); err != nil {
					return st.list, dec, err
				}
				continue
			}
		}
		sanitize(elem.Addr().Interface(), red, opts.cut)
		st.kept++
		if opts.each != nil {
			opts.each(elem.Addr().Interface())
			continue
		}
		st.list = reflect.Append(st.list, elem)
	}
}

// streamedValue is one object holding a long list (a log page); never exported, it is not sanitized.
type streamedValue interface {
	decodeFrom(dec *json.Decoder, reset func()) error
}

func decodeList[T any](dec *json.Decoder, reset func()) ([]T, error) {
	tok, err := dec.Token()
	if err != nil || tok == nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("json: cannot unmarshal %v into a list", tok)
	}
	list := []T{}
	for {
		reset()
		if !dec.More() {
			break
		}
		var e T
		if err := dec.Decode(&e); err != nil {
			return nil, err
		}
		list = append(list, e)
	}
	_, err = dec.Token() // the closing ]
	return list, err
}

func isResource(t reflect.Type) bool {
	_, ok := reflect.New(t).Interface().(resource)
	return ok
}

func decodeValue(op string, data []byte, out any, drop func(FieldError), red *Redactor, prefix func() ([]byte, bool)) error {
	err := json.Unmarshal(data, out)
	if err == nil {
		return nil
	}
	if drop != nil && decodeLenient(data, out, drop) {
		return nil
	}
	return decodeError(op, err, red, prefix)
}

// As json.Unmarshal, nothing but white space may follow the value.
func expectEOF(dec *json.Decoder, vl *valueLimit) error {
	vl.reset()
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err == nil {
			err = errors.New("invalid character after top-level value")
		}
		return err
	}
	return nil
}

func expectEOFOr(op string, dec *json.Decoder, vl *valueLimit, red *Redactor, prefix func() ([]byte, bool)) error {
	if err := expectEOF(dec, vl); err != nil {
		return decodeError(op, err, red, prefix)
	}
	return nil
}

func decodeError(op string, err error, red *Redactor, prefix func() ([]byte, bool)) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	data, truncated := prefix()
	return &DecodeError{Operation: op, Snippet: decodeSnippet(op, data, truncated, red), Err: err}
}

func decodeBody(op string, data []byte, out any, drop func(FieldError)) error {
	return decodeStream(op, bytes.NewReader(data), out, drop, nil, func() ([]byte, bool) {
		return data[:min(len(data), snippetPrefix)], len(data) > snippetPrefix
	}, streamOptions{})
}
