package selfplay

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strings"
)

// NPY writing (format version 1.0, https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html):
// the magic "\x93NUMPY", version bytes 1 0, a little-endian uint16 header
// length, then an ASCII Python dict literal padded with spaces and ended by
// '\n' so that the data starts at a multiple of 64 bytes, then the raw
// little-endian C-order data. An .npz file is a zip archive of NAME.npy
// members.

// npyHeader returns the full header for dtype descr and shape.
func npyHeader(descr string, shape []int) []byte {
	dims := make([]string, len(shape))
	for i, d := range shape {
		dims[i] = fmt.Sprint(d)
	}
	sh := strings.Join(dims, ", ")
	if len(shape) == 1 {
		sh += ","
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr, sh)
	total := 10 + len(dict) + 1
	pad := (64 - total%64) % 64
	dict += strings.Repeat(" ", pad) + "\n"
	h := make([]byte, 10, 10+len(dict))
	copy(h, "\x93NUMPY\x01\x00")
	binary.LittleEndian.PutUint16(h[8:], uint16(len(dict)))
	return append(h, dict...)
}

// npzArray is one member of an .npz archive.
type npzArray struct {
	name  string
	descr string // '<f4', '<i8', '<i4', '|u1'
	shape []int
	u8    []uint8
	f32   []float32
	i64   []int64
	i32   []int32
}

func writeNPY(w io.Writer, a npzArray) error {
	if _, err := w.Write(npyHeader(a.descr, a.shape)); err != nil {
		return err
	}
	var buf [8]byte
	bw := &chunked{w: w}
	switch a.descr {
	case "<f4":
		for _, x := range a.f32 {
			binary.LittleEndian.PutUint32(buf[:], math.Float32bits(x))
			bw.write(buf[:4])
		}
	case "<i8":
		for _, x := range a.i64 {
			binary.LittleEndian.PutUint64(buf[:], uint64(x))
			bw.write(buf[:8])
		}
	case "<i4":
		for _, x := range a.i32 {
			binary.LittleEndian.PutUint32(buf[:], uint32(x))
			bw.write(buf[:4])
		}
	case "|u1":
		bw.write(a.u8)
	default:
		return fmt.Errorf("npy: unsupported dtype %s", a.descr)
	}
	return bw.flush()
}

// chunked batches small writes.
type chunked struct {
	w   io.Writer
	buf []byte
	err error
}

func (c *chunked) write(p []byte) {
	c.buf = append(c.buf, p...)
	if len(c.buf) >= 1<<16 {
		c.flush()
	}
}

func (c *chunked) flush() error {
	if c.err == nil && len(c.buf) > 0 {
		_, c.err = c.w.Write(c.buf)
	}
	c.buf = c.buf[:0]
	return c.err
}

// encodeNPZ builds a deflate-compressed .npz archive of the arrays.
func encodeNPZ(arrays []npzArray) ([]byte, error) {
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, a := range arrays {
		f, err := zw.CreateHeader(&zip.FileHeader{Name: a.name + ".npy", Method: zip.Deflate})
		if err != nil {
			return nil, err
		}
		if err := writeNPY(f, a); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// shardArrays lays out the records as the shard's arrays: obs [n, shape...],
// policy [n, actions], legal [n, actions] (1 = legal for the mover),
// value [n], game_id [n], ply [n], root_q [n] (the search's value of
// the position for the mover, GameRecord.RootQ; left out when a record
// lacks it, so that no shard holds made-up values) and, for games of
// three or more players, values [n, players] (GameRecord.Values: every
// player's return, seat-rotated, mover first) and root_values [n,
// players] (GameRecord.RootValues; left out when a record lacks them).
// Without records it
// lists the arrays every shard has: root_q is optional, as shards written
// before it existed lack it.
func shardArrays(recs []*GameRecord, obsShape []int, actions int) []npzArray {
	n := 0
	for _, r := range recs {
		n += r.Positions()
	}
	obsN := 1
	for _, d := range obsShape {
		obsN *= d
	}
	obs := make([]float32, 0, n*obsN)
	pol := make([]float32, 0, n*actions)
	legal := make([]uint8, 0, n*actions)
	val := make([]float32, 0, n)
	ids := make([]int64, 0, n)
	ply := make([]int32, 0, n)
	rootQ := make([]float32, 0, n)
	hasQ := n > 0
	players := 0 // per-player values: every record's width, 0 when some lack them
	if n > 0 && len(recs[0].Returns) > 2 {
		players = len(recs[0].Returns)
	}
	var values, rootValues []float32
	hasRV := players > 0
	for _, r := range recs {
		if players > 0 && len(r.Values) == r.Positions()*players {
			values = append(values, r.Values...)
		} else {
			players = 0
		}
		hasRV = hasRV && len(r.RootValues) == r.Positions()*players
		rootValues = append(rootValues, r.RootValues...)
	}
	for _, r := range recs {
		hasQ = hasQ && len(r.RootQ) == r.Positions()
		rootQ = append(rootQ, r.RootQ...)
		obs = append(obs, r.Obs...)
		pol = append(pol, r.Policy...)
		legal = append(legal, r.Legal...)
		val = append(val, r.Value...)
		ply = append(ply, r.Ply...)
		for range r.Positions() {
			ids = append(ids, int64(r.ID))
		}
	}
	arrays := []npzArray{
		{name: "obs", descr: "<f4", shape: append([]int{n}, obsShape...), f32: obs},
		{name: "policy", descr: "<f4", shape: []int{n, actions}, f32: pol},
		{name: "legal", descr: "|u1", shape: []int{n, actions}, u8: legal},
		{name: "value", descr: "<f4", shape: []int{n}, f32: val},
		{name: "game_id", descr: "<i8", shape: []int{n}, i64: ids},
		{name: "ply", descr: "<i4", shape: []int{n}, i32: ply},
	}
	if hasQ {
		arrays = append(arrays, npzArray{name: "root_q", descr: "<f4", shape: []int{n}, f32: rootQ})
	}
	if players > 0 {
		arrays = append(arrays, npzArray{name: "values", descr: "<f4", shape: []int{n, players}, f32: values})
		if hasRV && hasQ {
			arrays = append(arrays, npzArray{name: "root_values", descr: "<f4", shape: []int{n, players}, f32: rootValues})
		}
	}
	return arrays
}
