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

// crcMultModP multiplies modulo the polynomial, in CRC-32's reflected bit order.
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

func crc32Combine(crcA, crcB uint32, lenB int64) uint32 {
	return crcMultModP(crcX8n(lenB), crcA) ^ crcB
}
