package exposition

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"io"
	"strconv"
	"strings"
	"sync"
)

// A deflate stream may be built from pieces compressed independently, each
// ended by a sync flush: so chunks are compressed once per change, and each
// scrape only compresses its self-metrics and writes the final block.

// cachedDeflateLevel: BestSpeed halves the CPU per change for ~7% more bytes.
const cachedDeflateLevel = flate.BestSpeed

// deflater is one flate.Writer (about 1 MB of tables) shared by the chunks' renders and the
// self-metrics: a pool of them was emptied by every collection, a new one a scrape.
type deflater struct {
	mu sync.Mutex
	fw *flate.Writer
}

// deflate appends raw to out as a stream piece ended by a sync flush.
func (d *deflater) deflate(out *bytes.Buffer, raw []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fw == nil {
		d.fw, _ = flate.NewWriter(nil, cachedDeflateLevel) // The level is valid.
	}
	d.fw.Reset(out)
	_, _ = d.fw.Write(raw)
	_ = d.fw.Flush()
}

// gzipHeader is as compress/gzip writes it: no flags, no mtime, unknown OS.
const gzipHeader = "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"

// finalBlock is an empty final block with fixed Huffman codes.
var finalBlock = []byte{0x03, 0x00}

const gzipTrailerSize = 8

func writeGzipEnd(w *bufio.Writer, v *view, self *selfPart) {
	var trailer [gzipTrailerSize]byte
	binary.LittleEndian.PutUint32(trailer[0:4], crc32Combine(v.crc, self.crc, self.shift))
	// ISIZE is the length modulo 2^32: truncation is meant.
	binary.LittleEndian.PutUint32(trailer[4:8], uint32(v.raw+len(self.raw)))
	_, _ = w.Write(self.deflated)
	_, _ = w.Write(finalBlock)
	_, _ = w.Write(trailer[:])
}

// acceptsGzip: gzip named with q > 0, or "*" with q > 0 and gzip not refused.
func acceptsGzip(header string) bool {
	gzipQ, anyQ := -1.0, -1.0
	for entry := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(entry, ";")
		q := 1.0
		for param := range strings.SplitSeq(params, ";") {
			k, v, _ := strings.Cut(param, "=")
			if strings.EqualFold(strings.TrimSpace(k), "q") {
				if parsed, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = parsed
				}
			}
		}
		switch coding = strings.TrimSpace(coding); {
		case strings.EqualFold(coding, "gzip"), strings.EqualFold(coding, "x-gzip"):
			gzipQ = max(gzipQ, q)
		case coding == "*":
			anyQ = max(anyQ, q)
		}
	}
	if gzipQ >= 0 {
		return gzipQ > 0
	}
	return anyQ > 0
}

// inflate decompresses the gzip view as it writes, holding no plain copy.
func (e *Handler) inflate(w *bufio.Writer, v *view) bool {
	src := &viewReader{parts: v.parts, skip: len(gzipHeader)}
	fr, _ := e.flateReaders.Get().(io.ReadCloser)
	if fr == nil {
		fr = flate.NewReader(src)
	} else if err := fr.(flate.Resetter).Reset(src, nil); err != nil {
		return false // Reset of the standard reader does not fail.
	}
	defer e.flateReaders.Put(fr)
	n, err := w.ReadFrom(fr)
	var corrupt flate.CorruptInputError
	if errors.As(err, &corrupt) || errors.Is(err, io.ErrUnexpectedEOF) || (err == nil && n != int64(v.raw)) {
		// The pieces were deflated here: this is a bug, not a client gone away.
		e.logger.Error("The kept exposition could not be inflated.", "err", err, "bytes", n, "want", v.raw)
	}
	return err == nil && n == int64(v.raw)
}

var finalParts = [][]byte{finalBlock}

// viewReader is an io.ByteReader so that flate reads it without a buffer of its own.
type viewReader struct {
	parts [][]byte
	skip  int // bytes of parts[0] already read, or the header's
	final bool
}

func (r *viewReader) next() []byte {
	for len(r.parts) > 0 {
		if rest := r.parts[0][r.skip:]; len(rest) > 0 {
			return rest
		}
		r.parts, r.skip = r.parts[1:], 0
	}
	if !r.final {
		r.final = true
		r.parts, r.skip = finalParts, 0
		return finalBlock
	}
	return nil
}

func (r *viewReader) Read(p []byte) (int, error) {
	b := r.next()
	if b == nil {
		return 0, io.EOF
	}
	n := copy(p, b)
	r.skip += n
	return n, nil
}

func (r *viewReader) ReadByte() (byte, error) {
	b := r.next()
	if b == nil {
		return 0, io.EOF
	}
	r.skip++
	return b[0], nil
}
