package apiclient

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// decodeOptions keep what encoding/json did with the API's answers: member names matched whatever
// their case (but not their underscores: "vpcEndpoint" is not "vpc_endpoint"), the last of duplicate
// names kept and null leaving a value as it was, invalid UTF-8 replaced, unknown members ignored.
var decodeOptions = json.JoinOptions(
	json.MatchCaseInsensitiveNames(true),
	jsonv1.MatchCaseSensitiveDelimiter(true),
	jsonv1.MergeWithLegacySemantics(true),
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
)

const maxErrorBody = 64 << 10

const snippetPrefix = 4 << 10

type limitedBody struct {
	r         io.Reader
	remaining int64
	prefix    []byte // in buf, until release
	buf       *[snippetPrefix]byte
	tooLarge  bool
	readErr   error // the underlying reader's error, other than io.EOF
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.remaining <= 0 {
		var one [1]byte
		n, err := io.ReadFull(b.r, one[:])
		if n > 0 {
			b.tooLarge = true
			return 0, ErrBodyTooLarge
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

// valueLimit bounds what the decoder reads for one list element, token or run of white space: the
// decoder buffers a token, and the white space before it, whole, so one long string or a body of
// blanks would grow its buffer to the whole answer.
type valueLimit struct {
	r        io.Reader
	dec      *jsontext.Decoder
	limit    int64 // 0: no limit
	left     int64
	exceeded bool
	tee      elementBytes
	entries  []LogEntry // a log page's, see decodeFrom
}

// elementBytes keeps the bytes read since the element being decoded began, for the lenient decoding
// of one that is valid JSON but does not fit its type.
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

// valueLimits keep a decoder with its buffers (and the texts it interns) from answer to answer: most
// answers are small, and a new decoder costs more than decoding one.
var valueLimits = sync.Pool{New: func() any { return &valueLimit{dec: jsontext.NewDecoder(emptyBody{})} }}

// release lets go of the answer; a buffer grown past maxKept is not kept.
func (l *valueLimit) release() {
	const maxKept = 64 << 10
	l.dec.Reset(emptyBody{})
	tee := l.tee.buf[:0]
	if cap(tee) > maxKept || cap(l.dec.UnreadBuffer()) > maxKept || cap(l.entries) > 2*LogsPageSize {
		return
	}
	*l = valueLimit{dec: l.dec, tee: elementBytes{buf: tee}, entries: l.entries[:0]}
	valueLimits.Put(l)
}

func (l *valueLimit) reset() {
	l.left = l.limit - int64(len(l.dec.UnreadBuffer()))
}

func (l *valueLimit) Read(p []byte) (int, error) {
	if l.limit > 0 {
		if l.left <= 0 {
			l.exceeded = true
			return 0, ErrValueTooLarge
		}
		if int64(len(p)) > l.left {
			p = p[:l.left]
		}
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	l.tee.record(p[:n])
	return n, err
}

type streamOptions struct {
	maxValue int64 // see valueLimit; 0: no bound
	begin    func()
	each     func(elem any)
	maxItems int
	tooLong  func()
	cut      func()
}

// decodeStream decodes an answer; a list element by element, so that memory follows what is kept,
// not what is received, and an element that does not decode costs only itself (when drop is set).
func decodeStream(op string, r io.Reader, out any, drop func(FieldError), red *Redactor, prefix func() ([]byte, bool), opts streamOptions) error {
	vl := valueLimits.Get().(*valueLimit)
	defer vl.release()
	vl.r, vl.limit = r, opts.maxValue
	vl.dec.Reset(vl, decodeOptions)
	vl.reset()
	err := decodeValues(vl, out, drop, red, opts)
	if err == nil {
		err = expectEOF(vl)
	}
	switch {
	case vl.exceeded:
		return fmt.Errorf("apiclient: %s: %w: more than %d bytes in one list element, token or run of white space (see --api.max-value-size)", op, ErrValueTooLarge, opts.maxValue)
	case err == nil:
		return nil
	case errors.Is(err, ErrTooManyResources):
		return fmt.Errorf("apiclient: %s: %w", op, err)
	case errors.Is(err, io.EOF):
		err = io.ErrUnexpectedEOF
	}
	snippet := "<omitted: response carries a secret>"
	if data, truncated := prefix(); !secretResponses[op] {
		snippet = red.Snippet(data, 64, truncated)
	}
	return &DecodeError{Operation: op, Snippet: snippet, Err: err}
}

func decodeValues(vl *valueLimit, out any, drop func(FieldError), red *Redactor, opts streamOptions) error {
	switch out := out.(type) {
	case *[]Service:
		return decodeList(vl, out, drop, red, opts)
	case *[]ReplicaSet:
		return decodeList(vl, out, drop, red, opts)
	case *[]VPC:
		return decodeList(vl, out, drop, red, opts)
	case *[]Peering:
		return decodeList(vl, out, drop, red, opts)
	case *[]Series:
		return decodeList(vl, out, drop, red, opts)
	case *LogPage:
		return out.decodeFrom(vl.dec, vl.reset, &vl.entries)
	}
	raw, err := vl.dec.ReadValue()
	if err != nil {
		return err
	}
	if err := json.Unmarshal(raw, out, decodeOptions); err != nil {
		if _, ok := out.(resource); !ok || drop == nil || !decodeResource(raw, out, drop) {
			return err
		}
	}
	sanitize(out, red, opts.cut)
	return nil
}

// As json.Unmarshal, nothing but white space may follow the value.
func expectEOF(vl *valueLimit) error {
	vl.reset()
	switch _, err := vl.dec.ReadToken(); {
	case err == nil:
		return errors.New("invalid character after top-level value")
	case !errors.Is(err, io.EOF):
		return err
	}
	return nil
}

// A long answer fails when over half its elements were invalid: each costs a reflective walk, and a
// stream of tiny broken elements would burn the call timeout every cycle.
const minInvalidShare = 100

// decodeList decodes a list (null is an empty one) element by element, each as it comes.
func decodeList[T any](vl *valueLimit, out *[]T, drop func(FieldError), red *Redactor, opts streamOptions) error {
	dec := vl.dec
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if k := tok.Kind(); k != 'n' && k != '[' {
		return fmt.Errorf("json: cannot unmarshal %v into a list", k)
	}
	if opts.begin != nil {
		opts.begin()
	}
	list := []T{}
	if tok.Kind() == 'n' {
		*out = list
		return nil
	}
	if drop != nil { // from here on; what the decoder holds already, it has not read yet
		vl.tee = elementBytes{on: true, buf: append(vl.tee.buf[:0], dec.UnreadBuffer()...), base: dec.InputOffset()}
	}
	var kept, invalid int
	for i := 0; ; i++ {
		vl.reset()
		if dec.PeekKind() == ']' {
			break
		}
		if opts.maxItems > 0 && kept == opts.maxItems {
			if opts.tooLong != nil {
				opts.tooLong()
			}
			return fmt.Errorf("%w: more than %d in one list (see --collect.max-resources-per-list)", ErrTooManyResources, opts.maxItems)
		}
		var elem *T // each owns it; a list's is decoded in place
		if opts.each == nil {
			list = append(list, *new(T))
			elem = &list[len(list)-1]
		} else {
			elem = new(T)
		}
		if ok, err := decodeElement(vl, elem, drop); err != nil {
			return err
		} else if !ok {
			if *elem = *new(T); opts.each == nil { // nothing of it held in the list's array
				list = list[:len(list)-1]
			}
			drop(FieldError{Field: strconv.Itoa(i), Err: "not an object with a valid id"})
			if invalid++; i+1 >= minInvalidShare && 2*invalid > i+1 {
				return fmt.Errorf("%w: %d of the first %d elements", ErrMostlyInvalid, invalid, i+1)
			}
			continue
		}
		sanitize(elem, red, opts.cut)
		if kept++; opts.each != nil {
			opts.each(elem)
		}
	}
	*out = list
	_, err = dec.ReadToken() // the closing ]
	return err
}

// decodeElement decodes the next element; false, having recorded what it could not decode, for one
// left out: a valid value of the wrong type is decoded again leniently (a resource) or skipped.
func decodeElement[T any](vl *valueLimit, elem *T, drop func(FieldError)) (bool, error) {
	dec := vl.dec
	start, depth := dec.InputOffset(), dec.StackDepth()
	vl.tee.mark(start)
	err := json.UnmarshalDecode(dec, elem)
	if err == nil {
		return true, nil
	}
	if drop == nil || !errors.As(err, new(*json.SemanticError)) {
		return false, err
	}
	// The decoder stopped where the error was met: before the element, or inside it.
	err = nil
	if dec.StackDepth() == depth && dec.InputOffset() == start {
		err = dec.SkipValue()
	}
	for err == nil && dec.StackDepth() > depth {
		_, err = dec.ReadToken()
	}
	if err != nil {
		return false, err
	}
	*elem = *new(T)
	if _, ok := any(elem).(resource); !ok {
		return false, nil
	}
	return decodeResource(vl.tee.since(start, dec.InputOffset()), elem, drop), nil
}
