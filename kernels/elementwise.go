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

// axpy: y += alpha*x, len(y) == len(x).
func axpy(alpha float32, x, y []float32) {
	y = y[:len(x)]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		y[i] += alpha * x[i]
		y[i+1] += alpha * x[i+1]
		y[i+2] += alpha * x[i+2]
		y[i+3] += alpha * x[i+3]
	}
	for ; i < len(x); i++ {
		y[i] += alpha * x[i]
	}
}

// dot: sum x*y with four partial sums, len(y) == len(x).
func dot(x, y []float32) float32 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(x); i += 4 {
		s0 += x[i] * y[i]
		s1 += x[i+1] * y[i+1]
		s2 += x[i+2] * y[i+2]
		s3 += x[i+3] * y[i+3]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return (s0 + s1) + (s2 + s3)
}
