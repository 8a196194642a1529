package exposition

// The gzip trailer holds the CRC-32 of the whole uncompressed member, but
// the exposition keeps most of its pieces compressed only: the CRC of a
// member is combined from the CRCs of its pieces, as zlib's crc32_combine
// does, instead of being computed over bytes that are no longer held.

// crcPoly is the IEEE polynomial, reflected, as hash/crc32 uses it.
const crcPoly = 0xedb88320

// crcX2n[n] is x^(2^n) modulo the polynomial.
var crcX2n = func() (t [32]uint32) {
	p := uint32(1) << 30 // x^1
	t[0] = p
	for n := 1; n < 32; n++ {
		p = crcMultModP(p, p)
		t[n] = p
	}
	return t
}()

// crcMultModP multiplies a and b modulo the polynomial, in the reflected
// bit order of CRC-32.
func crcMultModP(a, b uint32) uint32 {
	m := uint32(1) << 31
	var p uint32
	for {
		if a&m != 0 {
			p ^= b
			if a&(m-1) == 0 {
				return p
			}
		}
		m >>= 1
		if b&1 != 0 {
			b = b>>1 ^ crcPoly
		} else {
			b >>= 1
		}
	}
}

// crcX8n returns x^(8n) modulo the polynomial: the operator that appends n
// zero bytes to a CRC.
func crcX8n(n int64) uint32 {
	p := uint32(1) << 31 // x^0
	for k := 3; n != 0; n, k = n>>1, k+1 {
		if n&1 != 0 {
			p = crcMultModP(crcX2n[k&31], p)
		}
	}
	return p
}

// crc32Combine returns the CRC-32 (IEEE) of A followed by B from the CRC of
// A, the CRC of B and the length of B.
func crc32Combine(crcA, crcB uint32, lenB int64) uint32 {
	return crcMultModP(crcX8n(lenB), crcA) ^ crcB
}
