package cuda

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/canopy-go/canopy/kernels"
)

func TestErrorNames(t *testing.T) {
	// Values from cuda.h, nvrtc.h and cublas_api.h.
	cases := []struct {
		got, want string
	}{
		{CUResultName(0), "CUDA_SUCCESS"},
		{CUResultName(2), "CUDA_ERROR_OUT_OF_MEMORY"},
		{CUResultName(3), "CUDA_ERROR_NOT_INITIALIZED"},
		{CUResultName(100), "CUDA_ERROR_NO_DEVICE"},
		{CUResultName(209), "CUDA_ERROR_NO_BINARY_FOR_GPU"},
		{CUResultName(218), "CUDA_ERROR_INVALID_PTX"},
		{CUResultName(700), "CUDA_ERROR_ILLEGAL_ADDRESS"},
		{CUResultName(719), "CUDA_ERROR_LAUNCH_FAILED"},
		{CUResultName(901), "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"},
		{CUResultName(12345), "CUDA_ERROR_12345"},
		{NVRTCResultName(6), "NVRTC_ERROR_COMPILATION"},
		{NVRTCResultName(5), "NVRTC_ERROR_INVALID_OPTION"},
		{CublasStatusName(7), "CUBLAS_STATUS_INVALID_VALUE"},
		{CublasStatusName(15), "CUBLAS_STATUS_NOT_SUPPORTED"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %s, want %s", c.got, c.want)
		}
	}
	e := &Error{Call: "cuMemAlloc_v2", Code: 2, Name: "CUDA_ERROR_OUT_OF_MEMORY", Desc: "out of memory"}
	if got := e.Error(); got != "cuda: cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (out of memory)" {
		t.Errorf("Error() = %q", got)
	}
	if err := nvrtcCheck("nvrtcCompileProgram", 6); err == nil || err.Error() != "cuda: nvrtcCompileProgram: NVRTC_ERROR_COMPILATION" {
		t.Errorf("nvrtcCheck = %v", err)
	}
	if nvrtcCheck("x", 0) != nil || cublasCheck("x", 0) != nil {
		t.Error("success reported as an error")
	}
	var l Libs // no library bound: names come from the table
	if err := l.check("cuInit", 100); err == nil || err.Error() != "cuda: cuInit: CUDA_ERROR_NO_DEVICE" {
		t.Errorf("check = %v", err)
	}
}

func TestArgsMarshalling(t *testing.T) {
	a := new(Args)
	a.Ptr(0xdeadbeef00).Int32(-7).Uint32(4000000000).Float32(1.5).Int64(-1 << 40).Int(123)
	p, err := a.pointers()
	if err != nil {
		t.Fatal(err)
	}
	// Read the void** array back exactly as the driver does: entry i is a
	// pointer to argument i's bytes.
	arr := unsafe.Slice((*unsafe.Pointer)(p), a.Len())
	if got := *(*uint64)(arr[0]); got != 0xdeadbeef00 {
		t.Errorf("ptr arg = %#x", got)
	}
	if got := *(*int32)(arr[1]); got != -7 {
		t.Errorf("int32 arg = %d", got)
	}
	if got := *(*uint32)(arr[2]); got != 4000000000 {
		t.Errorf("uint32 arg = %d", got)
	}
	if got := *(*float32)(arr[3]); got != 1.5 {
		t.Errorf("float32 arg = %v", got)
	}
	if got := *(*int64)(arr[4]); got != -1<<40 {
		t.Errorf("int64 arg = %d", got)
	}
	if got := *(*int32)(arr[5]); got != 123 {
		t.Errorf("int arg = %d", got)
	}
	for i := range arr {
		if uintptr(arr[i])%8 != 0 {
			t.Errorf("arg %d not 8-byte aligned", i)
		}
	}
	// A copy points into its own storage, not the original's.
	b := *a
	bp, _ := b.pointers()
	if *(*unsafe.Pointer)(bp) == *(*unsafe.Pointer)(p) {
		t.Error("copied Args shares value storage with the original")
	}
	// Errors: too many arguments, an int that does not fit.
	c := new(Args)
	for range MaxKernelArgs + 1 {
		c.Int32(1)
	}
	if _, err := c.pointers(); err == nil {
		t.Error("too many arguments accepted")
	}
	if _, err := new(Args).Int(1 << 40).pointers(); err == nil {
		t.Error("out-of-range int accepted")
	}
	if p, err := new(Args).pointers(); p != nil || err != nil {
		t.Errorf("empty Args = %v, %v; want nil, nil", p, err)
	}
	a.Reset()
	if a.Len() != 0 {
		t.Error("Reset kept arguments")
	}
	if g := Grid1D(1000, 256, 1<<20); g != 4 {
		t.Errorf("Grid1D(1000,256) = %d", g)
	}
	if g := Grid1D(1<<40, 256, 4096); g != 4096 {
		t.Errorf("Grid1D capped = %d", g)
	}
}

func TestChooseTargetAndOptions(t *testing.T) {
	sup := []int{75, 80, 86, 87, 89, 90, 100, 120}
	cases := []struct {
		dev  int
		want Target
		ok   bool
	}{
		{90, Target{90, true}, true}, // H100/H200: CUBIN
		{100, Target{100, true}, true},
		{103, Target{100, false}, true}, // newer than NVRTC knows: PTX for the nearest older
		{121, Target{120, false}, true},
		{70, Target{}, false},
	}
	for _, c := range cases {
		got, err := ChooseTarget(c.dev, sup)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ChooseTarget(%d) = %+v, %v; want %+v ok=%v", c.dev, got, err, c.want, c.ok)
		}
	}
	if got := NVRTCOptions(Target{90, true}); got[0] != "--gpu-architecture=sm_90" {
		t.Errorf("options %q", got)
	}
	if got := NVRTCOptions(Target{90, false}); got[0] != "--gpu-architecture=compute_90" {
		t.Errorf("options %q", got)
	}
	if got := NVRTCOptions(Target{90, true}); slices.Contains(got, "--use_fast_math") {
		t.Errorf("fast math must stay off: %q", got)
	}
	// The const char* const* array reads back as the strings.
	opts := []string{"--gpu-architecture=sm_90", "--std=c++17"}
	arr, keep := cStringArray(opts)
	ptrs := unsafe.Slice((**byte)(arr), len(opts))
	for i, p := range ptrs {
		if got := goString(p); got != opts[i] {
			t.Errorf("option %d = %q, want %q", i, got, opts[i])
		}
	}
	_ = keep
	if arr, _ := cStringArray(nil); arr != nil {
		t.Error("empty option list should be a nil array")
	}
}

func TestCacheKeyAndAtomicWrite(t *testing.T) {
	base := CacheKey("net.cu", "src", Target{90, true}, 13000, [2]int{13, 0})
	if len(base) != 64 {
		t.Fatalf("key %q is not a hex SHA-256", base)
	}
	for name, k := range map[string]string{
		"source":  CacheKey("net.cu", "src2", Target{90, true}, 13000, [2]int{13, 0}),
		"name":    CacheKey("other.cu", "src", Target{90, true}, 13000, [2]int{13, 0}),
		"arch":    CacheKey("net.cu", "src", Target{89, true}, 13000, [2]int{13, 0}),
		"ptx":     CacheKey("net.cu", "src", Target{90, false}, 13000, [2]int{13, 0}),
		"driver":  CacheKey("net.cu", "src", Target{90, true}, 12080, [2]int{13, 0}),
		"nvrtc":   CacheKey("net.cu", "src", Target{90, true}, 13000, [2]int{12, 8}),
		"framing": CacheKey("net.cus", "rc", Target{90, true}, 13000, [2]int{13, 0}),
	} {
		if k == base {
			t.Errorf("changing the %s does not change the key", name)
		}
	}
	if CacheKey("net.cu", "src", Target{90, true}, 13000, [2]int{13, 0}) != base {
		t.Error("key is not deterministic")
	}

	dir := filepath.Join(t.TempDir(), "nested", "cache")
	tg := Target{90, true}
	if readCache(dir, base, tg) != nil {
		t.Fatal("empty cache returned an image")
	}
	img := []byte("\x7fELF fake cubin")
	var wg sync.WaitGroup
	for range 8 { // concurrent writers of one key
		wg.Go(func() {
			if err := writeCache(dir, base, tg, img); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if got := readCache(dir, base, tg); string(got) != string(img) {
		t.Fatalf("read back %q", got)
	}
	if readCache(dir, base, Target{90, false}) != nil {
		t.Error("PTX lookup found the CUBIN")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 || strings.HasSuffix(ents[0].Name(), ".tmp") {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("cache dir holds %q, want only the image (no temp files)", names)
	}
	if err := writeCache("", base, tg, img); err != nil {
		t.Errorf("disabled cache: %v", err)
	}
	t.Setenv("CANOPY_CUDA_CACHE", "off")
	if CacheDir() != "" {
		t.Error("CANOPY_CUDA_CACHE=off does not disable the cache")
	}
	t.Setenv("CANOPY_CUDA_CACHE", "/tmp/x")
	if CacheDir() != "/tmp/x" {
		t.Error("CANOPY_CUDA_CACHE ignored")
	}
}

// colMajorGemm is the BLAS definition (column-major): C = alpha*op(A)*op(B)
// + beta*C, element (i, j) of X at x[i+j*ldx].
func colMajorGemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for j := 0; j < n; j++ {
		for i := 0; i < m; i++ {
			var s float64
			for p := 0; p < k; p++ {
				var av, bv float32
				if transA {
					av = a[p+i*lda]
				} else {
					av = a[i+p*lda]
				}
				if transB {
					bv = b[j+p*ldb]
				} else {
					bv = b[p+j*ldb]
				}
				s += float64(av) * float64(bv)
			}
			c[i+j*ldc] = alpha*float32(s) + beta*c[i+j*ldc]
		}
	}
}

// TestMapGemm runs the cuBLAS call that MapGemm produces through a
// column-major reference and compares with the row-major kernels.Gemm.
func TestMapGemm(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, sz := range [][3]int{{1, 1, 1}, {5, 7, 3}, {17, 4, 33}, {8, 64, 9}} {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				m, n, k := sz[0], sz[1], sz[2]
				ar, ac := m, k
				if ta {
					ar, ac = k, m
				}
				br, bc := k, n
				if tb {
					br, bc = n, k
				}
				lda, ldb, ldc := ac+2, bc+1, n+3
				a, b := randSlice(r, ar*lda), randSlice(r, br*ldb)
				c0 := randSlice(r, m*ldc)
				want := slices.Clone(c0)
				kernels.Gemm(ta, tb, m, n, k, 0.75, a, lda, b, ldb, -0.5, want, ldc)

				g := MapGemm(ta, tb, m, n, k, lda, ldb, ldc)
				ops := map[string][]float32{"A": a, "B": b}
				got := slices.Clone(c0)
				colMajorGemm(g.TransA, g.TransB, g.M, g.N, g.K, 0.75, ops[g.A], g.LDA, ops[g.B], g.LDB, -0.5, got, g.LDC)
				if d := maxAbsDiff(got, want); d > 1e-4 || math.IsNaN(d) {
					t.Errorf("m=%d n=%d k=%d transA=%v transB=%v: max diff %g", m, n, k, ta, tb, d)
				}
			}
		}
	}
}
