package games

import "math/bits"

// SelectBit returns the index of the k-th (0-based) set bit of w; k must be
// less than the number of set bits. It is branch-free: byte-wise prefix
// population counts (at most 64 per byte, so no carries between bytes)
// find the first byte whose prefix count exceeds k, and a table gives the
// bit inside that byte. Random playouts use it to pick the k-th legal move.
func SelectBit(w uint64, k int) int {
	const l8, h8 = 0x0101010101010101, 0x8080808080808080
	c := w - w>>1&0x5555555555555555
	c = c&0x3333333333333333 + c>>2&0x3333333333333333
	c = (c + c>>4) & 0x0f0f0f0f0f0f0f0f * l8
	i := uint(bits.TrailingZeros64(((c|h8)-uint64(k+1)*l8)&h8)) &^ 7
	return int(i) + int(selectInByte[w>>i&0xff][k-int(c<<8>>i&0xff)])
}

// selectInByte[b][k] is the index of the k-th set bit of byte b.
var selectInByte = func() (t [256][8]uint8) {
	for b := range 256 {
		k := 0
		for i := range 8 {
			if b>>i&1 != 0 {
				t[b][k] = uint8(i)
				k++
			}
		}
	}
	return t
}()
