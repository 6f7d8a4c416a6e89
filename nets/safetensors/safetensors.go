package safetensors

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/canopy-go/canopy/internal/atomicfile"
	"github.com/canopy-go/canopy/internal/readfile"
)

// DType names a tensor element type as spelled in the header.
type DType string

// Element types. Only F32, F16 and BF16 convert to float32; the others are
// recognised so that errors can say "wrong dtype" rather than "unknown".
const (
	F32  DType = "F32"
	F16  DType = "F16"
	BF16 DType = "BF16"
	F64  DType = "F64"
	I64  DType = "I64"
	I32  DType = "I32"
	I16  DType = "I16"
	I8   DType = "I8"
	U8   DType = "U8"
	Bool DType = "BOOL"
)

// Size returns the byte size of one element, or 0 for an unknown dtype.
func (d DType) Size() int {
	switch d {
	case F64, I64:
		return 8
	case F32, I32:
		return 4
	case F16, BF16, I16:
		return 2
	case I8, U8, Bool:
		return 1
	}
	return 0
}

// MaxHeader bounds the JSON header size Parse accepts (100 MiB, the limit
// of the reference implementation), so a corrupt length cannot make it
// allocate without bound.
const MaxHeader = 100 << 20

// MetadataKey is the reserved header key of the string-to-string metadata.
const MetadataKey = "__metadata__"

// Tensor is one named tensor. Data holds the raw little-endian bytes; its
// length is the product of Shape times DType.Size().
type Tensor struct {
	Name  string
	DType DType
	Shape []int
	Data  []byte
}

// NumElements is the product of the shape (1 for a scalar).
func (t *Tensor) NumElements() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Float32 returns the tensor's elements as float32, converting F16 and BF16.
// Other dtypes are an error naming the tensor.
func (t *Tensor) Float32() ([]float32, error) {
	n := t.NumElements()
	if t.DType.Size() == 0 || len(t.Data) != n*t.DType.Size() {
		return nil, fmt.Errorf("tensor %q: %d bytes do not hold %v elements of %s", t.Name, len(t.Data), t.Shape, t.DType)
	}
	out := make([]float32, n)
	switch t.DType {
	case F32:
		for i := range out {
			out[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
		}
	case BF16:
		for i := range out {
			out[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(t.Data[2*i:])) << 16)
		}
	case F16:
		for i := range out {
			out[i] = halfToFloat32(binary.LittleEndian.Uint16(t.Data[2*i:]))
		}
	default:
		return nil, fmt.Errorf("tensor %q has dtype %s; want F32, F16 or BF16", t.Name, t.DType)
	}
	return out, nil
}

// halfToFloat32 converts an IEEE 754 binary16 value exactly.
func halfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // Inf or NaN
		return math.Float32frombits(sign | 0x7f800000 | frac<<13)
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: value = frac * 2^-24
		v := float32(frac) * (1.0 / (1 << 24))
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

// FromFloat32 builds an F32 tensor from data (copied) with the given shape.
// It panics if the shape does not match len(data) (a programming error).
func FromFloat32(name string, shape []int, data []float32) Tensor {
	t := Tensor{Name: name, DType: F32, Shape: append([]int(nil), shape...)}
	if t.NumElements() != len(data) {
		panic(fmt.Sprintf("safetensors: tensor %q: shape %v holds %d elements, data has %d", name, shape, t.NumElements(), len(data)))
	}
	t.Data = make([]byte, 4*len(data))
	for i, v := range data {
		binary.LittleEndian.PutUint32(t.Data[4*i:], math.Float32bits(v))
	}
	return t
}

// File is a parsed safetensors file: tensors sorted by name, and metadata.
type File struct {
	Tensors  []Tensor
	Metadata map[string]string
}

// Get returns the tensor called name.
func (f *File) Get(name string) (*Tensor, bool) {
	i := sort.Search(len(f.Tensors), func(i int) bool { return f.Tensors[i].Name >= name })
	if i < len(f.Tensors) && f.Tensors[i].Name == name {
		return &f.Tensors[i], true
	}
	return nil, false
}

type headerEntry struct {
	DType       DType   `json:"dtype"`
	Shape       []int64 `json:"shape"`
	DataOffsets []int64 `json:"data_offsets"`
}

// Parse decodes a whole safetensors file held in memory. Tensor data
// aliases buf. Every inconsistency is an error, among them data bytes that
// belong to no tensor (between tensors or after the last one); Parse never
// panics.
func Parse(buf []byte) (*File, error) {
	if len(buf) < 8 {
		return nil, fmt.Errorf("truncated file: %d bytes, need at least 8 for the header length", len(buf))
	}
	hlen := binary.LittleEndian.Uint64(buf)
	if hlen > MaxHeader {
		return nil, fmt.Errorf("header length %d exceeds the %d-byte limit (corrupt or not a safetensors file)", hlen, MaxHeader)
	}
	if hlen > uint64(len(buf)-8) {
		return nil, fmt.Errorf("header length %d runs beyond the end of the file (%d bytes after the length field; truncated?)", hlen, len(buf)-8)
	}
	header := buf[8 : 8+hlen]
	data := buf[8+hlen:]
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(header))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("bad JSON header: %v", err)
	}
	if raw == nil {
		return nil, errors.New("bad JSON header: want an object, got null")
	}
	// Trailing bytes after the object may only be spaces (the format pads
	// the header with spaces to an 8-byte boundary).
	rest := header[dec.InputOffset():]
	if len(bytes.TrimRight(rest, " \t\r\n\x00")) != 0 {
		return nil, fmt.Errorf("bad JSON header: unexpected bytes after the object")
	}
	f := &File{Metadata: map[string]string{}}
	if m, ok := raw[MetadataKey]; ok {
		if err := json.Unmarshal(m, &f.Metadata); err != nil {
			return nil, fmt.Errorf("bad %s: want an object of strings: %v", MetadataKey, err)
		}
		if f.Metadata == nil {
			f.Metadata = map[string]string{}
		}
		delete(raw, MetadataKey)
	}
	type span struct {
		begin, end int64
		name       string
	}
	spans := make([]span, 0, len(raw))
	for name, msg := range raw {
		if name == "" {
			return nil, errors.New("tensor with an empty name")
		}
		var e headerEntry
		if err := json.Unmarshal(msg, &e); err != nil {
			return nil, fmt.Errorf("tensor %q: bad header entry: %v", name, err)
		}
		size := e.DType.Size()
		if size == 0 {
			return nil, fmt.Errorf("tensor %q: unknown dtype %q", name, e.DType)
		}
		if len(e.DataOffsets) != 2 {
			return nil, fmt.Errorf("tensor %q: data_offsets has %d entries, want [begin, end]", name, len(e.DataOffsets))
		}
		b, en := e.DataOffsets[0], e.DataOffsets[1]
		if b < 0 || en < b || en > int64(len(data)) {
			return nil, fmt.Errorf("tensor %q: data_offsets [%d, %d] out of range (data region has %d bytes; truncated file?)", name, b, en, len(data))
		}
		n := int64(1)
		shape := make([]int, len(e.Shape))
		for i, d := range e.Shape {
			if d < 0 {
				return nil, fmt.Errorf("tensor %q: negative dimension in shape %v", name, e.Shape)
			}
			if d > 0 && n > math.MaxInt64/16/d {
				return nil, fmt.Errorf("tensor %q: shape %v is too large", name, e.Shape)
			}
			n *= d
			shape[i] = int(d)
		}
		if n*int64(size) != en-b {
			return nil, fmt.Errorf("tensor %q: shape %v of %s needs %d bytes, data_offsets [%d, %d] give %d", name, e.Shape, e.DType, n*int64(size), b, en, en-b)
		}
		spans = append(spans, span{b, en, name})
		f.Tensors = append(f.Tensors, Tensor{Name: name, DType: e.DType, Shape: shape, Data: data[b:en:en]})
	}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].begin != spans[j].begin {
			return spans[i].begin < spans[j].begin
		}
		return spans[i].end < spans[j].end
	})
	// The tensors must tile the data region exactly, as the reference
	// implementation requires: no overlap, no gap, nothing after the last
	// one (a gap or a tail means a corrupt or concatenated file).
	var end int64
	for i, sp := range spans {
		switch {
		case i > 0 && sp.begin < spans[i-1].end:
			return nil, fmt.Errorf("tensors %q [%d, %d] and %q [%d, %d] overlap", spans[i-1].name, spans[i-1].begin, spans[i-1].end, sp.name, sp.begin, sp.end)
		case sp.begin > end:
			return nil, fmt.Errorf("tensor %q starts at byte %d of the data region, leaving bytes %d..%d unused (corrupt file?)", sp.name, sp.begin, end, sp.begin-1)
		}
		end = max(end, sp.end)
	}
	if end != int64(len(data)) {
		return nil, fmt.Errorf("%d bytes after the last tensor's data (the tensors end at byte %d of a %d-byte data region; corrupt or concatenated file?)", int64(len(data))-end, end, len(data))
	}
	sort.Slice(f.Tensors, func(i, j int) bool { return f.Tensors[i].Name < f.Tensors[j].Name })
	return f, nil
}

// MaxFileBytes bounds a file ReadFile reads (4 GiB); devices and pipes
// are refused before reading (see internal/readfile).
const MaxFileBytes = 4 << 30

// ReadFile reads and parses the regular file at path. Errors name the
// path.
func ReadFile(path string) (*File, error) {
	buf, err := readfile.Regular(path, MaxFileBytes)
	if err != nil {
		return nil, err
	}
	f, err := Parse(buf)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}

// Encode serialises tensors and metadata. Tensors are laid out in the
// order given; names must be unique and not the metadata key.
func Encode(tensors []Tensor, metadata map[string]string) ([]byte, error) {
	header := make(map[string]any, len(tensors)+1)
	if len(metadata) > 0 {
		header[MetadataKey] = metadata
	}
	var off int64
	for i := range tensors {
		t := &tensors[i]
		if t.Name == MetadataKey || t.Name == "" {
			return nil, fmt.Errorf("invalid tensor name %q", t.Name)
		}
		if _, dup := header[t.Name]; dup {
			return nil, fmt.Errorf("duplicate tensor name %q", t.Name)
		}
		if t.DType.Size() == 0 || len(t.Data) != t.NumElements()*t.DType.Size() {
			return nil, fmt.Errorf("tensor %q: %d bytes do not hold shape %v of %s", t.Name, len(t.Data), t.Shape, t.DType)
		}
		shape := t.Shape
		if shape == nil {
			shape = []int{}
		}
		header[t.Name] = map[string]any{"dtype": t.DType, "shape": shape, "data_offsets": []int64{off, off + int64(len(t.Data))}}
		off += int64(len(t.Data))
	}
	hj, err := json.Marshal(header)
	if err != nil {
		return nil, err
	}
	for len(hj)%8 != 0 {
		hj = append(hj, ' ')
	}
	out := make([]byte, 8, 8+int64(len(hj))+off)
	binary.LittleEndian.PutUint64(out, uint64(len(hj)))
	out = append(out, hj...)
	for i := range tensors {
		out = append(out, tensors[i].Data...)
	}
	return out, nil
}

// WriteFile encodes and saves atomically: it writes a temporary file in
// the target's directory, syncs it, and renames it over path, so readers
// see either the old file or the complete new one.
func WriteFile(path string, tensors []Tensor, metadata map[string]string) error {
	buf, err := Encode(tensors, metadata)
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(path, buf)
}
