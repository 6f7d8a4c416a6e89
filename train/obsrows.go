package train

import (
	"math"
	"slices"
)

// obsRows holds observation rows of size float32 values each. Self-play
// observations take few distinct values (binary planes; a count divided
// by a constant), so rows are kept as one-byte codes into a table of at
// most 256 values whenever they fit: the same values, bit for bit, in a
// quarter of the memory (a Sequence position's 9,900 inputs take 9.9 kB
// instead of 39.6 kB, which is what lets a replay window of the study's
// size fit in memory). Rows whose values do not fit are kept as float32;
// once a block holds raw rows it stays raw.
//
// The zero value is an empty block of rows of size 0; set size before
// appending. An obsRows is not safe for concurrent writes; reads
// (row, len) are safe once writing is done.
type obsRows struct {
	size  int
	table []float32 // code -> value; unused once raw != nil
	codes []uint8   // n x size codes while the block is coded
	raw   []float32 // n x size values once the block is raw (nil before)

	index  map[uint32]uint8 // value bits -> code, for appending
	from   *obsRows         // the block remap translates from (appendRows)
	remap  [256]uint8
	remapN int // codes of from.table that remap covers
}

// maxCodes is the largest table a coded block may have.
const maxCodes = 256

// isRaw reports whether the rows are kept as float32.
func (r *obsRows) isRaw() bool { return r.raw != nil }

// bytes returns the memory the rows take.
func (r *obsRows) bytes() int64 {
	return int64(len(r.codes)) + 4*int64(len(r.raw)+len(r.table))
}

// reserve makes room for n more rows (of the form the block has now).
func (r *obsRows) reserve(n int) {
	if r.raw != nil {
		r.raw = slices.Grow(r.raw, n*r.size)
	} else {
		r.codes = slices.Grow(r.codes, n*r.size)
	}
}

// row writes row i into dst (len size).
func (r *obsRows) row(i int, dst []float32) {
	if r.raw != nil {
		copy(dst, r.raw[i*r.size:(i+1)*r.size])
		return
	}
	t := r.table
	for j, c := range r.codes[i*r.size : (i+1)*r.size] {
		dst[j] = t[c]
	}
}

// code returns the code of value v, adding it to the table; ok is false
// when the table is full.
func (r *obsRows) code(v float32) (c uint8, ok bool) {
	b := math.Float32bits(v)
	if c, ok := r.index[b]; ok {
		return c, true
	}
	if len(r.table) == maxCodes {
		return 0, false
	}
	if r.index == nil {
		r.index = make(map[uint32]uint8)
	}
	c = uint8(len(r.table))
	r.table = append(r.table, v)
	r.index[b] = c
	return c, true
}

// append adds the rows of v (a multiple of size values).
func (r *obsRows) append(v []float32) {
	if r.raw != nil {
		r.raw = append(r.raw, v...)
		return
	}
	r.codes = slices.Grow(r.codes, len(v))
	var last float32
	lastC, have := uint8(0), false
	for k, x := range v {
		if have && math.Float32bits(x) == math.Float32bits(last) {
			r.codes = append(r.codes, lastC)
			continue
		}
		c, ok := r.code(x)
		if !ok {
			r.toRaw()
			r.raw = append(r.raw, v[k:]...)
			return
		}
		r.codes = append(r.codes, c)
		last, lastC, have = x, c, true
	}
}

// appendRows adds rows lo..hi-1 of src (of the same size). Coded rows
// are translated code by code when both blocks are coded, without
// decoding.
func (r *obsRows) appendRows(src *obsRows, lo, hi int) {
	if hi <= lo {
		return
	}
	if r.raw != nil || src.raw != nil {
		if r.raw == nil {
			r.toRaw()
		}
		if src.raw != nil {
			r.raw = append(r.raw, src.raw[lo*r.size:hi*r.size]...)
			return
		}
		n := len(r.raw)
		r.raw = slices.Grow(r.raw, (hi-lo)*r.size)[:n+(hi-lo)*r.size]
		for i := lo; i < hi; i++ {
			src.row(i, r.raw[n+(i-lo)*r.size:])
		}
		return
	}
	if r.from != src || r.remapN != len(src.table) {
		if r.from != src {
			r.from, r.remapN = src, 0
		}
		for ; r.remapN < len(src.table); r.remapN++ {
			c, ok := r.code(src.table[r.remapN])
			if !ok {
				r.from, r.remapN = nil, 0
				r.toRaw()
				r.appendRows(src, lo, hi)
				return
			}
			r.remap[r.remapN] = c
		}
	}
	m := &r.remap
	r.codes = slices.Grow(r.codes, (hi-lo)*r.size)
	for _, c := range src.codes[lo*r.size : hi*r.size] {
		r.codes = append(r.codes, m[c])
	}
}

// toRaw turns the block's coded rows into float32 rows.
func (r *obsRows) toRaw() {
	raw := make([]float32, len(r.codes), max(2*len(r.codes), r.size))
	for k, c := range r.codes {
		raw[k] = r.table[c]
	}
	r.raw = raw
	r.codes, r.table, r.index, r.from, r.remapN = nil, nil, nil, nil, 0
}
