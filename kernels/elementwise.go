package kernels

// Portable elementwise kernels and the im2col transforms. They are memory
// bound; the Go compiler's scalar code is within a small factor of SIMD here.

func im2col3x3(src []float32, batch, ch, h, w int, dst []float32) {
	rowLen := 9 * ch
	r := 0
	for n := range batch {
		img := src[n*h*w*ch : (n+1)*h*w*ch]
		for y := range h {
			for x := range w {
				row := dst[r*rowLen : (r+1)*rowLen]
				r++
				for kh := range 3 {
					yy := y + kh - 1
					for kw := range 3 {
						xx := x + kw - 1
						d := row[(kh*3+kw)*ch : (kh*3+kw+1)*ch]
						if yy < 0 || yy >= h || xx < 0 || xx >= w {
							clear(d)
							continue
						}
						o := (yy*w + xx) * ch
						copy(d, img[o:o+ch])
					}
				}
			}
		}
	}
}

// zeroRow stands in for the taps of col2im3x3 that fall on the padding.
// It is never written.
var zeroRow [1024]float32

// col2im3x3 gathers, for each pixel of dst, the nine im2col entries that
// were copied from it and adds them to it in one pass (instead of nine
// scattered axpy passes over dst). Entries are added in the order the
// scatter form (col2im3x3Scatter) adds them: source rows in raster order,
// i.e. taps from (kh, kw) = (2, 2) down to (0, 0); a tap on the padding adds
// zero.
func col2im3x3(src []float32, batch, ch, h, w int, dst []float32) {
	if ch > len(zeroRow) {
		col2im3x3Scatter(src, batch, ch, h, w, dst)
		return
	}
	rowLen := 9 * ch
	hw := h * w
	zero := zeroRow[:ch]
	vec := 0 // channels sum9AVX2 does; the rest run in Go
	if cur.Load().avx2Loops {
		vec = ch &^ 7
	}
	for n := range batch {
		rows := src[n*hw*rowLen : (n+1)*hw*rowLen]
		img := dst[n*hw*ch : (n+1)*hw*ch]
		for y := range h {
			for x := range w {
				// Pixel (y, x) is tap kh*3+kw of source row (y-kh+1, x-kw+1).
				var tap [9][]float32
				for kh := range 3 {
					qy := y - kh + 1
					for kw := range 3 {
						qx := x - kw + 1
						t := kh*3 + kw
						if qy < 0 || qy >= h || qx < 0 || qx >= w {
							tap[t] = zero
							continue
						}
						o := (qy*w+qx)*rowLen + t*ch
						tap[t] = rows[o : o+ch]
					}
				}
				d := img[(y*w+x)*ch : (y*w+x+1)*ch]
				if vec > 0 {
					var p [9]*float32
					for t := range p {
						p[t] = &tap[t][0]
						tap[t] = tap[t][vec:]
					}
					sum9AVX2(&d[0], &p, vec)
					d = d[vec:]
				}
				t0, t1, t2 := tap[0][:len(d)], tap[1][:len(d)], tap[2][:len(d)]
				t3, t4, t5 := tap[3][:len(d)], tap[4][:len(d)], tap[5][:len(d)]
				t6, t7, t8 := tap[6][:len(d)], tap[7][:len(d)], tap[8][:len(d)]
				for j, s := range d {
					s += t8[j]
					s += t7[j]
					s += t6[j]
					s += t5[j]
					s += t4[j]
					s += t3[j]
					s += t2[j]
					s += t1[j]
					s += t0[j]
					d[j] = s
				}
			}
		}
	}
}

// col2im3x3Scatter is col2im3x3 as nine axpy passes per source row.
func col2im3x3Scatter(src []float32, batch, ch, h, w int, dst []float32) {
	rowLen := 9 * ch
	r := 0
	for n := range batch {
		img := dst[n*h*w*ch : (n+1)*h*w*ch]
		for y := range h {
			for x := range w {
				row := src[r*rowLen : (r+1)*rowLen]
				r++
				for kh := range 3 {
					yy := y + kh - 1
					if yy < 0 || yy >= h {
						continue
					}
					for kw := range 3 {
						xx := x + kw - 1
						if xx < 0 || xx >= w {
							continue
						}
						o := (yy*w + xx) * ch
						axpy(1, row[(kh*3+kw)*ch:(kh*3+kw+1)*ch], img[o:o+ch])
					}
				}
			}
		}
	}
}

func addBias(x, bias []float32, relu bool) {
	nb := len(bias)
	for off := 0; off+nb <= len(x); off += nb {
		row := x[off : off+nb]
		for j, b := range bias {
			v := row[j] + b
			if relu {
				v = max(v, 0) // branch-free; keeps NaN
			}
			row[j] = v
		}
	}
}

// axpy: y[i] += alpha*x[i], len(y) == len(x), each product rounded
// before the add (the SIMD loops, axpy<w>, give the same bits).
func axpy(alpha float32, x, y []float32) {
	y = y[:len(x)]
	n := 0
	if im := cur.Load(); im.avx512Loops && len(x) >= 64 {
		n = len(x) / 64 * 64
		axpyAVX512(alpha, &x[0], &y[0], n)
	} else if im.avx2Loops && len(x) >= 32 {
		n = len(x) / 32 * 32
		axpyAVX2(alpha, &x[0], &y[0], n)
	}
	for i := n; i < len(x); i++ {
		y[i] += float32(alpha * x[i])
	}
}

// dotLanes is the number of partial sums of dot.
const dotLanes = 64

// dot returns sum x[i]*y[i], len(y) == len(x), in a fixed order on every
// implementation: lane l < dotLanes sums the rounded products of i = l
// mod dotLanes in increasing i (dot<w> on SIMD, a Go loop elsewhere) over
// the whole groups of dotLanes values; the lanes are added pairwise,
// halving (l += l + 32, then 16, ...); the products of the tail follow
// one by one.
func dot(x, y []float32) float32 {
	y = y[:len(x)]
	var acc [dotLanes]float32
	n := len(x) / dotLanes * dotLanes
	if n > 0 {
		if im := cur.Load(); im.avx512Loops {
			dotAVX512(&x[0], &y[0], &acc[0], n)
		} else if im.avx2Loops {
			dotAVX2(&x[0], &y[0], &acc[0], n)
		} else {
			for g := 0; g < n; g += dotLanes {
				xg, yg := x[g:g+dotLanes], y[g:g+dotLanes]
				for l := range acc {
					acc[l] += float32(xg[l] * yg[l])
				}
			}
		}
		for w := dotLanes / 2; w >= 1; w /= 2 {
			for l := range w {
				acc[l] += acc[l+w]
			}
		}
	}
	s := acc[0]
	for i := n; i < len(x); i++ {
		s += float32(x[i] * y[i])
	}
	return s
}
