package safetensors

import (
	"strings"
	"testing"
)

// The data region must be exactly the tensors' bytes, back to back (as
// the reference implementation requires): bytes after the last tensor or
// between two tensors mean a corrupt or concatenated file.
func TestParseRejectsStrayBytes(t *testing.T) {
	good, err := Encode([]Tensor{FromFloat32("a", []int{2}, []float32{1, 2}), FromFloat32("b", []int{1}, []float32{3})}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(good); err != nil {
		t.Fatalf("valid file: %v", err)
	}
	for _, c := range []struct {
		name string
		buf  []byte
		want string
	}{
		{"trailing", append(append([]byte{}, good...), 0, 0, 0, 0, 1), "5 bytes after the last tensor"},
		{"twice", append(append([]byte{}, good...), good...), "after the last tensor"},
		{"gap", file(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}}`, 12), `"b" starts at byte 8`},
		{"unused", file(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}}`, 8), `"a" starts at byte 4`},
		{"empty header, data", file(`{}`, 4), "4 bytes after the last tensor"},
	} {
		_, err := Parse(c.buf)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Parse error %v, want one containing %q", c.name, err, c.want)
		}
	}
	// Zero-size tensors take no bytes anywhere.
	if _, err := Parse(file(`{"a":{"dtype":"F32","shape":[0],"data_offsets":[0,0]},"b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}`, 4)); err != nil {
		t.Errorf("zero-size tensor: %v", err)
	}
}
