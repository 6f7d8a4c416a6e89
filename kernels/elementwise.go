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

func col2im3x3(src []float32, batch, ch, h, w int, dst []float32) {
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
