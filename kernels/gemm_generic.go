package kernels

// The portable GEMM: C is computed in 4x4 register tiles, each the sum over
// p of the outer product of a column of op(A) (4 values) and a row of op(B)
// (4 contiguous values), so 8 loads feed 16 multiply-adds. A transposed B is
// first copied into a row-major buffer (see prepareGeneric); A is read in
// place either way.

// genericRows computes rows [lo, hi) of C with the portable code.
func (g *gemmArgs) genericRows(lo, hi int) {
	b, ldb := g.b, g.ldb
	if g.transB {
		b, ldb = g.bp, g.n
	}
	for i := lo; i < hi; i += 4 {
		ri := min(4, hi-i)
		for j := 0; j < g.n; j += 4 {
			cj := min(4, g.n-j)
			var acc [16]float32
			if ri == 4 && cj == 4 {
				if g.transA {
					acc = g.tile4x4T(i, j, b, ldb)
				} else {
					acc = g.tile4x4(i, j, b, ldb)
				}
			} else {
				for p := range g.k {
					br := b[p*ldb+j : p*ldb+j+cj]
					for r := range ri {
						x := g.opA(i+r, p)
						for c, bv := range br {
							acc[r*4+c] += x * bv
						}
					}
				}
			}
			g.storeTile(&acc, i, j, ri, cj)
		}
	}
}

// tile4x4 returns the 4x4 block of A*op(B) at (i, j), A row-major.
func (g *gemmArgs) tile4x4(i, j int, b []float32, ldb int) [16]float32 {
	k, lda := g.k, g.lda
	a0 := g.a[i*lda : i*lda+k]
	a1 := g.a[(i+1)*lda : (i+1)*lda+k]
	a2 := g.a[(i+2)*lda : (i+2)*lda+k]
	a3 := g.a[(i+3)*lda : (i+3)*lda+k]
	a1, a2, a3 = a1[:len(a0)], a2[:len(a0)], a3[:len(a0)]
	var c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33 float32
	for p, x0 := range a0 {
		x1, x2, x3 := a1[p], a2[p], a3[p]
		br := b[p*ldb+j : p*ldb+j+4 : p*ldb+j+4]
		b0, b1, b2, b3 := br[0], br[1], br[2], br[3]
		c00 += x0 * b0
		c01 += x0 * b1
		c02 += x0 * b2
		c03 += x0 * b3
		c10 += x1 * b0
		c11 += x1 * b1
		c12 += x1 * b2
		c13 += x1 * b3
		c20 += x2 * b0
		c21 += x2 * b1
		c22 += x2 * b2
		c23 += x2 * b3
		c30 += x3 * b0
		c31 += x3 * b1
		c32 += x3 * b2
		c33 += x3 * b3
	}
	return [16]float32{c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33}
}

// tile4x4T is tile4x4 with A stored transposed.
func (g *gemmArgs) tile4x4T(i, j int, b []float32, ldb int) [16]float32 {
	var c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33 float32
	for p := range g.k {
		ar := g.a[p*g.lda+i : p*g.lda+i+4 : p*g.lda+i+4]
		x0, x1, x2, x3 := ar[0], ar[1], ar[2], ar[3]
		br := b[p*ldb+j : p*ldb+j+4 : p*ldb+j+4]
		b0, b1, b2, b3 := br[0], br[1], br[2], br[3]
		c00 += x0 * b0
		c01 += x0 * b1
		c02 += x0 * b2
		c03 += x0 * b3
		c10 += x1 * b0
		c11 += x1 * b1
		c12 += x1 * b2
		c13 += x1 * b3
		c20 += x2 * b0
		c21 += x2 * b1
		c22 += x2 * b2
		c23 += x2 * b3
		c30 += x3 * b0
		c31 += x3 * b1
		c32 += x3 * b2
		c33 += x3 * b3
	}
	return [16]float32{c00, c01, c02, c03, c10, c11, c12, c13, c20, c21, c22, c23, c30, c31, c32, c33}
}

// storeTile writes C = alpha*acc + beta*C + bias + residual (then ReLU) for
// the ri x cj corner of a 4x4 tile at (i, j). C is not read when beta is 0.
func (g *gemmArgs) storeTile(acc *[16]float32, i, j, ri, cj int) {
	for r := range ri {
		o := (i+r)*g.ldc + j
		cr := g.c[o : o+cj]
		for c := range cr {
			v := g.alpha * acc[r*4+c]
			if g.beta != 0 {
				v += g.beta * cr[c]
			}
			if g.bias != nil {
				v += g.bias[j+c]
			}
			if g.residual != nil {
				v += g.residual[o+c]
			}
			if g.relu && v < 0 {
				v = 0
			}
			cr[c] = v
		}
	}
}

// initRow sets row i of C (cr) to beta*C + bias + residual before the
// products are accumulated.
func (g *gemmArgs) initRow(i int, cr []float32) {
	switch {
	case g.residual != nil:
		rr := g.residual[i*g.ldc : i*g.ldc+len(cr)]
		copy(cr, rr) // a no-op when residual is c
	case g.beta == 0:
		clear(cr)
	case g.beta != 1:
		for j := range cr {
			cr[j] *= g.beta
		}
	}
	if g.bias != nil {
		for j, v := range g.bias[:len(cr)] {
			cr[j] += v
		}
	}
}

func (g *gemmArgs) finishRow(cr []float32) {
	if g.relu {
		ReLU(cr)
	}
}

// prepareGeneric copies a transposed B (stored n x k) into a row-major k x n
// buffer g.bp and returns the pooled buffer to release.
func (g *gemmArgs) prepareGeneric() *[]float32 {
	bufp := bpPool.Get()
	need := g.k * g.n
	if cap(*bufp) < need {
		*bufp = make([]float32, need)
	}
	bp := (*bufp)[:need]
	for j := range g.n {
		col := g.b[j*g.ldb : j*g.ldb+g.k]
		for p, v := range col {
			bp[p*g.n+j] = v
		}
	}
	g.bp = bp
	return bufp
}

// opA returns op(A)(i, p).
func (g *gemmArgs) opA(i, p int) float32 {
	if g.transA {
		return g.a[p*g.lda+i]
	}
	return g.a[i*g.lda+p]
}
