package exposition

// Most pieces are kept only compressed, so the gzip trailer's CRC is combined
// from the pieces' CRCs as zlib's crc32_combine does.

const crcPoly = 0xedb88320

var crcX2n = func() (t [32]uint32) {
	p := uint32(1) << 30 // x^1
	t[0] = p
	for n := 1; n < 32; n++ {
		p = crcMultModP(p, p)
		t[n] = p
	}
	return t
}()

// crcMultModP multiplies modulo the polynomial, in CRC-32's reflected bit
// order: a bit of a at a time, from x^0, without a branch on the bits (a
// view combines a CRC a piece, and the bits of a are as good as random).
func crcMultModP(a, b uint32) uint32 {
	var p uint32
	for i := 31; i >= 0; i-- {
		p ^= b & -(a >> i & 1)
		b = b>>1 ^ crcPoly&-(b&1)
	}
	return p
}

// crcX8n is the operator that appends n zero bytes to a CRC.
func crcX8n(n int64) uint32 {
	p := uint32(1) << 31 // x^0
	for k := 3; n != 0; n, k = n>>1, k+1 {
		if n&1 != 0 {
			p = crcMultModP(crcX2n[k&31], p)
		}
	}
	return p
}

// crc32Combine is the CRC of A then B from theirs and shiftB, crcX8n of B's
// length: kept with B's CRC, so that combining is one multiplication.
func crc32Combine(crcA, crcB, shiftB uint32) uint32 {
	return crcMultModP(shiftB, crcA) ^ crcB
}
