package nets

import "fmt"

// layout says how a parameter's internal storage relates to the order it
// has in weight files (PyTorch's own layout, so that a state_dict saved
// with safetensors loads unchanged).
type layout uint8

const (
	// layoutPlain: same order in memory and in files (biases, BN vectors).
	layoutPlain layout = iota
	// layoutConv: file [cout][cin][k][k]; memory is the GEMM B matrix
	// [(kh*k+kw)*cin+ci][cout] (see package kernels).
	layoutConv
	// layoutDense: file [out][ch*cells] with the input flattened channel
	// major (PyTorch's flatten of NCHW); memory is [(cell*ch+c)][out], the
	// GEMM B matrix for an NHWC input flattened cell major.
	layoutDense
)

// Param is one named tensor of a network: a trainable weight (Grad != nil)
// or a buffer such as a batch-norm running mean (Grad == nil).
//
// Data is in the internal layout the kernels use, which for convolution and
// fully connected weights differs from the file layout given by Shape. A
// Param belongs to one Net; code that writes Data directly must call
// Net.Invalidate afterwards so inference refolds the weights.
type Param struct {
	Name  string
	Shape []int // shape in files, PyTorch convention
	Data  []float32
	Grad  []float32
	// Decay marks convolution and fully connected weights, the parameters
	// L2 regularisation applies to (not biases or batch-norm vectors).
	Decay bool

	layout  layout
	d0, d1  int // conv: cout, cin; dense: out, ch
	d2      int // conv: k; dense: cells
	numElem int
}

func newParam(name string, shape []int, trainable, decay bool, lay layout) *Param {
	n := 1
	for _, d := range shape {
		n *= d
	}
	p := &Param{Name: name, Shape: shape, Data: make([]float32, n), Decay: decay, layout: lay, numElem: n}
	if trainable {
		p.Grad = make([]float32, n)
	}
	return p
}

// fileIndex maps an internal index to the file index.
func (p *Param) fileIndex(i int) int {
	switch p.layout {
	case layoutConv:
		cout, cin, k := p.d0, p.d1, p.d2
		co := i % cout
		r := i / cout // (kh*k+kw)*cin + ci
		ci := r % cin
		kk := r / cin
		return (co*cin+ci)*k*k + kk
	case layoutDense:
		out, ch, cells := p.d0, p.d1, p.d2
		o := i % out
		r := i / out // cell*ch + c
		c := r % ch
		s := r / ch
		return o*ch*cells + c*cells + s
	}
	return i
}

// ToFile writes Data in file order into dst (length len(Data)).
func (p *Param) ToFile(dst []float32) {
	for i, v := range p.Data {
		dst[p.fileIndex(i)] = v
	}
}

// FromFile sets Data from src in file order.
func (p *Param) FromFile(src []float32) error {
	if len(src) != len(p.Data) {
		return fmt.Errorf("tensor %q: %d values, want %d", p.Name, len(src), len(p.Data))
	}
	for i := range p.Data {
		p.Data[i] = src[p.fileIndex(i)]
	}
	return nil
}
