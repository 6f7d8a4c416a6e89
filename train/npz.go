package train

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/canopy-go/canopy/selfplay"
)

// This file reads NumPy .npy arrays and .npz archives (a zip of NAME.npy
// members, stored or deflated) as written by numpy.savez and by package
// selfplay; see https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html.
// A .npy file is the magic "\x93NUMPY", a major and minor version byte, the
// header length (little-endian uint16 in version 1, uint32 in versions 2
// and 3), an ASCII Python dict literal {'descr': ..., 'fortran_order': ...,
// 'shape': (...)} padded with spaces, then the raw data.
//
// Only what self-play shards use is accepted: little-endian float32 '<f4',
// int32 '<i4', int64 '<i8', and one-byte uint8 '|u1' or bool '|b1', in C
// order. Everything else is an error saying what was found; the reader
// never panics and checks every size against the bytes present, so a
// truncated or hostile file cannot make it allocate without bound.

// maxArrayBytes bounds one array's data (a shard holds tens of MB).
const maxArrayBytes = 16 << 30

// npyArray is one decoded array; exactly one of the value slices is set,
// according to descr.
type npyArray struct {
	name  string
	descr string // normalised: "<f4", "<i4", "<i8", "|u1"
	shape []int
	f32   []float32
	i32   []int32
	i64   []int64
	u8    []uint8
}

// readNPZ decodes every member of an .npz archive held in data, keyed by
// the member name without ".npy".
func readNPZ(data []byte) (map[string]*npyArray, error) {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, fmt.Errorf("not a readable .npz (zip) archive: %v", err)
	}
	if err := selfplay.CheckZipNames(bytes.NewReader(data), int64(len(data))); err != nil {
		return nil, err
	}
	out := map[string]*npyArray{}
	for _, f := range zr.File {
		name, ok := strings.CutSuffix(f.Name, ".npy")
		if !ok {
			continue // numpy ignores other members too
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("array %q stored twice", name)
		}
		rc, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("array %q: %v", name, err)
		}
		// What the member's stream can hold is bounded by the bytes the
		// file really has (a stored member holds at most them, deflate
		// expands them at most 1032:1), so a buffer of that size is never
		// one that only a header or the zip directory claims.
		comp := min(int64(f.CompressedSize64), int64(len(data)))
		hint := min(int64(f.UncompressedSize64), comp)
		if f.Method != zip.Store {
			hint = min(int64(f.UncompressedSize64), 1032*comp+1<<10)
		}
		a, err := readNPY(rc, hint)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("array %q: %v", name, err)
		}
		a.name = name
		out[name] = a
	}
	return out, nil
}

// readNPY decodes one .npy stream. hint is how many bytes the stream is
// known to hold at most (0 when unknown): the data buffer starts at that
// size when it is enough, and otherwise grows with the bytes present.
func readNPY(r io.Reader, hint int64) (*npyArray, error) {
	var pre [10]byte
	if _, err := io.ReadFull(r, pre[:8]); err != nil {
		return nil, fmt.Errorf("truncated .npy preamble: %v", err)
	}
	if string(pre[:6]) != "\x93NUMPY" {
		return nil, fmt.Errorf("not a .npy array (bad magic %q)", pre[:6])
	}
	var hlen int
	switch pre[6] {
	case 1:
		if _, err := io.ReadFull(r, pre[8:10]); err != nil {
			return nil, fmt.Errorf("truncated .npy preamble: %v", err)
		}
		hlen = int(binary.LittleEndian.Uint16(pre[8:10]))
	case 2, 3:
		var l [4]byte
		if _, err := io.ReadFull(r, l[:]); err != nil {
			return nil, fmt.Errorf("truncated .npy preamble: %v", err)
		}
		hlen = int(binary.LittleEndian.Uint32(l[:]))
	default:
		return nil, fmt.Errorf(".npy format version %d.%d is not supported (want 1.0, 2.0 or 3.0)", pre[6], pre[7])
	}
	if hlen > 1<<20 {
		return nil, fmt.Errorf(".npy header of %d bytes is implausibly long", hlen)
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, fmt.Errorf("truncated .npy header: %v", err)
	}
	a, err := parseNPYHeader(string(hdr))
	if err != nil {
		return nil, err
	}
	size := 1
	for _, d := range a.shape {
		hi, lo := bits.Mul64(uint64(size), uint64(d))
		if hi != 0 || lo > maxArrayBytes {
			return nil, fmt.Errorf("shape %v is too large", a.shape)
		}
		size = int(lo)
	}
	item := 4
	switch a.descr {
	case "<i8":
		item = 8
	case "|u1":
		item = 1
	}
	nbytes := size * item
	if nbytes > maxArrayBytes {
		return nil, fmt.Errorf("shape %v of %s is %d bytes, more than the %d-byte limit", a.shape, a.descr, nbytes, int64(maxArrayBytes))
	}
	// Read what the header promises and not a byte more: a short read is
	// a truncated file, extra bytes a corrupt one. The buffer grows with
	// the bytes actually present, never to a size only the header claims.
	var buf bytes.Buffer
	if hint > int64(nbytes) {
		buf.Grow(nbytes + 1) // + 1: the extra byte read that shows a corrupt file
	}
	n, err := io.Copy(&buf, io.LimitReader(r, int64(nbytes)+1))
	if err != nil {
		return nil, fmt.Errorf("reading %v %s data: %v", a.shape, a.descr, err)
	}
	if n != int64(nbytes) {
		if n < int64(nbytes) {
			return nil, fmt.Errorf("truncated: %v %s needs %d data bytes, found %d", a.shape, a.descr, nbytes, n)
		}
		return nil, fmt.Errorf("%v %s has more data than its shape holds (%d bytes expected)", a.shape, a.descr, nbytes)
	}
	raw := buf.Bytes()
	switch a.descr {
	case "<f4":
		a.f32 = make([]float32, size)
		for i := range a.f32 {
			a.f32[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case "<i4":
		a.i32 = make([]int32, size)
		for i := range a.i32 {
			a.i32[i] = int32(binary.LittleEndian.Uint32(raw[4*i:]))
		}
	case "<i8":
		a.i64 = make([]int64, size)
		for i := range a.i64 {
			a.i64[i] = int64(binary.LittleEndian.Uint64(raw[8*i:]))
		}
	case "|u1":
		a.u8 = raw
	}
	return a, nil
}

// parseNPYHeader reads the dict literal of a .npy header. It accepts the
// keys in any order with single or double quotes, and rejects a missing
// key, Fortran order and dtypes other than the supported ones.
func parseNPYHeader(h string) (*npyArray, error) {
	p := &dictParser{s: strings.TrimSpace(h)}
	fields, err := p.dict()
	if err != nil {
		return nil, fmt.Errorf("bad .npy header %q: %v", clip(h), err)
	}
	descr, ok := fields["descr"].(string)
	if !ok {
		return nil, fmt.Errorf("bad .npy header %q: no string 'descr'", clip(h))
	}
	fortran, ok := fields["fortran_order"].(bool)
	if !ok {
		return nil, fmt.Errorf("bad .npy header %q: no boolean 'fortran_order'", clip(h))
	}
	shape, ok := fields["shape"].([]int)
	if !ok {
		return nil, fmt.Errorf("bad .npy header %q: no tuple 'shape'", clip(h))
	}
	if fortran {
		return nil, fmt.Errorf("array is in Fortran order; write it in C order (numpy.ascontiguousarray)")
	}
	switch descr {
	case "<f4", "<i4", "<i8":
	case "|u1", "<u1", "u1", "|b1", "<b1", "b1":
		descr = "|u1"
	default:
		return nil, fmt.Errorf("dtype %q is not supported (want little-endian float32 '<f4', int32 '<i4', int64 '<i8' or uint8 '|u1')", descr)
	}
	return &npyArray{descr: descr, shape: shape}, nil
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "..."
	}
	return s
}

// dictParser parses the small subset of Python literals a .npy header
// uses: a dict of string keys to strings, True/False, and tuples of
// non-negative integers.
type dictParser struct {
	s string
	i int
}

var errSyntax = errors.New("syntax error")

func (p *dictParser) skip() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n') {
		p.i++
	}
}

func (p *dictParser) eat(c byte) bool {
	p.skip()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *dictParser) dict() (map[string]any, error) {
	if !p.eat('{') {
		return nil, fmt.Errorf("want '{' at offset %d", p.i)
	}
	out := map[string]any{}
	for {
		if p.eat('}') {
			break
		}
		key, err := p.str()
		if err != nil {
			return nil, err
		}
		if !p.eat(':') {
			return nil, fmt.Errorf("want ':' after key %q", key)
		}
		v, err := p.value()
		if err != nil {
			return nil, fmt.Errorf("key %q: %v", key, err)
		}
		out[key] = v
		if p.eat('}') {
			break
		}
		if !p.eat(',') {
			return nil, fmt.Errorf("want ',' or '}' at offset %d", p.i)
		}
	}
	if p.skip(); p.i != len(p.s) {
		return nil, fmt.Errorf("trailing text at offset %d", p.i)
	}
	return out, nil
}

func (p *dictParser) str() (string, error) {
	p.skip()
	if p.i >= len(p.s) || (p.s[p.i] != '\'' && p.s[p.i] != '"') {
		return "", fmt.Errorf("want a quoted string at offset %d", p.i)
	}
	q := p.s[p.i]
	end := strings.IndexByte(p.s[p.i+1:], q)
	if end < 0 {
		return "", fmt.Errorf("unterminated string at offset %d", p.i)
	}
	v := p.s[p.i+1 : p.i+1+end]
	p.i += end + 2
	return v, nil
}

func (p *dictParser) value() (any, error) {
	p.skip()
	if p.i >= len(p.s) {
		return nil, errSyntax
	}
	switch c := p.s[p.i]; {
	case c == '\'' || c == '"':
		return p.str()
	case strings.HasPrefix(p.s[p.i:], "True"):
		p.i += 4
		return true, nil
	case strings.HasPrefix(p.s[p.i:], "False"):
		p.i += 5
		return false, nil
	case c == '(':
		p.i++
		var dims []int
		for {
			if p.eat(')') {
				return append([]int{}, dims...), nil
			}
			p.skip()
			j := p.i
			for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
				j++
			}
			if j == p.i {
				return nil, fmt.Errorf("want a dimension at offset %d", p.i)
			}
			d, err := strconv.ParseInt(p.s[p.i:j], 10, 64)
			if err != nil || d > maxArrayBytes {
				return nil, fmt.Errorf("dimension %s out of range", p.s[p.i:j])
			}
			dims = append(dims, int(d))
			p.i = j
			if len(dims) > 32 {
				return nil, fmt.Errorf("more than 32 dimensions")
			}
			if p.eat(')') {
				return dims, nil
			}
			if !p.eat(',') {
				return nil, fmt.Errorf("want ',' or ')' at offset %d", p.i)
			}
		}
	}
	return nil, fmt.Errorf("unsupported value at offset %d", p.i)
}
