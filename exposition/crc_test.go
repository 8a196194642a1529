package exposition

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/clouddb/clouddb_exporter/internal/fleettest"
)

func TestCRC32Combine(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, sizes := range [][2]int{{0, 0}, {0, 5}, {5, 0}, {1, 1}, {100, 3}, {3, 100_000}, {70_000, 1 << 17}} {
		a, b := make([]byte, sizes[0]), make([]byte, sizes[1])
		for i := range a {
			a[i] = byte(rng.Uint32())
		}
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		want := crc32.ChecksumIEEE(append(append([]byte{}, a...), b...))
		if got := crc32Combine(crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(b), crcX8n(int64(len(b)))); got != want {
			t.Errorf("sizes %v: combined %08x, want %08x", sizes, got, want)
		}
	}
}

// TestPieceKeepsItsShift: a gzip form's pieces keep what combining their
// CRC takes, and their samples' sum, in 48 bytes a piece, as before either.
func TestPieceKeepsItsShift(t *testing.T) {
	s := fleettest.Synthetic("p", 10)
	var r renderer
	cf, err := r.renderChunk(&groups[0], s, formOf(formatOpenMetrics, true), nil)
	if err != nil || len(cf.pieces) == 0 {
		t.Fatalf("%d pieces, %v", len(cf.pieces), err)
	}
	for _, pc := range cf.pieces {
		if pc.shift != crcX8n(int64(pc.raw)) {
			t.Errorf("family %d: shift %08x, want %08x", pc.family, pc.shift, crcX8n(int64(pc.raw)))
		}
	}
	if n := unsafe.Sizeof(piece{}); n > 48 {
		t.Errorf("a piece takes %d bytes, want 48", n)
	}
}
