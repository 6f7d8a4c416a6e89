package nets

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/canopy-go/canopy/internal/readfile"
	"github.com/canopy-go/canopy/nets/safetensors"
)

// ConfigKey is the safetensors metadata key holding the Config as JSON.
const ConfigKey = "canopy.config"

// FormatKey and FormatVersion tag files written by this package.
const (
	FormatKey     = "canopy.format"
	FormatVersion = "canopy-net/1"
)

// Encode serialises the net as safetensors: every parameter and running
// statistic in PyTorch's layout and naming, and the config in metadata.
func (n *Net) Encode() ([]byte, error) {
	return safetensors.Encode(n.tensors(), n.metadata())
}

// Save writes the net to path atomically (see safetensors.WriteFile).
func (n *Net) Save(path string) error {
	return safetensors.WriteFile(path, n.tensors(), n.metadata())
}

func (n *Net) metadata() map[string]string {
	return map[string]string{ConfigKey: n.cfg.JSON(), FormatKey: FormatVersion}
}

// EncodeWithMetadata is Encode with extra metadata entries (string keys
// and values, stored in the safetensors header beside the config). The
// keys ConfigKey and FormatKey are reserved: giving one is an error.
func (n *Net) EncodeWithMetadata(extra map[string]string) ([]byte, error) {
	meta, err := n.withMetadata(extra)
	if err != nil {
		return nil, err
	}
	return safetensors.Encode(n.tensors(), meta)
}

// SaveWithMetadata is Save with extra metadata entries (see
// EncodeWithMetadata). The write is atomic.
func (n *Net) SaveWithMetadata(path string, extra map[string]string) error {
	meta, err := n.withMetadata(extra)
	if err != nil {
		return err
	}
	return safetensors.WriteFile(path, n.tensors(), meta)
}

func (n *Net) withMetadata(extra map[string]string) (map[string]string, error) {
	meta := n.metadata()
	for k, v := range extra {
		if _, reserved := meta[k]; reserved {
			return nil, fmt.Errorf("nets: metadata key %q is reserved (the net writes it itself)", k)
		}
		meta[k] = v
	}
	return meta, nil
}

func (n *Net) tensors() []safetensors.Tensor {
	ts := make([]safetensors.Tensor, len(n.params))
	for i, p := range n.params {
		buf := make([]float32, len(p.Data))
		p.ToFile(buf)
		ts[i] = safetensors.FromFloat32(p.Name, p.Shape, buf)
	}
	return ts
}

// MaxFileBytes bounds a weights file that Canopy reads (4 GiB, hundreds
// of times the largest network it trains): more is not a network, and
// devices (/dev/zero) and pipes are refused before reading (see
// internal/readfile).
const MaxFileBytes = 4 << 30

// Load reads a net saved by Save (or any safetensors file with a
// "canopy.config" metadata entry and matching tensors). An ONNX model
// (a .onnx path) is refused with ErrONNXFile, saying how to convert it.
func Load(path string) (*Net, error) {
	buf, err := readfile.Regular(path, MaxFileBytes)
	if err != nil {
		return nil, err
	}
	if IsONNXPath(path) {
		return nil, onnxFileError(path, "")
	}
	n, err := Decode(buf)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return n, nil
}

// ErrONNXFile is wrapped by the errors of Load, LoadWithMetadata and
// OpenNet for an ONNX model named where a Canopy network file is needed.
var ErrONNXFile = errors.New("an ONNX model, not a Canopy network file")

// IsONNXPath reports whether path names an ONNX model: by its extension,
// .onnx in any case, which is how agents, the CLI and the Python API tell
// a model from a Canopy network file.
func IsONNXPath(path string) bool { return strings.HasSuffix(strings.ToLower(path), ".onnx") }

// onnxFileError is the error for ONNX model path where a Canopy network
// is needed: what takes the model as it is, and how to convert it (for
// game, when known).
func onnxFileError(path, game string) error {
	conv := "canopy net import " + path
	if game != "" {
		conv += " --game " + game
	}
	return fmt.Errorf("network %s is %w: agents and `canopy net eval` take it as it is (az:net=%s); other commands need it converted with `%s`", path, ErrONNXFile, path, conv)
}

// Decode parses a net from safetensors bytes.
func Decode(buf []byte) (*Net, error) {
	n, _, err := DecodeWithMetadata(buf)
	return n, err
}

// LoadWithMetadata is Load that also returns the file's metadata: every
// entry, the config and format entries included. The map is the caller's.
func LoadWithMetadata(path string) (*Net, map[string]string, error) {
	buf, err := readfile.Regular(path, MaxFileBytes)
	if err != nil {
		return nil, nil, err
	}
	if IsONNXPath(path) {
		return nil, nil, onnxFileError(path, "")
	}
	n, meta, err := DecodeWithMetadata(buf)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	return n, meta, nil
}

// DecodeWithMetadata is Decode that also returns the file's metadata (see
// LoadWithMetadata).
func DecodeWithMetadata(buf []byte) (*Net, map[string]string, error) {
	f, err := safetensors.Parse(buf)
	if err != nil {
		return nil, nil, err
	}
	n, err := FromFile(f, nil)
	if err != nil {
		return nil, nil, err
	}
	meta := make(map[string]string, len(f.Metadata))
	for k, v := range f.Metadata {
		meta[k] = v
	}
	return n, meta, nil
}

// FromFile builds a net from a parsed file. With cfg nil the config comes
// from the file's metadata. Errors name the offending tensor: a missing or
// unexpected tensor, a dtype other than F32/F16/BF16, a shape that differs
// from what the config needs (both shapes given), or a NaN/Inf value.
// Tensors named "*.num_batches_tracked" (PyTorch bookkeeping) are ignored.
func FromFile(f *safetensors.File, cfg *Config) (*Net, error) {
	var c Config
	if cfg != nil {
		c = *cfg
		c.ConvChannels = append([]int(nil), c.ConvChannels...)
		if err := c.Normalize(); err != nil {
			return nil, err
		}
	} else {
		js, ok := f.Metadata[ConfigKey]
		if !ok {
			return nil, fmt.Errorf("no %q metadata: not a Canopy network file (create one with `canopy net init`)", ConfigKey)
		}
		var err error
		if c, err = ParseConfig(js); err != nil {
			return nil, err
		}
	}
	return fromFile(f, c)
}

func fromFile(f *safetensors.File, c Config) (*Net, error) {
	n := &Net{cfg: c, version: 1}
	n.build()
	want := map[string]bool{}
	for _, p := range n.params {
		want[p.Name] = true
		t, ok := f.Get(p.Name)
		if !ok {
			return nil, fmt.Errorf("tensor %q missing (config %s %s needs it)", p.Name, c.Head, shapeString(p.Shape))
		}
		if !slices.Equal(t.Shape, p.Shape) {
			return nil, fmt.Errorf("tensor %q has shape %s but the config needs %s", p.Name, shapeString(t.Shape), shapeString(p.Shape))
		}
		vals, err := t.Float32()
		if err != nil {
			return nil, err
		}
		for i, v := range vals {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return nil, fmt.Errorf("tensor %q holds %v at index %d", p.Name, v, i)
			}
		}
		if err := p.FromFile(vals); err != nil {
			return nil, err
		}
		if strings.HasSuffix(p.Name, ".running_var") {
			for i, v := range vals {
				if v < 0 {
					return nil, fmt.Errorf("tensor %q holds a negative variance %v at index %d", p.Name, v, i)
				}
			}
		}
	}
	for _, t := range f.Tensors {
		if !want[t.Name] && !strings.HasSuffix(t.Name, ".num_batches_tracked") {
			return nil, fmt.Errorf("unexpected tensor %q (not part of a %s net with this config)", t.Name, c.Head)
		}
	}
	return n, nil
}

func shapeString(s []int) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, ",") + "]"
}
