// Command gpucheck checks a CUDA machine for Canopy and measures the GPU
// backend: it prints the device, driver and library versions found, runs
// package cuda's self-tests, compares the cuda backend with the cpu backend
// on random inputs per precision, and times evaluations per second against
// batch size. With --onnx MODEL it also runs ONNX Runtime (the ort
// backend, library from $CANOPY_ORT_LIB): its CUDA and TensorRT providers
// compared with its CPU provider on the model, and timed beside Canopy's
// cuda and cpu backends on a Canopy network of the model's shape; a
// provider the library or machine lacks is skipped with one line saying
// why. It writes one JSON document to --out (default stdout) and exits 1
// when a check fails or no GPU is usable (the JSON says why).
//
// Build it statically (no cgo) on any machine and copy it to the GPU host:
//
//	make gpu-check   # .device/gpucheck, the test binaries, .device/bench.onnx
//	CANOPY_ORT_LIB=/path/to/onnxruntime-gpu/lib .device/gpucheck --onnx .device/bench.onnx --out gpucheck.json
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/canopy-go/canopy/cuda"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/nets/cudabackend"
)

type libsInfo struct {
	DriverPath    string `json:"driver_path"`
	DriverVersion int    `json:"driver_version"`
	NVRTCPath     string `json:"nvrtc_path,omitempty"`
	NVRTCVersion  string `json:"nvrtc_version,omitempty"`
	NVRTCError    string `json:"nvrtc_error,omitempty"`
	NVRTCChoice   string `json:"nvrtc_choice,omitempty"`
	CublasPath    string `json:"cublas_path,omitempty"`
	CublasVersion int    `json:"cublas_version,omitempty"`
	CublasError   string `json:"cublas_error,omitempty"`
}

type compareResult struct {
	Preset      string  `json:"preset"`
	Precision   string  `json:"precision"`
	Graphs      bool    `json:"graphs"`
	Batch       int     `json:"batch"`
	PolicyDiff  float64 `json:"max_abs_diff_policy"`
	PolicyScale float64 `json:"policy_scale"` // largest |logit| of the cpu result (at least 1)
	PolicyRel   float64 `json:"rel_diff_policy"`
	ValueDiff   float64 `json:"max_abs_diff_value"`
	Tolerance   float64 `json:"rel_tolerance_policy"`
	ValueTol    float64 `json:"tolerance_value"`
	Error       string  `json:"error,omitempty"`
}

type benchResult struct {
	Backend   string  `json:"backend"`
	Precision string  `json:"precision,omitempty"`
	Graphs    bool    `json:"graphs"`
	Batch     int     `json:"batch"`
	Iters     int     `json:"iters"`
	MsPerCall float64 `json:"ms_per_call"`
	EvalsPerS float64 `json:"evals_per_s"`
	Error     string  `json:"error,omitempty"`
}

type report struct {
	Time      string              `json:"time"`
	OK        bool                `json:"ok"`
	Error     string              `json:"error,omitempty"`
	Libs      *libsInfo           `json:"libs,omitempty"`
	Device    *cuda.DeviceInfo    `json:"device,omitempty"`
	SelfTests []cuda.CheckResult  `json:"self_tests,omitempty"`
	Compare   []compareResult     `json:"compare,omitempty"`
	Bench     []benchResult       `json:"bench,omitempty"`
	ORT       *ortInfo            `json:"ort,omitempty"`
	Notes     map[string][]string `json:"notes,omitempty"`
}

// maxCompareBatch is the batch of the cuda-vs-cpu comparison: odd and
// prime, so that no kernel or GEMM gets a convenient size, unless the
// largest batch asked for is smaller (compareBatch).
const maxCompareBatch = 61

// compareBatch returns the comparison batch for the timed batch sizes:
// maxCompareBatch, or the largest of them when that is smaller (backends
// are opened with MaxBatch = the largest size).
func compareBatch(batches []int) int {
	m := 1
	for _, b := range batches {
		m = max(m, b)
	}
	return min(maxCompareBatch, m)
}

func main() {
	out := flag.String("out", "", "write the JSON report here (default stdout)")
	preset := flag.String("preset", "connect4", "network preset for the comparison and benchmark")
	batches := flag.String("batches", "1,2,4,8,16,32,64,128,256,512,1024,2048,4096", "batch sizes to time")
	minTime := flag.Duration("bench-time", 300*time.Millisecond, "minimum timing per batch size")
	precs := flag.String("precisions", "fp32,tf32,fp16,bf16", "precisions to compare and time")
	cpuBench := flag.Bool("cpu-bench", true, "also time the cpu backend (up to batch 256)")
	compileOnly := flag.Bool("compile-only", false, "only compile every kernel with NVRTC for --archs (needs no driver or GPU); with ptxas on PATH, print registers and spills per kernel")
	archs := flag.String("archs", "75,80,86,89,90", "architectures for --compile-only")
	onnx := flag.String("onnx", "", "ONNX model to run on ONNX Runtime's CUDA, TensorRT and CPU providers (e.g. .device/bench.onnx); empty: skip ONNX Runtime")
	var shape ortShape
	flag.IntVar(&shape.Channels, "onnx-channels", 32, "channels of the Canopy network timed beside the ONNX model (its input and policy sizes are the model's)")
	flag.IntVar(&shape.Blocks, "onnx-blocks", 4, "residual blocks of that network")
	flag.IntVar(&shape.ValueHidden, "onnx-value-hidden", 32, "value head hidden units of that network")
	flag.Parse()
	if *compileOnly {
		if err := compileCheck(os.Stdout, *archs); err != nil {
			fmt.Fprintln(os.Stderr, "gpucheck:", err)
			os.Exit(1)
		}
		return
	}
	rep := run(*preset, *batches, *precs, *minTime, *cpuBench)
	runORT(rep, *onnx, shape, *batches, *minTime, *cpuBench)
	rep.OK = rep.Error == ""
	b, _ := json.MarshalIndent(rep, "", "  ")
	b = append(b, '\n')
	if *out == "" {
		os.Stdout.Write(b)
	} else if err := os.WriteFile(*out, b, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gpucheck:", err)
		os.Exit(1)
	}
	if !rep.OK {
		fmt.Fprintln(os.Stderr, "gpucheck: FAILED:", rep.Error)
		os.Exit(1)
	}
}

func parseList(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad batch size %q", f)
		}
		out = append(out, n)
	}
	return out, nil
}

func run(preset, batchList, precList string, minTime time.Duration, cpuBench bool) *report {
	rep := &report{Time: time.Now().UTC().Format(time.RFC3339), Notes: map[string][]string{}}
	fail := func(format string, a ...any) {
		msg := fmt.Sprintf(format, a...)
		if rep.Error == "" {
			rep.Error = msg
		} else {
			rep.Error += "; " + msg
		}
	}
	batches, err := parseList(batchList)
	if err != nil {
		fail("%v", err)
		return rep
	}
	var precs []cudabackend.Precision
	for _, s := range strings.Split(precList, ",") {
		p, err := cudabackend.ParsePrecision(strings.TrimSpace(s))
		if err != nil {
			fail("%v", err)
			return rep
		}
		precs = append(precs, p)
	}
	libs, err := cuda.Load()
	if err != nil {
		fail("%v", err)
		return rep
	}
	li := &libsInfo{DriverPath: libs.DriverPath, DriverVersion: libs.DriverVersion, NVRTCPath: libs.NVRTCPath,
		CublasPath: libs.CublasPath, CublasVersion: libs.CublasVersion}
	if libs.NVRTCErr != nil {
		li.NVRTCError = libs.NVRTCErr.Error()
	} else {
		li.NVRTCVersion = fmt.Sprintf("%d.%d", libs.NVRTCVersion[0], libs.NVRTCVersion[1])
		li.NVRTCChoice = libs.NVRTCChoice
	}
	if libs.CublasErr != nil {
		li.CublasError = libs.CublasErr.Error()
	}
	rep.Libs = li
	dev, err := cuda.Open(0)
	if err != nil {
		fail("%v", err)
		return rep
	}
	info := dev.Info()
	rep.Device = &info
	if archs, err := libs.SupportedArchs(); err == nil {
		t, terr := cuda.ChooseTarget(info.Arch(), archs)
		rep.Notes["nvrtc"] = []string{fmt.Sprintf("supported archs %v, target %+v %v", archs, t, terr)}
	}
	rep.SelfTests = cuda.SelfTest(dev)
	dev.Close()
	for _, r := range rep.SelfTests {
		if !r.OK {
			fail("self-test %s: %s", r.Name, r.Detail)
		}
	}

	cfg, err := nets.Preset(preset)
	if err != nil {
		fail("%v", err)
		return rep
	}
	net, err := nets.New(cfg, 1)
	if err != nil {
		fail("%v", err)
		return rep
	}
	perturbBN(net)
	maxBatch := 1
	for _, b := range batches {
		maxBatch = max(maxBatch, b)
	}
	ctx := context.Background()

	// (c) Compare with the cpu backend.
	cmpBatch := compareBatch(batches)
	in := randInput(cmpBatch*net.InputSize(), 3)
	wantP := make([]float32, cmpBatch*net.PolicySize())
	wantV := make([]float32, cmpBatch)
	cpu, _ := nets.NewCPUBackend(net.Clone(), nets.BackendOptions{MaxBatch: 256})
	if err := cpu.Evaluate(ctx, cmpBatch, in, wantP, wantV); err != nil {
		fail("cpu backend: %v", err)
		return rep
	}
	backends := map[string]*cudabackend.Backend{}
	defer func() {
		for _, b := range backends {
			b.Close()
		}
	}()
	for _, p := range precs {
		for _, graphs := range []bool{false, true} {
			cr := compareResult{Preset: preset, Precision: string(p), Graphs: graphs, Batch: cmpBatch,
				Tolerance: cudabackend.Tolerance(p), ValueTol: cudabackend.ValueTolerance(p)}
			b, err := cudabackend.Open(net, cudabackend.Options{MaxBatch: maxBatch, Precision: p, Graphs: graphs})
			if err != nil {
				cr.Error = err.Error()
				fail("open cuda %s graphs=%v: %v", p, graphs, err)
				rep.Compare = append(rep.Compare, cr)
				continue
			}
			backends[fmt.Sprint(p, graphs)] = b
			if p == cudabackend.Auto { // say what auto chose, and hold it to that precision's tolerance
				cr.Precision = fmt.Sprintf("auto=%s", b.Options().Precision)
				cr.Tolerance = cudabackend.Tolerance(b.Options().Precision)
				cr.ValueTol = cudabackend.ValueTolerance(b.Options().Precision)
			}
			gotP := make([]float32, len(wantP))
			gotV := make([]float32, cmpBatch)
			for range 2 {
				if err = b.Evaluate(ctx, cmpBatch, in, gotP, gotV); err != nil {
					break
				}
			}
			if err != nil {
				cr.Error = err.Error()
				fail("cuda %s graphs=%v: %v", p, graphs, err)
			} else {
				dp, dv := cudabackend.Compare(gotP, wantP), cudabackend.Compare(gotV, wantV)
				cr.PolicyDiff, cr.PolicyScale, cr.PolicyRel, cr.ValueDiff = dp.MaxAbs, dp.Scale, dp.Rel(), dv.MaxAbs
				if dp.Rel() > cr.Tolerance || dv.Rel() > cr.ValueTol {
					fail("cuda %s graphs=%v differs from cpu by %g relative on the policy (scale %g, tolerance %g) and %g on the value (tolerance %g)",
						p, graphs, dp.Rel(), dp.Scale, cr.Tolerance, dv.Rel(), cr.ValueTol)
				}
			}
			rep.Compare = append(rep.Compare, cr)
		}
	}

	// (d) Throughput against batch size.
	for _, p := range precs {
		for _, graphs := range []bool{false, true} {
			b := backends[fmt.Sprint(p, graphs)]
			if b == nil {
				continue
			}
			for _, n := range batches {
				r := timeBackend(ctx, b, n, minTime)
				r.Precision, r.Graphs = string(p), graphs
				rep.Bench = append(rep.Bench, r)
			}
		}
	}
	if cpuBench {
		for _, n := range batches {
			if n > 256 {
				break
			}
			rep.Bench = append(rep.Bench, timeBackend(ctx, cpu, n, minTime))
		}
	}
	rep.OK = rep.Error == ""
	return rep
}

func timeBackend(ctx context.Context, b nets.Backend, n int, minTime time.Duration) benchResult {
	in, pol := b.Shape()
	r := benchResult{Backend: b.Name(), Batch: n}
	input := randInput(n*in, uint64(n))
	policy := make([]float32, n*pol)
	value := make([]float32, n)
	for range 3 { // warm up (graph capture, cuBLAS heuristics)
		if err := b.Evaluate(ctx, n, input, policy, value); err != nil {
			r.Error = err.Error()
			return r
		}
	}
	start := time.Now()
	for time.Since(start) < minTime || r.Iters < 5 {
		if err := b.Evaluate(ctx, n, input, policy, value); err != nil {
			r.Error = err.Error()
			return r
		}
		r.Iters++
	}
	el := time.Since(start).Seconds()
	r.MsPerCall = 1000 * el / float64(r.Iters)
	r.EvalsPerS = float64(n*r.Iters) / el
	return r
}

// perturbBN gives batch norms non-trivial statistics so that folding
// matters in the comparison.
func perturbBN(net *nets.Net) {
	r := games.NewRand(17)
	for _, q := range net.Params() {
		switch {
		case strings.HasSuffix(q.Name, "running_mean"):
			for i := range q.Data {
				q.Data[i] = float32(r.NormFloat64() * 0.1)
			}
		case strings.HasSuffix(q.Name, "running_var"):
			for i := range q.Data {
				q.Data[i] = float32(0.5 + r.Float64())
			}
		}
	}
	net.Invalidate()
}

func randInput(n int, seed uint64) []float32 {
	r := games.NewRand(seed)
	x := make([]float32, n)
	for i := range x {
		if r.Float64() < 0.3 {
			x[i] = 1
		}
	}
	return x
}
