package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/internal/cputime"
	"github.com/canopy-go/canopy/nets"
)

// NetConfig is one raw backend throughput measurement: Backend.Evaluate
// called back to back on full batches of each size in Batches, for
// Duration per size, from one goroutine.
type NetConfig struct {
	Backend nets.Backend
	// Batches are the batch sizes, each in [1, Backend.MaxBatch()],
	// measured in order.
	Batches []int
	// Duration is the measuring time per batch size (after one untimed
	// warm-up call). A size gets at least MinCalls calls whatever it
	// takes.
	Duration time.Duration
	// Seed fixes the inputs: each input float is 1 with probability 0.3,
	// else 0, like the sparse planes games produce (dense networks cost
	// the same whatever the values).
	Seed uint64
	// Progress, when non-nil, is called after each batch size with the
	// number of sizes done.
	Progress func(done, total int)
	// Staged keeps the input buffer unregistered with a backend that
	// takes registered inputs (nets.InputRegistrar, the cuda backend), so
	// that each call times the backend's own staging copy of the rows too.
	// By default the buffer is registered, as the batcher's ring is in a
	// search.
	Staged bool
}

// MinCalls is the fewest timed calls per batch size, so that the
// percentiles mean something even for slow sizes.
const MinCalls = 3

// maxLatencies bounds the per-call latencies kept for the percentiles
// (older calls still count in the rates).
const maxLatencies = 1 << 20

// NetBatchResult is the measurement of one batch size. Rates are per
// wall-clock second; EvalsPerCPUSec divides by the process's CPU time over
// the same span (on a shared machine the wall clock counts time spent
// waiting for a core; the CPU time counts every kernel thread).
type NetBatchResult struct {
	Batch          int     `json:"batch"`
	Calls          int     `json:"calls"`
	Evals          int64   `json:"evals"`
	Seconds        float64 `json:"seconds"`
	CPUSeconds     float64 `json:"cpu_seconds"`
	EvalsPerSec    float64 `json:"evals_per_sec"`
	EvalsPerCPUSec float64 `json:"evals_per_cpu_sec"` // 0 where CPU time cannot be read
	P50ms          float64 `json:"ms_per_batch_p50"`
	P99ms          float64 `json:"ms_per_batch_p99"`
}

// NetResult is a whole measurement.
type NetResult struct {
	Backend    string `json:"backend"`
	InputSize  int    `json:"input_size"`
	PolicySize int    `json:"policy_size"`
	MaxBatch   int    `json:"max_batch"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	// RegisteredInput: the input buffer was registered with the backend
	// (no staging copy per call; see NetConfig.Staged).
	RegisteredInput bool             `json:"registered_input"`
	Rows            []NetBatchResult `json:"rows"`
}

// Net measures cfg.Backend's evaluations per second at each batch size.
// It stops early, returning ctx's error, when ctx ends. Invalid
// configurations (no backend, no batch sizes, a size outside
// [1, MaxBatch], a non-positive duration) are errors before anything runs.
func Net(ctx context.Context, cfg NetConfig) (NetResult, error) {
	be := cfg.Backend
	if be == nil {
		return NetResult{}, errors.New("bench net: no backend")
	}
	if len(cfg.Batches) == 0 {
		return NetResult{}, errors.New("bench net: no batch sizes")
	}
	if cfg.Duration <= 0 {
		return NetResult{}, fmt.Errorf("bench net: duration %v must be positive", cfg.Duration)
	}
	mb := 0
	for _, b := range cfg.Batches {
		if b < 1 || b > be.MaxBatch() {
			return NetResult{}, fmt.Errorf("bench net: batch %d outside [1, %d] (the %s backend's maximum)", b, be.MaxBatch(), be.Name())
		}
		mb = max(mb, b)
	}
	in, ps := be.Shape()
	input := make([]float32, mb*in)
	registered := false
	if r, ok := be.(nets.InputRegistrar); ok && !cfg.Staged {
		buf := nets.PageAligned(mb * in)
		if r.RegisterInput(buf) == nil {
			input, registered = buf, true
			defer r.UnregisterInput(buf)
		}
	}
	rng := games.NewRand(cfg.Seed)
	for i := range input {
		if rng.Float64() < 0.3 {
			input[i] = 1
		}
	}
	policy, value := make([]float32, mb*ps), make([]float32, mb*nets.ValueSize(be))
	res := NetResult{Backend: be.Name(), InputSize: in, PolicySize: ps, MaxBatch: be.MaxBatch(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		RegisteredInput: registered}
	lat := make([]time.Duration, 0, 1024)
	for i, batch := range cfg.Batches {
		// Warm-up: lazy kernel threads, graph capture, caches.
		if err := be.Evaluate(ctx, batch, input, policy, value); err != nil {
			return res, fmt.Errorf("bench net: batch %d: %w", batch, err)
		}
		lat = lat[:0]
		cpu0, t0 := cputime.Now(), time.Now()
		calls := 0
		for calls < MinCalls || time.Since(t0) < cfg.Duration {
			if err := ctx.Err(); err != nil {
				return res, err
			}
			c0 := time.Now()
			if err := be.Evaluate(ctx, batch, input, policy, value); err != nil {
				return res, fmt.Errorf("bench net: batch %d: %w", batch, err)
			}
			if len(lat) < maxLatencies {
				lat = append(lat, time.Since(c0))
			}
			calls++
		}
		wall, cpu := time.Since(t0), cputime.Now()-cpu0
		r := NetBatchResult{Batch: batch, Calls: calls, Evals: int64(calls) * int64(batch),
			Seconds: wall.Seconds(), CPUSeconds: cpu.Seconds()}
		r.EvalsPerSec = float64(r.Evals) / r.Seconds
		if cputime.Supported() && cpu > 0 {
			r.EvalsPerCPUSec = float64(r.Evals) / r.CPUSeconds
		}
		slices.Sort(lat)
		r.P50ms, r.P99ms = percentileMs(lat, 0.50), percentileMs(lat, 0.99)
		res.Rows = append(res.Rows, r)
		if cfg.Progress != nil {
			cfg.Progress(i+1, len(cfg.Batches))
		}
	}
	return res, nil
}

// percentileMs is the q-quantile (nearest rank) of the sorted latencies,
// in milliseconds.
func percentileMs(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := min(len(sorted)-1, max(0, int(math.Ceil(q*float64(len(sorted))))-1))
	return float64(sorted[i]) / 1e6
}
