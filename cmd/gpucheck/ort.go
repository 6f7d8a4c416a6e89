package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/nets/cudabackend"
	"github.com/canopy-go/canopy/nets/ortbackend"
)

// ortShape is the Canopy network timed beside an ONNX model: the model's
// input planes, board and policy size with these tower sizes (those of
// nets/ortbackend/testdata/bench.onnx by default), so that Canopy's
// backends and ONNX Runtime's providers run the same architecture and
// arithmetic. The weights differ: agreement is checked per engine (cuda
// against cpu above, each ORT provider against ORT's CPU here).
type ortShape struct {
	Channels, Blocks, ValueHidden int
}

// ortInfo is what the report says about ONNX Runtime.
type ortInfo struct {
	Library   string   `json:"library,omitempty"`
	Version   string   `json:"version,omitempty"`
	Providers []string `json:"providers,omitempty"`
	Model     string   `json:"model,omitempty"`
	Input     string   `json:"input,omitempty"`
	Skipped   []string `json:"skipped,omitempty"` // one line per provider or part not run, with the reason
}

// runORT compares ONNX Runtime's CUDA and TensorRT providers with its CPU
// provider on model, and times every provider there is, ORT-CPU and the
// cpu backend (up to batch 256 when cpuBench) and Canopy's cuda backend
// (fp32 and the device's auto precision) on a Canopy network of the
// model's shape. A provider or backend that is not there is skipped with
// one line saying why; a provider that opens but disagrees or fails is a
// failure.
func runORT(rep *report, model string, shape ortShape, batchList string, minTime time.Duration, cpuBench bool) {
	info := &ortInfo{Model: model}
	rep.ORT = info
	skip := func(format string, a ...any) {
		line := fmt.Sprintf(format, a...)
		info.Skipped = append(info.Skipped, line)
		if len(line) > 300 { // the JSON keeps the whole reason
			line = line[:300] + "..."
		}
		fmt.Fprintln(os.Stderr, "gpucheck: ort:", line)
	}
	fail := func(format string, a ...any) {
		msg := fmt.Sprintf(format, a...)
		if rep.Error == "" {
			rep.Error = msg
		} else {
			rep.Error += "; " + msg
		}
	}
	if model == "" {
		skip("skipped: no --onnx model given (make gpu-check copies nets/ortbackend/testdata/bench.onnx to .device/bench.onnx)")
		return
	}
	batches, err := parseList(batchList)
	if err != nil {
		fail("%v", err)
		return
	}
	lib, err := ortbackend.Load()
	if err != nil {
		skip("skipped: %v", err)
		return
	}
	info.Library, info.Version, info.Providers = lib.Path, lib.Version, lib.Providers
	maxBatch := 1
	for _, b := range batches {
		maxBatch = max(maxBatch, b)
	}
	ctx := context.Background()
	ref, err := ortbackend.Open(nil, ortbackend.Options{Model: model, MaxBatch: maxBatch, Threads: min(runtime.GOMAXPROCS(0), 8)})
	if err != nil {
		fail("ort cpu on %s: %v", model, err)
		return
	}
	defer ref.Close()
	inT, _, _ := ref.Model()
	info.Input = inT.String()
	cmpBatch := compareBatch(batches)
	if cmpBatch > ref.MaxBatch() {
		cmpBatch = ref.MaxBatch()
	}
	inSize, polSize := ref.Shape()
	in := randInput(cmpBatch*inSize, 5)
	wantP, wantV := make([]float32, cmpBatch*polSize), make([]float32, cmpBatch)
	if err := ref.Evaluate(ctx, cmpBatch, in, wantP, wantV); err != nil {
		fail("ort cpu: %v", err)
		return
	}
	for _, p := range []ortbackend.Provider{ortbackend.CUDA, ortbackend.TensorRT} {
		name := "ort-" + string(p)
		b, err := ortbackend.Open(nil, ortbackend.Options{Model: model, MaxBatch: maxBatch, Provider: p})
		var pe *ortbackend.ProviderError
		if errors.As(err, &pe) {
			skip("%s skipped: %v", name, err)
			continue
		}
		// ONNX Runtime's CUDA kernels may use TF32 (its use_tf32 default)
		// and TensorRT may too: both are held to TF32's tolerance.
		cr := compareResult{Preset: model, Precision: name, Batch: cmpBatch,
			Tolerance: cudabackend.Tolerance(cudabackend.TF32), ValueTol: cudabackend.ValueTolerance(cudabackend.TF32)}
		if err != nil {
			cr.Error = err.Error()
			fail("%s: %v", name, err)
			rep.Compare = append(rep.Compare, cr)
			continue
		}
		gotP, gotV := make([]float32, len(wantP)), make([]float32, cmpBatch)
		for range 2 { // the first run builds TensorRT's engine
			if err = b.Evaluate(ctx, cmpBatch, in, gotP, gotV); err != nil {
				break
			}
		}
		if err != nil {
			cr.Error = err.Error()
			fail("%s: %v", name, err)
		} else {
			dp, dv := cudabackend.Compare(gotP, wantP), cudabackend.Compare(gotV, wantV)
			cr.PolicyDiff, cr.PolicyScale, cr.PolicyRel, cr.ValueDiff = dp.MaxAbs, dp.Scale, dp.Rel(), dv.MaxAbs
			if dp.Rel() > cr.Tolerance || dv.Rel() > cr.ValueTol {
				fail("%s differs from ort-cpu by %g relative on the policy (tolerance %g) and %g on the value (tolerance %g)",
					name, dp.Rel(), cr.Tolerance, dv.Rel(), cr.ValueTol)
			}
		}
		rep.Compare = append(rep.Compare, cr)
		if err == nil {
			for _, n := range batches {
				r := timeBackend(ctx, b, n, minTime)
				r.Backend = name
				rep.Bench = append(rep.Bench, r)
			}
		}
		b.Close()
	}

	// Canopy's backends on a network of the model's shape.
	if len(inT.Shape) != 4 {
		skip("canopy backends on the model's shape skipped: input %s is not [B, planes, height, width]", inT)
		return
	}
	cfg := nets.Config{InputPlanes: int(inT.Shape[1]), Height: int(inT.Shape[2]), Width: int(inT.Shape[3]), PolicySize: polSize,
		Channels: shape.Channels, Blocks: shape.Blocks, ValueHidden: shape.ValueHidden}
	net, err := nets.New(cfg, 1)
	if err != nil {
		fail("canopy net of the model's shape: %v", err)
		return
	}
	for _, p := range []cudabackend.Precision{cudabackend.FP32, cudabackend.Auto} {
		b, err := cudabackend.Open(net, cudabackend.Options{MaxBatch: maxBatch, Precision: p})
		if err != nil {
			skip("canopy cuda %s on the model's shape skipped: %v", p, err)
			continue
		}
		for _, n := range batches {
			r := timeBackend(ctx, b, n, minTime)
			r.Backend, r.Precision = "cuda-model-shape", string(b.Options().Precision)
			rep.Bench = append(rep.Bench, r)
		}
		b.Close()
	}
	if cpuBench {
		cpu, _ := nets.NewCPUBackend(net.Clone(), nets.BackendOptions{MaxBatch: 256})
		for _, n := range batches {
			if n > 256 {
				break
			}
			r := timeBackend(ctx, cpu, n, minTime)
			r.Backend = "cpu-model-shape"
			rep.Bench = append(rep.Bench, r)
			r = timeBackend(ctx, ref, n, minTime)
			r.Backend = "ort-cpu"
			rep.Bench = append(rep.Bench, r)
		}
	}
}
