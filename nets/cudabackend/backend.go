package cudabackend

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/canopy-go/canopy/cuda"
	"github.com/canopy-go/canopy/kernels/cudasrc"
	"github.com/canopy-go/canopy/nets"
)

// Precision selects the GEMM arithmetic.
type Precision string

const (
	FP32 Precision = "fp32" // cublasSgemm, full float32
	TF32 Precision = "tf32" // float32 operands on TF32 tensor cores, FP32 accumulation
	FP16 Precision = "fp16" // half operands, FP32 accumulation
	BF16 Precision = "bf16" // bfloat16 operands, FP32 accumulation

	// Auto picks DefaultPrecision for the device when the backend opens.
	Auto Precision = "auto"
)

// Precisions lists the supported precisions (Auto resolves to one of them).
func Precisions() []Precision { return []Precision{FP32, TF32, FP16, BF16} }

// ParsePrecision reads a precision name: fp32, tf32, fp16, bf16, or auto
// ("" is auto).
func ParsePrecision(s string) (Precision, error) {
	if s == "" || strings.EqualFold(s, string(Auto)) {
		return Auto, nil
	}
	for _, p := range Precisions() {
		if strings.EqualFold(s, string(p)) {
			return p, nil
		}
	}
	return "", fmt.Errorf("cudabackend: unknown precision %q (want fp32, tf32, fp16, bf16 or auto)", s)
}

// DefaultPrecision is the precision Auto picks for a GPU of compute
// capability major.minor: BF16 from 8.0 on (tensor cores with BF16, and
// the float32 exponent range, so activations cannot overflow), FP16 on
// 7.x (tensor cores without BF16, e.g. the T4's sm_75; overflow is
// detected, see ErrFP16Overflow), FP32 below (no tensor cores).
func DefaultPrecision(major, minor int) Precision {
	switch {
	case major >= 8:
		return BF16
	case major == 7:
		return FP16
	}
	return FP32
}

// half reports whether GEMM operands are 16-bit.
func (p Precision) half() bool { return p == FP16 || p == BF16 }

// Options configure Open. Zero fields take defaults.
type Options struct {
	MaxBatch  int       // default 1024
	Device    int       // CUDA device ordinal
	Precision Precision // "" or Auto: DefaultPrecision of the device
	Graphs    bool      // replay one captured CUDA graph per batch size
}

// Backend defaults.
const (
	defaultMaxBatch = 1024
	preferredBatch  = 256
	blockSize       = 256
	maxBlocks       = 1 << 16 // kernels use grid-stride loops
	warpSize        = 32
	rowsPerBlock    = blockSize / warpSize // row kernels: one warp per matrix row
	workspaceBytes  = 32 << 20
)

// Backend evaluates a net on a GPU. Safe for concurrent use.
type Backend struct {
	mu       sync.Mutex
	dev      *cuda.Device
	plan     *plan
	opts     Options
	in, pol  int // per-sample input and policy sizes
	vs       int // per-sample values: 1, or the players of a per-player value head
	elemSize int // bytes per GEMM operand element (4 or 2)

	// Device state, used only on the device thread.
	stream  cuda.Stream
	blas    *cuda.Blas
	mod     cuda.Module
	fns     map[string]cuda.Function
	slot    []int
	store   []cuda.DevicePtr // activation slots, float32
	cols    cuda.DevicePtr   // im2col matrix (operand precision)
	half    cuda.DevicePtr   // 16-bit copy of 1x1 / dense GEMM inputs
	dIn     cuda.DevicePtr   // planar input
	ws      cuda.DevicePtr   // cuBLAS workspace
	w, b    []cuda.DevicePtr // per layer: weights (operand precision), bias (float32)
	hostIn  *cuda.HostBuffer
	hostOut *cuda.HostBuffer // policy for MaxBatch samples, then values, then the overflow flag
	// inputs are callers' buffers page-locked by RegisterInput: Evaluate
	// uploads rows inside one directly instead of copying them to hostIn.
	inputs []*cuda.HostBuffer
	flag   cuda.DevicePtr // FP16 only: set to 1 by a conversion that overflowed
	graphs map[int]cuda.GraphExec
	allocs []cuda.DevicePtr
}

// Probe reports whether a CUDA device can be used, without opening a
// backend: nil, or the reason (for a machine without a driver, the list of
// library paths tried).
func Probe() error {
	n, err := cuda.DeviceCount()
	if err != nil {
		return err
	}
	if n == 0 {
		return errors.New("cudabackend: the CUDA driver reports no devices")
	}
	return nil
}

// retiredEnv are environment variables that once stood in for spec
// options; they are no longer read, and a backend opened while one is set
// says which option replaces it rather than silently ignoring it.
var retiredEnv = []struct{ name, option string }{
	{"CANOPY_CUDA_PRECISION", "precision"},
	{"CANOPY_CUDA_GRAPHS", "graphs"},
}

// maxDevice bounds the device key of a spec (the driver's own limit is
// far lower; a larger ordinal is surely a typo).
const maxDevice = 255

func init() {
	prec := make([]string, 0, 4)
	for _, p := range Precisions() {
		prec = append(prec, string(p))
	}
	nets.RegisterBackendInfo(nets.BackendInfo{
		Name:     "cuda",
		Priority: 10,
		Summary:  "the network on an NVIDIA GPU (CUDA libraries loaded at run time, no cgo)",
		Options: []nets.BackendOption{
			{Key: "device", Min: 0, Max: maxDevice, Default: "0", Help: "CUDA device ordinal"},
			{Key: "precision", Values: append(prec, string(Auto)), Default: "auto",
				Help: "GEMM operand precision (accumulation is always FP32); auto: bf16 on sm_80 and newer, fp16 on sm_7x"},
			{Key: "graphs", Values: []string{"true", "false"}, Default: "false",
				Help: "replay one captured CUDA graph per batch size"},
		},
		Open: openSpec,
	})
}

// openSpec is the registered factory: spec options, then Open. A machine where Probe fails gets an error that
// matches nets.ErrBackendUnavailable.
func openSpec(net *nets.Net, o nets.BackendOptions) (nets.Backend, error) {
	if err := checkRetiredEnv(os.Getenv); err != nil {
		return nil, err
	}
	opts, err := specOptions(o)
	if err != nil {
		return nil, err
	}
	if err := Probe(); err != nil {
		return nil, nets.Unavailable(shortReason(err))
	}
	if n, err := cuda.DeviceCount(); err == nil && opts.Device >= n {
		return nil, &nets.OptionError{Backend: "cuda", Key: "device",
			Reason: fmt.Sprintf("device %d does not exist here (%d devices: 0..%d)", opts.Device, n, n-1)}
	}
	b, err := Open(net, opts)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// shortReason keeps a missing library's reason to one short clause for
// the Choice line ("auto" prints it at every start): the paths tried stay
// in the wrapped *cuda.NotFoundError (errors.As), and gpucheck prints
// them.
func shortReason(err error) error {
	var nf *cuda.NotFoundError
	if !errors.As(err, &nf) {
		return err
	}
	return &reason{fmt.Sprintf("no %s: %s not found (%d paths tried; set CANOPY_CUDA_LIBS to its directory)",
		nf.What, nf.Library, len(nf.Tried)), err}
}

// reason is an error with its own message that wraps a detailed cause.
type reason struct {
	msg   string
	cause error
}

func (r *reason) Error() string { return r.msg }
func (r *reason) Unwrap() error { return r.cause }

// specOptions resolves Options from the spec's checked params (device,
// precision, graphs), with the defaults auto and false and o.Device for the
// device. It does not touch the GPU.
func specOptions(o nets.BackendOptions) (Options, error) {
	opts := Options{MaxBatch: o.MaxBatch, Device: o.Device}
	if v, ok := o.Param("device"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > maxDevice {
			return opts, &nets.OptionError{Backend: "cuda", Key: "device", Reason: fmt.Sprintf("%q is not an integer in 0..%d", v, maxDevice)}
		}
		opts.Device = n
	}
	v, _ := o.Param("precision")
	p, err := ParsePrecision(v)
	if err != nil {
		return opts, &nets.OptionError{Backend: "cuda", Key: "precision",
			Reason: fmt.Sprintf("%q is not one of fp32|tf32|fp16|bf16|auto", v)}
	}
	opts.Precision = p
	if v, ok := o.Param("graphs"); ok {
		switch strings.ToLower(v) {
		case "true":
			opts.Graphs = true
		case "false":
		default:
			return opts, &nets.OptionError{Backend: "cuda", Key: "graphs", Reason: fmt.Sprintf("%q is not one of true|false", v)}
		}
	}
	return opts, nil
}

// checkRetiredEnv refuses to open while an environment variable that
// spec options replaced is set (getenv is os.Getenv), naming the option.
func checkRetiredEnv(getenv func(string) string) error {
	for _, e := range retiredEnv {
		if v := getenv(e.name); v != "" {
			return &nets.OptionError{Backend: "cuda", Key: e.option,
				Reason: fmt.Sprintf("$%s=%q is no longer read: give the backend spec's option instead (--backend cuda:%s=%s) and unset %s", e.name, v, e.option, v, e.name)}
		}
	}
	return nil
}

// Open builds the GPU network for net: it opens the device, compiles the
// kernels, and uploads the folded weights. Later changes to net's weights
// are not seen; open a new backend after training.
func Open(net *nets.Net, o Options) (*Backend, error) {
	if net == nil {
		return nil, errors.New("cudabackend: nil network")
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = defaultMaxBatch
	}
	prec, err := ParsePrecision(string(o.Precision))
	if err != nil {
		return nil, err
	}
	p, err := buildPlan(net)
	if err != nil {
		return nil, err
	}
	dev, err := cuda.Open(o.Device)
	if err != nil {
		return nil, err
	}
	if prec == Auto {
		info := dev.Info()
		prec = DefaultPrecision(info.Major, info.Minor)
	}
	o.Precision = prec
	b := &Backend{dev: dev, plan: p, opts: o, in: net.InputSize(), pol: net.PolicySize(), vs: net.ValueSize(), elemSize: 4,
		fns: map[string]cuda.Function{}, graphs: map[int]cuda.GraphExec{}}
	if prec.half() {
		b.elemSize = 2
	}
	if err := dev.Do(b.setup); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

func (b *Backend) alloc(c *cuda.Ctx, bytes int) (cuda.DevicePtr, error) {
	p, err := c.Alloc(max(bytes, 4))
	if err == nil {
		b.allocs = append(b.allocs, p)
	}
	return p, err
}

// setup runs on the device thread.
func (b *Backend) setup(c *cuda.Ctx) error {
	src, err := cudasrc.Source(cudasrc.Net)
	if err != nil {
		return err
	}
	if b.mod, _, err = c.CompileForDevice(cudasrc.Net, src); err != nil {
		return err
	}
	for _, name := range []string{"nchw_to_nhwc", "im2col3x3_f32", "im2col3x3_f16", "im2col3x3_bf16", "bias_act",
		"f32_to_f16_kernel", "f32_to_bf16_kernel"} {
		f, err := c.Function(b.mod, name)
		if err != nil {
			return err
		}
		b.fns[name] = f
	}
	if b.stream, err = c.NewStream(); err != nil {
		return err
	}
	if b.blas, err = c.NewBlas(b.stream); err != nil {
		return err
	}
	if b.ws, err = b.alloc(c, workspaceBytes); err != nil {
		return err
	}
	if err := b.blas.SetWorkspace(b.ws, workspaceBytes); err != nil {
		return err
	}
	mb, p := b.opts.MaxBatch, b.plan
	slot, per := p.slots()
	b.slot = slot
	for _, n := range per {
		d, err := b.alloc(c, 4*mb*n)
		if err != nil {
			return err
		}
		b.store = append(b.store, d)
	}
	if b.cols, err = b.alloc(c, b.elemSize*mb*p.maxCols()); err != nil {
		return err
	}
	if b.opts.Precision.half() {
		if b.half, err = b.alloc(c, 2*mb*p.maxGemmInput()); err != nil {
			return err
		}
	}
	if b.dIn, err = b.alloc(c, 4*mb*b.in); err != nil {
		return err
	}
	if b.hostIn, err = c.AllocHost(4 * mb * b.in); err != nil {
		return err
	}
	if b.hostOut, err = c.AllocHost(4*mb*(b.pol+b.vs) + 4); err != nil {
		return err
	}
	if b.opts.Precision == FP16 {
		if b.flag, err = b.alloc(c, 4); err != nil {
			return err
		}
		if err := c.MemsetD32Async(b.flag, 0, 1, b.stream); err != nil {
			return err
		}
	}
	// The synchronous copies below (CopyHtoD) return when the data is on
	// the device, so the conversions on the non-blocking stream may read it.
	for _, l := range p.layers {
		w, err := b.upload(c, l.w)
		if err != nil {
			return err
		}
		bias, err := b.alloc(c, 4*len(l.b))
		if err != nil {
			return err
		}
		if err := c.CopyHtoD(bias, l.b); err != nil {
			return err
		}
		b.w, b.b = append(b.w, w), append(b.b, bias)
	}
	if err := c.SyncStream(b.stream); err != nil {
		return err
	}
	if b.flag != 0 {
		over, err := b.readFlag(c)
		if err != nil {
			return err
		}
		if over {
			return &overflowError{where: "a weight (after batch-norm folding)"}
		}
	}
	return nil
}

// readFlag reads the overflow flag synchronously; call after the stream
// is synchronised.
func (b *Backend) readFlag(c *cuda.Ctx) (bool, error) {
	if err := c.CopyDtoHAsync(b.hostOut, b.flagOffset(), b.flag, 4, b.stream); err != nil {
		return false, err
	}
	if err := c.SyncStream(b.stream); err != nil {
		return false, err
	}
	return b.flagSet(), nil
}

// flagOffset is the overflow flag's byte offset in hostOut.
func (b *Backend) flagOffset() int { return 4 * b.opts.MaxBatch * (b.pol + b.vs) }

// flagSet reports whether the flag copied to hostOut is set.
func (b *Backend) flagSet() bool {
	return math.Float32bits(b.hostOut.Float32s()[b.flagOffset()/4]) != 0
}

// upload copies float32 weights to the device in operand precision.
func (b *Backend) upload(c *cuda.Ctx, w []float32) (cuda.DevicePtr, error) {
	f32, err := b.alloc(c, 4*len(w))
	if err != nil {
		return 0, err
	}
	if err := c.CopyHtoD(f32, w); err != nil {
		return 0, err
	}
	if !b.opts.Precision.half() {
		return f32, nil
	}
	h, err := b.alloc(c, 2*len(w))
	if err != nil {
		return 0, err
	}
	if err := b.convert(c, f32, h, len(w)); err != nil {
		return 0, err
	}
	// f32 stays allocated until Close (it is small; freeing it here would
	// need a sync first).
	return h, nil
}

func (b *Backend) launch(c *cuda.Ctx, name string, n int, args *cuda.Args) error {
	f, ok := b.fns[name]
	if !ok {
		return fmt.Errorf("cudabackend: kernel %s not loaded", name)
	}
	return c.Launch(f, cuda.Dim3{X: cuda.Grid1D(n, blockSize, maxBlocks)}, cuda.Dim3{X: blockSize}, 0, b.stream, args)
}

// launchRows launches one of net.cu's row kernels (ROW_STRIDE) over rows
// matrix rows: blocks of rowsPerBlock warps, each warp a row at a time.
func (b *Backend) launchRows(c *cuda.Ctx, name string, rows int, args *cuda.Args) error {
	f, ok := b.fns[name]
	if !ok {
		return fmt.Errorf("cudabackend: kernel %s not loaded", name)
	}
	return c.Launch(f, cuda.Dim3{X: cuda.Grid1D(rows, rowsPerBlock, maxBlocks)}, cuda.Dim3{X: warpSize, Y: rowsPerBlock}, 0, b.stream, args)
}

// convert writes n float32s from src as 16-bit values of the precision
// (FP16: overflow to infinity sets b.flag).
func (b *Backend) convert(c *cuda.Ctx, src, dst cuda.DevicePtr, n int) error {
	if b.opts.Precision == BF16 {
		return b.launch(c, "f32_to_bf16_kernel", n, c.Args().Ptr(src).Ptr(dst).Int64(int64(n)))
	}
	return b.launch(c, "f32_to_f16_kernel", n, c.Args().Ptr(src).Ptr(dst).Int64(int64(n)).Ptr(b.flag))
}

func (b *Backend) buf(id int) cuda.DevicePtr { return b.store[b.slot[id]] }

// uploadInput puts the copy of batch input rows, from src at byte offset off,
// on the stream. It stays outside captured graphs: the rows may come from
// a different place each call (a registered caller's buffer).
func (b *Backend) uploadInput(c *cuda.Ctx, src *cuda.HostBuffer, off, batch int) error {
	return c.CopyHtoDAsync(b.dIn, src, off, 4*batch*b.in, b.stream)
}

// enqueue puts one evaluation of batch samples uploaded to dIn on the
// stream: layers, output copies. It only enqueues, so it can be captured.
func (b *Backend) enqueue(c *cuda.Ctx, batch int) error {
	p, cfg := b.plan, b.plan.cfg
	cells := cfg.Height * cfg.Width
	if b.flag != 0 {
		if err := c.MemsetD32Async(b.flag, 0, 1, b.stream); err != nil {
			return err
		}
	}
	if err := b.launchRows(c, "nchw_to_nhwc", batch*cells,
		c.Args().Ptr(b.dIn).Ptr(b.buf(0)).Int(batch).Int(cfg.InputPlanes).Int(cells)); err != nil {
		return err
	}
	prec := b.opts.Precision
	for i, l := range p.layers {
		m := batch * l.cells
		a := b.buf(l.in)
		switch {
		case l.kind == kindConv3:
			name := im2colKernel(prec)
			args := c.Args().Ptr(a).Ptr(b.cols).Int(batch).Int(l.cin).Int(cfg.Height).Int(cfg.Width).Int(l.ld)
			if prec == FP16 {
				args.Ptr(b.flag)
			}
			if err := b.launchRows(c, name, m, args); err != nil {
				return fmt.Errorf("layer %s: %w", l.name, err)
			}
			a = b.cols
		case prec.half():
			if err := b.convert(c, a, b.half, m*l.k); err != nil {
				return fmt.Errorf("layer %s: %w", l.name, err)
			}
			a = b.half
		}
		out := b.buf(l.out)
		// Row-major out[m][cout] = a[m][k] * w[k][cout] (cuda.MapGemm).
		var err error
		switch prec {
		case FP32:
			err = b.blas.Sgemm(false, false, m, l.cout, l.ld, 1, a, l.ld, b.w[i], l.cout, 0, out, l.cout)
		case TF32:
			err = b.blas.GemmEx(false, false, m, l.cout, l.ld, 1, a, l.ld, b.w[i], l.cout, cuda.DataF32, 0, out, l.cout, cuda.Compute32FFastTF32)
		case FP16:
			err = b.blas.GemmEx(false, false, m, l.cout, l.ld, 1, a, l.ld, b.w[i], l.cout, cuda.DataF16, 0, out, l.cout, cuda.Compute32F)
		case BF16:
			err = b.blas.GemmEx(false, false, m, l.cout, l.ld, 1, a, l.ld, b.w[i], l.cout, cuda.DataBF16, 0, out, l.cout, cuda.Compute32F)
		}
		if err != nil {
			return fmt.Errorf("layer %s: %w", l.name, err)
		}
		var res cuda.DevicePtr
		if l.res >= 0 {
			res = b.buf(l.res)
		}
		if err := b.launchRows(c, "bias_act", m, c.Args().Ptr(out).Ptr(b.b[i]).Ptr(res).Int(m).Int(l.cout).
			Int(boolInt(l.relu)).Int(boolInt(l.tanh))); err != nil {
			return fmt.Errorf("layer %s: %w", l.name, err)
		}
	}
	if err := c.CopyDtoHAsync(b.hostOut, 0, b.buf(p.policy), 4*batch*b.pol, b.stream); err != nil {
		return err
	}
	if b.flag != 0 {
		if err := c.CopyDtoHAsync(b.hostOut, b.flagOffset(), b.flag, 4, b.stream); err != nil {
			return err
		}
	}
	return c.CopyDtoHAsync(b.hostOut, 4*b.opts.MaxBatch*b.pol, b.buf(p.value), 4*batch*b.vs, b.stream)
}

// im2colKernel is the im2col kernel that writes prec's GEMM operands.
func im2colKernel(prec Precision) string {
	switch prec {
	case FP16:
		return "im2col3x3_f16"
	case BF16:
		return "im2col3x3_bf16"
	}
	return "im2col3x3_f32"
}

func boolInt(v bool) int {
	if v {
		return 1
	}
	return 0
}

// Name implements nets.Backend.
func (b *Backend) Name() string { return "cuda" }

// Shape implements nets.Backend.
func (b *Backend) Shape() (int, int) { return b.in, b.pol }

// PreferredBatch implements nets.Backend.
func (b *Backend) PreferredBatch() int { return min(preferredBatch, b.opts.MaxBatch) }

// MaxBatch implements nets.Backend.
func (b *Backend) MaxBatch() int { return b.opts.MaxBatch }

// ValueSize implements nets.ValueSizer: the network's values per row (1,
// or the players of a per-player value head; rows of them in Evaluate's
// value, mover first).
func (b *Backend) ValueSize() int { return b.vs }

// Options returns the options the backend was opened with.
func (b *Backend) Options() Options { return b.opts }

// Device returns the GPU.
func (b *Backend) Device() *cuda.Device { return b.dev }

// Evaluate implements nets.Backend.
func (b *Backend) Evaluate(ctx context.Context, batch int, input, policy, value []float32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if batch < 1 || batch > b.opts.MaxBatch {
		return fmt.Errorf("cudabackend: batch %d outside [1, %d]", batch, b.opts.MaxBatch)
	}
	if len(input) < batch*b.in || len(policy) < batch*b.pol || len(value) < batch*b.vs {
		return fmt.Errorf("cudabackend: batch %d needs input %d, policy %d, value %d; got %d, %d, %d",
			batch, batch*b.in, batch*b.pol, batch*b.vs, len(input), len(policy), len(value))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.hostIn == nil {
		return errors.New("cudabackend: backend is closed")
	}
	src, off := b.hostIn, 0
	if reg, o, ok := b.registered(input[:batch*b.in]); ok {
		src, off = reg, o
	} else {
		copy(b.hostIn.Float32s()[:batch*b.in], input)
	}
	err := b.dev.Do(func(c *cuda.Ctx) error {
		if err := b.uploadInput(c, src, off, batch); err != nil {
			return err
		}
		if !b.opts.Graphs {
			if err := b.enqueue(c, batch); err != nil {
				return err
			}
			return c.SyncStream(b.stream)
		}
		g, ok := b.graphs[batch]
		if !ok {
			var err error
			if g, err = c.Capture(b.stream, func() error { return b.enqueue(c, batch) }); err != nil {
				return fmt.Errorf("cudabackend: capturing the graph for batch %d: %w", batch, err)
			}
			b.graphs[batch] = g
		}
		if err := c.GraphLaunch(g, b.stream); err != nil {
			return err
		}
		return c.SyncStream(b.stream)
	})
	if err != nil {
		return err
	}
	if b.flag != 0 && b.flagSet() {
		return &overflowError{where: fmt.Sprintf("an activation of batch %d", batch)}
	}
	out := b.hostOut.Float32s()
	copy(policy[:batch*b.pol], out[:batch*b.pol])
	vo := b.opts.MaxBatch * b.pol
	copy(value[:batch*b.vs], out[vo:vo+batch*b.vs])
	return nil
}

// registered finds the registered input buffer that holds rows, if any,
// and the rows' byte offset in it. Call with b.mu held.
func (b *Backend) registered(rows []float32) (*cuda.HostBuffer, int, bool) {
	for _, h := range b.inputs {
		if off, ok := h.Contains(rows); ok {
			return h, off, true
		}
	}
	return nil, 0, false
}

// RegisterInput implements nets.InputRegistrar: it page-locks buf (best
// from cuda.PageAligned), after which Evaluate uploads input rows inside
// it straight from it, without copying them to its own staging buffer
// first (a single-threaded copy of 44 MB, batch 1024 of the sequence net,
// took most of an evaluation's time on an H200 machine). buf must stay
// referenced and must not change during an Evaluate that reads it (the
// upload may still be reading it until Evaluate returns).
func (b *Backend) RegisterInput(buf []float32) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dev == nil {
		return errors.New("cudabackend: backend is closed")
	}
	return b.dev.Do(func(c *cuda.Ctx) error {
		h, err := c.RegisterHost(buf)
		if err != nil {
			return fmt.Errorf("cudabackend: registering an input buffer of %d floats: %w", len(buf), err)
		}
		b.inputs = append(b.inputs, h)
		return nil
	})
}

// UnregisterInput implements nets.InputRegistrar: it unlocks a buffer of
// RegisterInput. After Close it does nothing (closing unlocked it).
func (b *Backend) UnregisterInput(buf []float32) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, h := range b.inputs {
		if off, ok := h.Contains(buf); ok && off == 0 && 4*len(buf) == h.Bytes() {
			b.inputs = append(b.inputs[:i], b.inputs[i+1:]...)
			if b.dev == nil {
				return nil
			}
			return b.dev.Do(func(c *cuda.Ctx) error { return c.FreeHost(h) })
		}
	}
	if b.dev == nil {
		return nil
	}
	return errors.New("cudabackend: UnregisterInput: buffer was not registered")
}

// Close frees the GPU memory and stops the device thread.
func (b *Backend) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dev == nil {
		return nil
	}
	err := b.dev.Do(func(c *cuda.Ctx) error {
		var errs []error
		if b.stream != 0 {
			errs = append(errs, c.SyncStream(b.stream))
		}
		for _, g := range b.graphs {
			errs = append(errs, c.DestroyGraph(g))
		}
		if b.blas != nil {
			errs = append(errs, b.blas.Destroy())
		}
		for _, p := range b.allocs {
			errs = append(errs, c.Free(p))
		}
		for _, h := range b.inputs {
			errs = append(errs, c.FreeHost(h))
		}
		errs = append(errs, c.FreeHost(b.hostIn), c.FreeHost(b.hostOut), c.DestroyStream(b.stream))
		if b.mod != 0 {
			errs = append(errs, c.UnloadModule(b.mod))
		}
		return errors.Join(errs...)
	})
	b.hostIn, b.hostOut, b.inputs = nil, nil, nil
	err = errors.Join(err, b.dev.Close())
	b.dev = nil
	return err
}

// ErrFP16Overflow is matched (errors.Is) by the error of Open or Evaluate
// when a value converted to an FP16 GEMM operand (a weight, an input or an
// activation) was finite but beyond the half range (|v| >= 65520 rounds
// to infinity), which would make the outputs wrong. Such an error also
// matches nets.ErrNonFinite. BF16 has the float32 range and cannot
// overflow this way.
var ErrFP16Overflow = errors.New("cudabackend: FP16 overflow")

// overflowError is an FP16 overflow in where.
type overflowError struct{ where string }

func (e *overflowError) Error() string {
	return fmt.Sprintf("%v: %s exceeds the half range (65504) and became infinite; use precision=bf16 (sm_80 and newer) or fp32",
		ErrFP16Overflow, e.where)
}

func (e *overflowError) Is(target error) bool {
	return target == ErrFP16Overflow || target == nets.ErrNonFinite
}
