package nets

import (
	"fmt"
	"math"
	"slices"

	"github.com/canopy-go/canopy/internal/readfile"
	"github.com/canopy-go/canopy/nets/safetensors"
)

// RecurrentFormatVersion tags recurrent weight files.
const RecurrentFormatVersion = "canopy-recurrent/1"

func (r *Recurrent) tensors() []safetensors.Tensor {
	ts := make([]safetensors.Tensor, len(r.params))
	for i, p := range r.params {
		buf := make([]float32, len(p.Data))
		p.ToFile(buf)
		ts[i] = safetensors.FromFloat32(p.Name, p.Shape, buf)
	}
	return ts
}

func (r *Recurrent) metadata(extra map[string]string) (map[string]string, error) {
	meta := map[string]string{RecurrentConfigKey: r.cfg.JSON(), FormatKey: RecurrentFormatVersion}
	for k, v := range extra {
		if _, reserved := meta[k]; reserved || k == ConfigKey {
			return nil, fmt.Errorf("nets: metadata key %q is reserved (the net writes it itself)", k)
		}
		meta[k] = v
	}
	return meta, nil
}

// Encode serialises the net as safetensors in PyTorch's layouts and
// names, with the config under RecurrentConfigKey.
func (r *Recurrent) Encode() ([]byte, error) {
	meta, _ := r.metadata(nil)
	return safetensors.Encode(r.tensors(), meta)
}

// SaveWithMetadata writes the net to path atomically with extra metadata
// entries (RecurrentConfigKey, ConfigKey and FormatKey are reserved).
func (r *Recurrent) SaveWithMetadata(path string, extra map[string]string) error {
	meta, err := r.metadata(extra)
	if err != nil {
		return err
	}
	return safetensors.WriteFile(path, r.tensors(), meta)
}

// Save writes the net to path atomically.
func (r *Recurrent) Save(path string) error { return r.SaveWithMetadata(path, nil) }

// IsRecurrentFile reports whether the safetensors bytes hold a recurrent
// net (a RecurrentConfigKey metadata entry).
func IsRecurrentFile(buf []byte) bool {
	f, err := safetensors.Parse(buf)
	if err != nil {
		return false
	}
	_, ok := f.Metadata[RecurrentConfigKey]
	return ok
}

// DecodeRecurrent parses a recurrent net and its metadata from
// safetensors bytes. Errors name the offending tensor.
func DecodeRecurrent(buf []byte) (*Recurrent, map[string]string, error) {
	f, err := safetensors.Parse(buf)
	if err != nil {
		return nil, nil, err
	}
	js, ok := f.Metadata[RecurrentConfigKey]
	if !ok {
		return nil, nil, fmt.Errorf("no %q metadata: not a recurrent Canopy network", RecurrentConfigKey)
	}
	cfg, err := ParseRecurrentConfig(js)
	if err != nil {
		return nil, nil, err
	}
	r := &Recurrent{cfg: cfg}
	r.build(0)
	want := map[string]bool{}
	for _, p := range r.params {
		want[p.Name] = true
		t, ok := f.Get(p.Name)
		if !ok {
			return nil, nil, fmt.Errorf("tensor %q missing (the recurrent config needs it)", p.Name)
		}
		if !slices.Equal(t.Shape, p.Shape) {
			return nil, nil, fmt.Errorf("tensor %q has shape %s but the config needs %s", p.Name, shapeString(t.Shape), shapeString(p.Shape))
		}
		vals, err := t.Float32()
		if err != nil {
			return nil, nil, err
		}
		for i, v := range vals {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, nil, fmt.Errorf("tensor %q holds %v at index %d", p.Name, v, i)
			}
		}
		if err := p.FromFile(vals); err != nil {
			return nil, nil, err
		}
	}
	for _, t := range f.Tensors {
		if !want[t.Name] {
			return nil, nil, fmt.Errorf("unexpected tensor %q (not part of this recurrent net)", t.Name)
		}
	}
	meta := make(map[string]string, len(f.Metadata))
	for k, v := range f.Metadata {
		meta[k] = v
	}
	return r, meta, nil
}

// LoadRecurrent reads a recurrent net saved by Save.
func LoadRecurrent(path string) (*Recurrent, map[string]string, error) {
	buf, err := readfile.Regular(path, MaxFileBytes)
	if err != nil {
		return nil, nil, err
	}
	r, meta, err := DecodeRecurrent(buf)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, meta, nil
}
