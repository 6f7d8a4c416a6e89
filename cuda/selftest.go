package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/canopy-go/canopy/kernels"
)

// CheckResult is the outcome of one self-test.
type CheckResult struct {
	Name       string  `json:"name"`
	OK         bool    `json:"ok"`
	Detail     string  `json:"detail,omitempty"`
	MaxAbsDiff float64 `json:"max_abs_diff,omitempty"`
	Millis     float64 `json:"ms,omitempty"`
}

// SelfTestKernels is the CUDA C++ source that SelfTest compiles with NVRTC:
// saxpy, y = a*x + y. It is exported so that an emulated device
// (cuda/fakecuda) can be built with it.
const SelfTestKernels = `
extern "C" __global__ void saxpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
    }
}
`

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

func maxAbsDiff(a, b []float32) float64 {
	m := 0.0
	for i := range a {
		d := math.Abs(float64(a[i]) - float64(b[i]))
		if math.IsNaN(d) {
			return math.Inf(1)
		}
		m = max(m, d)
	}
	return m
}

// SelfTest runs the package's GPU checks on d: synchronous and pinned
// asynchronous memcpy round trips, an NVRTC-compiled kernel with float,
// pointer and int arguments, the same kernel replayed from a CUDA graph,
// event timing, and cuBLAS SGEMM in all four transpose combinations
// against kernels.Gemm.
func SelfTest(d *Device) []CheckResult {
	var out []CheckResult
	run := func(name string, f func(c *Ctx, res *CheckResult) error) {
		res := CheckResult{Name: name}
		t0 := time.Now()
		err := d.Do(func(c *Ctx) error { return f(c, &res) })
		res.Millis = float64(time.Since(t0).Microseconds()) / 1000
		if err != nil {
			res.OK, res.Detail = false, err.Error()
		}
		out = append(out, res)
	}
	r := rand.New(rand.NewPCG(1, 2))

	run("memcpy_roundtrip", func(c *Ctx, res *CheckResult) error {
		const n = 1 << 20
		src := randSlice(r, n)
		p, err := c.Alloc(4 * n)
		if err != nil {
			return err
		}
		defer c.Free(p)
		if err := c.CopyHtoD(p, src); err != nil {
			return err
		}
		back := make([]float32, n)
		if err := c.CopyDtoH(back, p); err != nil {
			return err
		}
		// Pinned, asynchronous, on a stream, through a second buffer.
		s, err := c.NewStream()
		if err != nil {
			return err
		}
		defer c.DestroyStream(s)
		h, err := c.AllocHost(4 * n)
		if err != nil {
			return err
		}
		defer c.FreeHost(h)
		copy(h.Float32s(), src)
		q, err := c.Alloc(4 * n)
		if err != nil {
			return err
		}
		defer c.Free(q)
		if err := c.CopyHtoDAsync(q, h, 0, 4*n, s); err != nil {
			return err
		}
		// The DMA may read h until the stream is synchronised: clearing it
		// before that uploaded zeros on a real GPU (H200, 2026-11-28).
		if err := c.SyncStream(s); err != nil {
			return err
		}
		clear(h.Float32s())
		if err := c.CopyDtoHAsync(h, 0, q, 4*n, s); err != nil {
			return err
		}
		if err := c.SyncStream(s); err != nil {
			return err
		}
		res.MaxAbsDiff = max(maxAbsDiff(src, back), maxAbsDiff(src, h.Float32s()))
		res.OK = res.MaxAbsDiff == 0
		res.Detail = fmt.Sprintf("%d floats, sync and pinned async", n)
		return nil
	})

	run("nvrtc_saxpy_and_graph", func(c *Ctx, res *CheckResult) error {
		m, t, err := c.CompileForDevice("saxpy.cu", SelfTestKernels)
		if err != nil {
			return err
		}
		defer c.UnloadModule(m)
		f, err := c.Function(m, "saxpy")
		if err != nil {
			return err
		}
		const n = 100_003 // not a multiple of the block size
		x, y := randSlice(r, n), randSlice(r, n)
		px, err := c.Alloc(4 * n)
		if err != nil {
			return err
		}
		defer c.Free(px)
		py, err := c.Alloc(4 * n)
		if err != nil {
			return err
		}
		defer c.Free(py)
		if err := c.CopyHtoD(px, x); err != nil {
			return err
		}
		if err := c.CopyHtoD(py, y); err != nil {
			return err
		}
		s, err := c.NewStream()
		if err != nil {
			return err
		}
		defer c.DestroyStream(s)
		const a = float32(1.5)
		launch := func() error {
			args := c.Args().Float32(a).Ptr(px).Ptr(py).Int(n)
			return c.Launch(f, Dim3{X: Grid1D(n, 256, 1<<20)}, Dim3{X: 256}, 0, s, args)
		}
		e0, err := c.NewEvent()
		if err != nil {
			return err
		}
		defer c.DestroyEvent(e0)
		e1, err := c.NewEvent()
		if err != nil {
			return err
		}
		defer c.DestroyEvent(e1)
		if err := c.Record(e0, s); err != nil {
			return err
		}
		if err := launch(); err != nil { // y1 = a*x + y
			return err
		}
		if err := c.Record(e1, s); err != nil {
			return err
		}
		ms, err := c.ElapsedMs(e0, e1)
		if err != nil {
			return err
		}
		g, err := c.Capture(s, launch)
		if err != nil {
			return err
		}
		defer c.DestroyGraph(g)
		for range 2 { // y3 = a*x + a*x + a*x + y
			if err := c.GraphLaunch(g, s); err != nil {
				return err
			}
		}
		if err := c.SyncStream(s); err != nil {
			return err
		}
		got := make([]float32, n)
		if err := c.CopyDtoH(got, py); err != nil {
			return err
		}
		want := make([]float32, n)
		for i := range want {
			v := y[i]
			for range 3 {
				v = a*x[i] + v
			}
			want[i] = v
		}
		res.MaxAbsDiff = maxAbsDiff(got, want)
		res.OK = res.MaxAbsDiff <= 1e-5
		res.Detail = fmt.Sprintf("target %+v, 1 launch + 2 graph replays, first launch %.3f ms", t, ms)
		return nil
	})

	for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
		run(fmt.Sprintf("sgemm_transA=%v_transB=%v", tr[0], tr[1]), func(c *Ctx, res *CheckResult) error {
			diff, err := gemmCheck(c, r, tr[0], tr[1], 67, 45, 129, -1)
			res.MaxAbsDiff = diff
			res.OK = err == nil && diff <= 1e-3
			return err
		})
	}
	return out
}

// gemmCheck multiplies random matrices with padded leading dimensions on
// the GPU (Sgemm, or GemmEx with compute when compute >= 0) and with
// kernels.Gemm, and returns the largest difference.
func gemmCheck(c *Ctx, r *rand.Rand, transA, transB bool, m, n, k, compute int) (float64, error) {
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	lda, ldb, ldc := ac+3, bc+1, n+2
	a, b := randSlice(r, ar*lda), randSlice(r, br*ldb)
	cm := randSlice(r, m*ldc)
	want := append([]float32(nil), cm...)
	kernels.Gemm(transA, transB, m, n, k, 0.5, a, lda, b, ldb, 0.25, want, ldc)
	var ptrs []DevicePtr
	defer func() {
		for _, p := range ptrs {
			c.Free(p)
		}
	}()
	up := func(x []float32) (DevicePtr, error) {
		p, err := c.Alloc(4 * len(x))
		if err != nil {
			return 0, err
		}
		ptrs = append(ptrs, p)
		return p, c.CopyHtoD(p, x)
	}
	pa, err := up(a)
	if err != nil {
		return 0, err
	}
	pb, err := up(b)
	if err != nil {
		return 0, err
	}
	pc, err := up(cm)
	if err != nil {
		return 0, err
	}
	s, err := c.NewStream()
	if err != nil {
		return 0, err
	}
	defer c.DestroyStream(s)
	bl, err := c.NewBlas(s)
	if err != nil {
		return 0, err
	}
	defer bl.Destroy()
	if compute < 0 {
		err = bl.Sgemm(transA, transB, m, n, k, 0.5, pa, lda, pb, ldb, 0.25, pc, ldc)
	} else {
		err = bl.GemmEx(transA, transB, m, n, k, 0.5, pa, lda, pb, ldb, DataF32, 0.25, pc, ldc, compute)
	}
	if err != nil {
		return 0, err
	}
	if err := c.SyncStream(s); err != nil {
		return 0, err
	}
	got := make([]float32, len(cm))
	if err := c.CopyDtoH(got, pc); err != nil {
		return 0, err
	}
	// Compare only the m x n part; the padding must be untouched.
	diff := 0.0
	for i := 0; i < m; i++ {
		diff = max(diff, maxAbsDiff(got[i*ldc:i*ldc+n], want[i*ldc:i*ldc+n]))
		if pad := maxAbsDiff(got[i*ldc+n:(i+1)*ldc], cm[i*ldc+n:min((i+1)*ldc, len(cm))]); pad != 0 {
			return math.Inf(1), fmt.Errorf("cuda: GEMM wrote into the padding of row %d", i)
		}
	}
	return diff, nil
}
