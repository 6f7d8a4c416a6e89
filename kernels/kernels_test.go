package kernels

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func randSlice(r *rand.Rand, n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = r.Float32()*2 - 1
	}
	return x
}

// refGemm is the textbook triple loop in float64.
func refGemm(transA, transB bool, m, n, k int, alpha float32, a []float32, lda int, b []float32, ldb int, beta float32, c []float32, ldc int) {
	for i := range m {
		for j := range n {
			var s float64
			for p := range k {
				var av, bv float32
				if transA {
					av = a[p*lda+i]
				} else {
					av = a[i*lda+p]
				}
				if transB {
					bv = b[j*ldb+p]
				} else {
					bv = b[p*ldb+j]
				}
				s += float64(av) * float64(bv)
			}
			v := float64(alpha) * s
			if beta != 0 {
				v += float64(beta) * float64(c[i*ldc+j])
			}
			c[i*ldc+j] = float32(v)
		}
	}
}

// closeEnough compares got with want elementwise with a tolerance that grows
// with the length k of the sums (inputs are in [-1, 1]).
func closeEnough(t *testing.T, what string, got, want []float32, k int) {
	t.Helper()
	tol := 1e-5 * float64(k+4)
	for i := range want {
		g, w := float64(got[i]), float64(want[i])
		if math.IsNaN(g) || math.Abs(g-w) > tol*(1+math.Abs(w)) {
			t.Fatalf("%s: element %d = %v, want %v (tol %.2g)", what, i, g, w, tol)
		}
	}
}

type gemmCase struct {
	transA, transB bool
	m, n, k        int
	pad            int // extra leading-dimension padding
	alpha, beta    float32
}

func (c gemmCase) String() string {
	return fmt.Sprintf("tA=%v,tB=%v,m=%d,n=%d,k=%d,pad=%d,alpha=%g,beta=%g", c.transA, c.transB, c.m, c.n, c.k, c.pad, c.alpha, c.beta)
}

func gemmCases(short bool) []gemmCase {
	sizes := []int{1, 2, 3, 5, 7, 8, 9, 13, 16, 17, 31, 32, 33, 64, 65, 100}
	ks := []int{0, 1, 2, 7, 16, 33, 130}
	if short {
		sizes = []int{1, 3, 8, 13, 17, 33, 65}
		ks = []int{0, 1, 7, 33}
	}
	var cs []gemmCase
	i := 0
	for _, tA := range []bool{false, true} {
		for _, tB := range []bool{false, true} {
			for _, m := range sizes {
				for _, n := range sizes {
					k := ks[i%len(ks)]
					ab := [][2]float32{{1, 0}, {1, 1}, {-0.5, 2}, {2, -1}}[i%4]
					cs = append(cs, gemmCase{tA, tB, m, n, k, i % 3, ab[0], ab[1]})
					i++
				}
			}
		}
	}
	// Shapes of the convolutions (several K blocks and threads).
	cs = append(cs,
		gemmCase{false, false, 100, 64, 576, 0, 1, 0},
		gemmCase{false, false, 97, 70, 2100, 3, 0.5, 0.25},
	)
	if short {
		return cs
	}
	cs = append(cs,
		gemmCase{false, false, 42 * 16, 128, 1152, 0, 1, 0},
		gemmCase{true, false, 576, 64, 200, 1, 1, 1},
		gemmCase{false, true, 200, 576, 64, 2, 1, 0},
	)
	return cs
}

func implNames() []string {
	names := Available()
	for _, v := range variants {
		names = append(names, v.name)
	}
	return names
}

// use forces implementation name for the rest of the test.
func use(t testing.TB, name string) {
	t.Helper()
	restore, err := Use(name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(restore)
}

// runGemmCase checks Gemm on one case with every implementation against the
// float64 triple loop.
func runGemmCase(t *testing.T, r *rand.Rand, gc gemmCase) {
	t.Helper()
	m, n, k := gc.m, gc.n, gc.k
	ar, ac := m, k
	if gc.transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if gc.transB {
		br, bc = n, k
	}
	lda, ldb, ldc := ac+gc.pad, bc+gc.pad, n+gc.pad
	a := randSlice(r, max(ar*lda, 1))
	b := randSlice(r, max(br*ldb, 1))
	c0 := randSlice(r, m*ldc)
	if gc.beta == 0 {
		for i := range c0 {
			c0[i] = float32(math.NaN()) // must not be read
		}
	}
	want := append([]float32(nil), c0...)
	refGemm(gc.transA, gc.transB, m, n, k, gc.alpha, a, lda, b, ldb, gc.beta, want, ldc)
	c := make([]float32, len(c0))
	for _, name := range implNames() {
		restore, err := Use(name)
		if err != nil {
			t.Fatal(err)
		}
		copy(c, c0)
		Gemm(gc.transA, gc.transB, m, n, k, gc.alpha, a, lda, b, ldb, gc.beta, c, ldc)
		restore()
		what := name + " " + gc.String()
		for i := range m {
			closeEnough(t, what+fmt.Sprintf(" row %d", i), c[i*ldc:i*ldc+n], want[i*ldc:i*ldc+n], k)
			for j := n; j < ldc && i*ldc+j < len(c); j++ {
				if g, w := c[i*ldc+j], c0[i*ldc+j]; !(g == w || g != g && w != w) {
					t.Fatalf("%s: padding (%d,%d) changed to %v", what, i, j, g)
				}
			}
		}
	}
}

func TestGemm(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, gc := range gemmCases(testing.Short()) {
		runGemmCase(t, r, gc)
	}
}

// TestGemmThreads runs a problem large enough to be split over goroutines
// with several thread counts; the result must not depend on the split.
func TestGemmThreads(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	m, n, k := 700, 64, 300
	a, b := randSlice(r, m*k), randSlice(r, k*n)
	want := make([]float32, m*n)
	refGemm(false, false, m, n, k, 1, a, k, b, n, 0, want, n)
	c := make([]float32, m*n)
	for _, name := range Available() {
		use(t, name)
		for _, th := range []int{1, 2, 3, 8} {
			prev := SetThreads(th)
			clear(c)
			Gemm(false, false, m, n, k, 1, a, k, b, n, 0, c, n)
			SetThreads(prev)
			closeEnough(t, fmt.Sprintf("%s threads=%d", name, th), c, want, k)
		}
	}
}

// TestGemmConcurrent calls Gemm from several goroutines at once (run it
// with -race): the worker pool is shared, the results must stay exact.
func TestGemmConcurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	m, n, k := 300, 48, 200
	a, b := randSlice(r, m*k), randSlice(r, k*n)
	want := make([]float32, m*n)
	refGemm(false, false, m, n, k, 1, a, k, b, n, 0, want, n)
	prev := SetThreads(2)
	defer SetThreads(prev)
	const g = 4
	errs := make(chan string, g)
	for range g {
		go func() {
			c := make([]float32, m*n)
			for range 5 {
				Gemm(false, false, m, n, k, 1, a, k, b, n, 0, c, n)
				for i := range c {
					if d := math.Abs(float64(c[i] - want[i])); d > 1e-5*float64(k) {
						errs <- fmt.Sprintf("element %d = %v, want %v", i, c[i], want[i])
						return
					}
				}
			}
			errs <- ""
		}()
	}
	for range g {
		if e := <-errs; e != "" {
			t.Fatal(e)
		}
	}
}

// refBiasAct is act(A*B + bias + residual) in float64.
func refBiasAct(m, n, k int, a []float32, lda int, b []float32, ldb int, bias, res []float32, relu bool, ldc int) []float32 {
	out := make([]float32, m*ldc)
	refGemm(false, false, m, n, k, 1, a, lda, b, ldb, 0, out, ldc)
	for i := range m {
		for j := range n {
			v := out[i*ldc+j]
			if bias != nil {
				v += bias[j]
			}
			if res != nil {
				v += res[i*ldc+j]
			}
			if relu && v < 0 {
				v = 0
			}
			out[i*ldc+j] = v
		}
	}
	return out
}

func TestGemmBiasAct(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	shapes := [][3]int{{1, 1, 1}, {5, 7, 3}, {8, 32, 16}, {13, 33, 40}, {42, 64, 576}, {17, 100, 9}, {30, 20, 2100}}
	for si, sh := range shapes {
		m, n, k := sh[0], sh[1], sh[2]
		ldc := n + si%2
		lda := k + si%3
		a, b := randSlice(r, m*lda), randSlice(r, k*n)
		bias, res := randSlice(r, n), randSlice(r, m*ldc)
		for mode := range 8 {
			useBias, useRes, relu := mode&1 != 0, mode&2 != 0, mode&4 != 0
			var bs, rs []float32
			if useBias {
				bs = bias
			}
			if useRes {
				rs = res
			}
			want := refBiasAct(m, n, k, a, lda, b, n, bs, rs, relu, ldc)
			for _, name := range implNames() {
				restore, _ := Use(name)
				what := fmt.Sprintf("%s m=%d n=%d k=%d bias=%v res=%v relu=%v", name, m, n, k, useBias, useRes, relu)
				c := make([]float32, m*ldc)
				for i := range c {
					c[i] = float32(math.NaN()) // C is not read
				}
				GemmBiasAct(m, n, k, a, lda, b, n, bs, rs, relu, c, ldc)
				for i := range m {
					closeEnough(t, what, c[i*ldc:i*ldc+n], want[i*ldc:i*ldc+n], k)
				}
				if useRes {
					// In place: the residual is C itself.
					c := append([]float32(nil), res...)
					GemmBiasAct(m, n, k, a, lda, b, n, bs, c, relu, c, ldc)
					for i := range m {
						closeEnough(t, what+" in place", c[i*ldc:i*ldc+n], want[i*ldc:i*ldc+n], k)
					}
				}
				restore()
			}
		}
	}
}

// TestGemmReLUNaN: a NaN product stays NaN through the ReLU on every path.
func TestGemmReLUNaN(t *testing.T) {
	m, n, k := 16, 64, 4
	a := make([]float32, m*k)
	b := make([]float32, k*n)
	a[3*k+1] = float32(math.NaN())
	for i := range b {
		b[i] = -1
	}
	for _, name := range implNames() {
		use(t, name)
		c := make([]float32, m*n)
		GemmBiasAct(m, n, k, a, k, b, n, nil, nil, true, c, n)
		for i := range m {
			for j := range n {
				if got, isNaN := c[i*n+j], i == 3; isNaN != (got != got) || !isNaN && got != 0 {
					t.Fatalf("%s: c[%d][%d] = %v", name, i, j, got)
				}
			}
		}
	}
}

func TestGemmBadArgs(t *testing.T) {
	x := make([]float32, 16)
	cases := []struct {
		name string
		f    func()
	}{
		{"negative m", func() { Gemm(false, false, -1, 2, 2, 1, x, 2, x, 2, 0, x, 2) }},
		{"lda too small", func() { Gemm(false, false, 2, 2, 3, 1, x, 2, x, 2, 0, x, 2) }},
		{"A too short", func() { Gemm(false, false, 4, 2, 5, 1, x, 5, x, 2, 0, x, 2) }},
		{"ldb (transposed) too small", func() { Gemm(false, true, 2, 2, 3, 1, x, 3, x, 2, 0, x, 2) }},
		{"C too short", func() { Gemm(false, false, 9, 2, 1, 1, x, 1, x, 2, 0, x, 2) }},
		{"bias too short", func() { GemmBiasAct(2, 4, 1, x, 1, x, 4, x[:3], nil, false, x, 4) }},
		{"residual too short", func() { GemmBiasAct(2, 4, 1, x, 1, x, 4, nil, x[:5], false, x, 4) }},
		{"im2col dst too short", func() { Im2Col3x3(x, 1, 1, 2, 2, x) }},
		{"AddBias not a multiple", func() { AddBias(x[:5], x[:2]) }},
		{"Dot short y", func() { Dot(x[:5], x[:4]) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if e := recover(); e == nil {
					t.Fatal("no panic")
				} else if s, ok := e.(string); !ok || len(s) < 9 || s[:9] != "kernels: " {
					t.Fatalf("panic %v, want a kernels: message", e)
				}
			}()
			c.f()
		})
	}
}

// directConv3x3 is a 3x3 same convolution straight from its definition, with
// the weight layout documented in doc.go.
func directConv3x3(in []float32, batch, cin, h, w int, wt []float32, cout int) []float32 {
	out := make([]float32, batch*h*w*cout)
	for n := range batch {
		for y := range h {
			for x := range w {
				for co := range cout {
					var s float64
					for kh := range 3 {
						for kw := range 3 {
							yy, xx := y+kh-1, x+kw-1
							if yy < 0 || yy >= h || xx < 0 || xx >= w {
								continue
							}
							for ci := range cin {
								s += float64(in[((n*h+yy)*w+xx)*cin+ci]) * float64(wt[((kh*3+kw)*cin+ci)*cout+co])
							}
						}
					}
					out[((n*h+y)*w+x)*cout+co] = float32(s)
				}
			}
		}
	}
	return out
}

func TestIm2Col3x3Conv(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, sh := range [][5]int{{1, 1, 1, 1, 1}, {2, 3, 6, 7, 5}, {1, 64, 6, 7, 64}, {3, 2, 10, 10, 33}, {1, 4, 1, 5, 3}} {
		batch, cin, h, w, cout := sh[0], sh[1], sh[2], sh[3], sh[4]
		in := randSlice(r, batch*h*w*cin)
		wt := randSlice(r, 9*cin*cout)
		want := directConv3x3(in, batch, cin, h, w, wt, cout)
		cols := make([]float32, batch*h*w*9*cin)
		for i := range cols {
			cols[i] = 42 // every entry must be overwritten
		}
		Im2Col3x3(in, batch, cin, h, w, cols)
		for _, name := range implNames() {
			use(t, name)
			out := make([]float32, batch*h*w*cout)
			GemmBiasAct(batch*h*w, cout, 9*cin, cols, 9*cin, wt, cout, nil, nil, false, out, cout)
			closeEnough(t, fmt.Sprintf("%s conv %v", name, sh), out, want, 9*cin)
		}
	}
}

// TestIm2Col3x3Small checks a 1-channel 2x3 image by hand.
func TestIm2Col3x3Small(t *testing.T) {
	// Image (y rows, x columns):
	//   1 2 3
	//   4 5 6
	in := []float32{1, 2, 3, 4, 5, 6}
	cols := make([]float32, 6*9)
	Im2Col3x3(in, 1, 1, 2, 3, cols)
	want := [][]float32{
		{0, 0, 0, 0, 1, 2, 0, 4, 5}, // (0,0)
		{0, 0, 0, 1, 2, 3, 4, 5, 6}, // (0,1)
		{0, 0, 0, 2, 3, 0, 5, 6, 0}, // (0,2)
		{0, 1, 2, 0, 4, 5, 0, 0, 0}, // (1,0)
		{1, 2, 3, 4, 5, 6, 0, 0, 0}, // (1,1)
		{2, 3, 0, 5, 6, 0, 0, 0, 0}, // (1,2)
	}
	for r, row := range want {
		for j, v := range row {
			if got := cols[r*9+j]; got != v {
				t.Fatalf("row %d col %d = %v, want %v", r, j, got, v)
			}
		}
	}
}

// TestCol2Im3x3Adjoint: Col2Im3x3 is the transpose of Im2Col3x3, so
// <Im2Col(x), y> = <x, Col2Im(y)> for all x, y.
func TestCol2Im3x3Adjoint(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	batch, ch, h, w := 2, 3, 5, 4
	x := randSlice(r, batch*h*w*ch)
	y := randSlice(r, batch*h*w*9*ch)
	cx := make([]float32, len(y))
	Im2Col3x3(x, batch, ch, h, w, cx)
	ty := make([]float32, len(x))
	Col2Im3x3(y, batch, ch, h, w, ty)
	var lhs, rhs float64
	for i := range y {
		lhs += float64(cx[i]) * float64(y[i])
	}
	for i := range x {
		rhs += float64(x[i]) * float64(ty[i])
	}
	if math.Abs(lhs-rhs) > 1e-4 {
		t.Fatalf("<Im2Col x, y> = %v, <x, Col2Im y> = %v", lhs, rhs)
	}
	// Col2Im adds: a second call doubles the result.
	Col2Im3x3(y, batch, ch, h, w, ty)
	var twice float64
	for i := range x {
		twice += float64(x[i]) * float64(ty[i])
	}
	if math.Abs(twice-2*rhs) > 1e-4 {
		t.Fatalf("second Col2Im3x3 gave %v, want %v", twice, 2*rhs)
	}
}

func TestElementwise(t *testing.T) {
	x := []float32{-1, 2, -3, 4, 0, -0.5}
	ReLU(x)
	wantEq(t, "ReLU", x, []float32{0, 2, 0, 4, 0, 0})

	x = []float32{1, 2, 3, 4, 5, 6}
	AddBias(x, []float32{10, -20, 30})
	wantEq(t, "AddBias", x, []float32{11, -18, 33, 14, -15, 36})

	x = []float32{1, 2, 3, 4, 5, 6}
	AddBiasReLU(x, []float32{-2, 0})
	wantEq(t, "AddBiasReLU", x, []float32{0, 2, 1, 4, 3, 6})

	y := []float32{1, 1, 1, 1, 1, 9}
	Axpy(2, []float32{1, 2, 3, 4, 5}, y)
	wantEq(t, "Axpy", y, []float32{3, 5, 7, 9, 11, 9})

	if got := Dot([]float32{1, 2, 3, 4, 5}, []float32{5, 4, 3, 2, 1, 100}); got != 35 {
		t.Fatalf("Dot = %v, want 35", got)
	}
	if got := Dot(nil, nil); got != 0 {
		t.Fatalf("Dot(nil) = %v", got)
	}

	inf := float32(math.Inf(-1))
	p := []float32{0, float32(math.Log(3)), inf}
	if !Softmax(p) {
		t.Fatal("Softmax returned false")
	}
	if math.Abs(float64(p[0])-0.25) > 1e-6 || math.Abs(float64(p[1])-0.75) > 1e-6 || p[2] != 0 {
		t.Fatalf("Softmax = %v, want [0.25 0.75 0]", p)
	}
	big := []float32{1000, 1000}
	Softmax(big)
	wantEq(t, "Softmax large", big, []float32{0.5, 0.5})
	if Softmax([]float32{inf, inf}) || Softmax(nil) {
		t.Fatal("Softmax of all -Inf or empty returned true")
	}
}

func wantEq(t *testing.T, what string, got, want []float32) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s = %v, want %v", what, got, want)
		}
	}
}

func TestUse(t *testing.T) {
	if Available()[0] != "generic" {
		t.Fatalf("Available() = %v, want generic first", Available())
	}
	before := Current()
	restore, err := Use("generic")
	if err != nil {
		t.Fatal(err)
	}
	if Current() != "generic" {
		t.Fatalf("Current() = %q after Use(generic)", Current())
	}
	restore()
	if Current() != before {
		t.Fatalf("Current() = %q after restore, want %q", Current(), before)
	}
	if _, err := Use("sse9"); err == nil {
		t.Fatal("Use(sse9) succeeded")
	}
	if im, warn := pickDefault("generic"); im.name != "generic" || warn != "" {
		t.Fatalf("pickDefault(generic) = %s, %q", im.name, warn)
	}
	if im, warn := pickDefault("sse9"); im != impls[len(impls)-1] || warn == "" {
		t.Fatalf("pickDefault(sse9) = %s, %q; want the fastest and a warning", im.name, warn)
	}
}

// TestNoAllocs pins that the hot paths allocate nothing in steady state,
// single-threaded and split over the worker pool.
func TestNoAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless with -race (sync.Pool drops items)")
	}
	r := rand.New(rand.NewPCG(17, 18))
	m, n, k := 130, 64, 300 // large enough to use 2 threads
	a, b, c := randSlice(r, m*k), randSlice(r, k*n), make([]float32, m*n)
	bt := randSlice(r, n*k)
	bias := randSlice(r, n)
	img := randSlice(r, 4*42*16)
	cols := make([]float32, 9*len(img))
	// A tower convolution of 16 Connect Four boards: large enough to split.
	big, bigOut := randSlice(r, 16*42*64), make([]float32, 16*42*64)
	packed := PackBF16(randSlice(r, 9*64*64), 9*64, 64)
	for _, name := range Available() {
		use(t, name)
		for _, th := range []int{1, 2} {
			prev := SetThreads(th)
			checks := map[string]func(){
				"Gemm":        func() { Gemm(false, false, m, n, k, 1, a, k, b, n, 0, c, n) },
				"GemmT":       func() { Gemm(true, true, 64, 64, 100, 0.5, a, 64, bt, 100, 1, c, n) },
				"GemmBiasAct": func() { GemmBiasAct(m, n, k, a, k, b, n, bias, c, true, c, n) },
				"Im2Col3x3":   func() { Im2Col3x3(img, 4, 16, 6, 7, cols) },
				"Conv3x3":     func() { Conv3x3BiasAct(img, 4, 16, 6, 7, b, 16, bias, nil, true, c) },
				"Conv3x3BF16": func() { Conv3x3BiasActBF16(big, 16, 64, 6, 7, packed, nil, nil, true, bigOut) },
			}
			for what, f := range checks {
				f()
				// The fewest of three measurements: on a loaded machine
				// a worker the scheduler moves to another P can miss the
				// sync.Pools' per-P caches and allocate a fresh scratch
				// (the likely cause of a one-off "2 per call" of the
				// generic BF16 convolution at 2 threads, not reproduced
				// in 65 runs). An allocation on every call shows in all
				// three.
				allocs := testing.AllocsPerRun(5, f)
				for range 2 {
					allocs = min(allocs, testing.AllocsPerRun(5, f))
				}
				if allocs != 0 {
					t.Errorf("%s threads=%d: %s allocates %v per call", name, th, what, allocs)
				}
			}
			SetThreads(prev)
		}
	}
}

// FuzzGemmImpls compares every fast path with the generic one on small
// random problems.
func FuzzGemmImpls(f *testing.F) {
	f.Add(uint8(3), uint8(5), uint8(7), uint8(0), uint64(1))
	f.Add(uint8(9), uint8(33), uint8(1), uint8(3), uint64(2))
	f.Add(uint8(17), uint8(65), uint8(40), uint8(12), uint64(3))
	f.Fuzz(func(t *testing.T, m8, n8, k8, mode uint8, seed uint64) {
		m, n, k := int(m8%40)+1, int(n8%80)+1, int(k8%70)
		transA, transB := mode&1 != 0, mode&2 != 0
		pad := int(mode>>2) % 4
		alpha := []float32{1, -1.5, 0.25, 2}[mode>>4&3]
		beta := []float32{0, 1, 0.5, -2}[mode>>6&3]
		r := rand.New(rand.NewPCG(seed, 99))
		ar, ac, br, bc := m, k, k, n
		if transA {
			ar, ac = k, m
		}
		if transB {
			br, bc = n, k
		}
		lda, ldb, ldc := ac+pad, bc+pad, n+pad
		a, b, c0 := randSlice(r, max(ar*lda, 1)), randSlice(r, max(br*ldb, 1)), randSlice(r, m*ldc)
		want := append([]float32(nil), c0...)
		restore, _ := Use("generic")
		Gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, want, ldc)
		restore()
		for _, name := range implNames()[1:] {
			use(t, name)
			c := append([]float32(nil), c0...)
			Gemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
			closeEnough(t, fmt.Sprintf("%s m=%d n=%d k=%d mode=%d", name, m, n, k, mode), c, want, k)
		}
	})
}

// TestGemmTails reaches every row-tail kernel (m = 1..17 covers every
// remainder of the 6- and 8-row tiles) with full and partial column strips.
func TestGemmTails(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	for m := 1; m <= 17; m++ {
		for _, n := range []int{16, 32, 64, 70} {
			for mode := range 4 {
				runGemmCase(t, r, gemmCase{mode&1 != 0, mode&2 != 0, m, n, 9, m % 2, 1, float32(mode % 2)})
			}
		}
	}
}

// TestGemmLarge covers the large loop order (largeB): op(B) packed whole,
// several column blocks of largeNC and K blocks of kcLarge, a transposed A
// packed per row tile, row and column tails, alpha and beta, on 1 and 2
// threads; and GemmBiasAct's epilogue there (bias and residual with the
// first K block, ReLU with the last).
func TestGemmLarge(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	cases := []gemmCase{
		{false, false, 67, 600, 700, 1, 1, 0},
		{true, false, 67, 600, 700, 0, 0.5, 0.25},
		{false, true, 67, 600, 700, 2, 1, 1},
		{true, true, 67, 600, 700, 1, -1, 0.5},
		{false, false, 101, 1100, 300, 0, 1, 0},
		{true, false, 64, 1100, 300, 3, 1, 1},
	}
	for _, gc := range cases {
		if !isLarge(gc.m, gc.n, gc.k) {
			t.Fatalf("%v does not take the large path", gc)
		}
		for _, th := range []int{1, 2} {
			prev := SetThreads(th)
			runGemmCase(t, r, gc)
			SetThreads(prev)
		}
	}
	m, n, k := 70, 520, 600
	a, b := randSlice(r, m*k), randSlice(r, k*n)
	bias, res := randSlice(r, n), randSlice(r, m*n)
	want := refBiasAct(m, n, k, a, k, b, n, bias, res, true, n)
	for _, name := range implNames() {
		restore, _ := Use(name)
		c := make([]float32, m*n)
		GemmBiasAct(m, n, k, a, k, b, n, bias, res, true, c, n)
		restore()
		closeEnough(t, name+" GemmBiasAct large", c, want, k)
	}
}

// TestAxpyDotImplementations: Axpy and Dot give the same bits on every
// implementation (the SIMD loops do the portable loops' operations in
// their order) at lengths around the loops' group sizes, Axpy the
// rounded y + alpha*x of each element, Dot the float64 sum to rounding.
func TestAxpyDotImplementations(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, n := range []int{0, 1, 5, 31, 32, 33, 63, 64, 65, 127, 128, 200, 1000, 4099} {
		x, y0 := randSlice(r, n), randSlice(r, n+3)
		const alpha = float32(-0.37)
		var refY []float32
		var refDot float32
		for _, name := range Available() {
			restore, err := Use(name)
			if err != nil {
				t.Fatal(err)
			}
			y := append([]float32(nil), y0...)
			Axpy(alpha, x, y)
			d := Dot(x, y0)
			restore()
			for i := range n {
				if want := y0[i] + float32(alpha*x[i]); y[i] != want {
					t.Fatalf("%s: Axpy n=%d element %d = %v, want %v", name, n, i, y[i], want)
				}
			}
			for i := n; i < len(y); i++ {
				if y[i] != y0[i] {
					t.Fatalf("%s: Axpy n=%d wrote element %d past x", name, n, i)
				}
			}
			var s, abs float64
			for i := range n {
				s += float64(x[i]) * float64(y0[i])
				abs += math.Abs(float64(x[i]) * float64(y0[i]))
			}
			if math.Abs(float64(d)-s) > 1e-6*(abs+1) {
				t.Fatalf("%s: Dot n=%d = %v, want %v", name, n, d, s)
			}
			if refY == nil {
				refY, refDot = y, d
				continue
			}
			if math.Float32bits(d) != math.Float32bits(refDot) {
				t.Fatalf("%s: Dot n=%d = %v, %s gave %v", name, n, d, Available()[0], refDot)
			}
		}
	}
}
