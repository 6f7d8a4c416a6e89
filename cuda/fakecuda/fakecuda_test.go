package fakecuda

import (
	"slices"
	"testing"
)

func TestKernelNamesAndHash(t *testing.T) {
	src := "extern \"C\" __global__ void a(int n) {}\n__device__ void b() {}\nextern  \"C\"  __global__  void c_2 (float* x) {}\n"
	if got := KernelNames(src); !slices.Equal(got, []string{"a", "c_2"}) {
		t.Errorf("KernelNames = %q", got)
	}
	// FNV-1a 64 test vectors; csrc/fake.h must compute the same.
	if SourceHash("") != 0xcbf29ce484222325 || SourceHash("a") != 0xaf63dc4c8601ec8c {
		t.Errorf("SourceHash: %x %x", SourceHash(""), SourceHash("a"))
	}
}
