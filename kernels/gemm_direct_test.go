package kernels

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestDirectGemm checks that directGemm, where it takes a call, writes the
// same bits as the blocked driver (gemm) does for the same product, with
// every implementation: the Winograd loops' shapes (48 x 32 x 32, 32 x 32
// x 96 transposed and accumulating), a row tail, a 64-column strip, and
// the calls it must leave to gemm (a column tail, K over kcMax).
func TestDirectGemm(t *testing.T) {
	cases := []struct {
		transA, loadC bool
		m, n, k       int
		direct        bool // whether any implementation with tiles takes it
	}{
		{false, false, 48, 32, 32, true},
		{true, true, 32, 32, 96, true},
		{false, false, 13, 64, 40, true},
		{true, true, 21, 64, 96, true},
		{false, false, 48, 24, 32, false},
		{false, false, 8, 32, kcMax + 8, false},
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, name := range implNames() {
		use(t, name)
		im := cur.Load()
		for _, tc := range cases {
			t.Run(fmt.Sprintf("%s/t%v/%dx%dx%d", name, tc.transA, tc.m, tc.n, tc.k), func(t *testing.T) {
				lda := tc.k + 3
				if tc.transA {
					lda = tc.m + 5
				}
				rowsA := tc.m
				if tc.transA {
					rowsA = tc.k
				}
				a, b := randSlice(r, rowsA*lda), randSlice(r, tc.k*(tc.n+7))
				ldc := tc.n + 2
				c0 := randSlice(r, tc.m*ldc)
				want := append([]float32(nil), c0...)
				beta := float32(0)
				if tc.loadC {
					beta = 1
				}
				gemm(1, tc.transA, false, tc.m, tc.n, tc.k, 1, a, lda, b, tc.n+7, beta, want, ldc, nil, nil, false)
				got := append([]float32(nil), c0...)
				took := directGemm(im, tc.transA, tc.m, tc.n, tc.k, a, lda, b, tc.n+7, tc.loadC, got, ldc)
				if wantTook := tc.direct && im.tilesFor(tc.n) != nil && tc.n%im.tilesFor(tc.n).nr == 0; took != wantTook {
					t.Fatalf("directGemm took the call: %v, want %v", took, wantTook)
				}
				if !took {
					wantEq(t, "C untouched", got, c0)
					return
				}
				wantEq(t, "C", got, want)
			})
		}
	}
}
