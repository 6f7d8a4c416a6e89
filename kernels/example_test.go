package kernels_test

import (
	"fmt"

	"github.com/canopy-go/canopy/kernels"
)

// A 3x3 convolution of a one-channel 2x2 image into one channel, as
// Im2Col3x3 followed by GemmBiasAct. With every weight 1 each output is the
// sum of the pixels around it; on a 2x2 image every pixel is within reach
// of every other, so each sum is 1+2+3+4 = 10, then 10 + bias -5 = 5.
func ExampleGemmBiasAct() {
	const batch, cin, h, w, cout = 1, 1, 2, 2, 1
	img := []float32{1, 2, 3, 4} // NHWC
	weights := []float32{1, 1, 1, 1, 1, 1, 1, 1, 1}
	bias := []float32{-5}

	cols := make([]float32, batch*h*w*9*cin)
	kernels.Im2Col3x3(img, batch, cin, h, w, cols)
	out := make([]float32, batch*h*w*cout)
	kernels.GemmBiasAct(batch*h*w, cout, 9*cin, cols, 9*cin, weights, cout, bias, nil, true, out, cout)
	fmt.Println(out)
	// Output: [5 5 5 5]
}
