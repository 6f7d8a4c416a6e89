package bench

import (
	"context"
	"testing"
	"time"

	"github.com/canopy-go/canopy/nets"
)

func tinyBackend(t *testing.T, maxBatch int) nets.Backend {
	t.Helper()
	net, err := nets.New(nets.Config{InputPlanes: 2, Height: 3, Width: 3, PolicySize: 9, Channels: 4, Blocks: 1, ValueHidden: 4}, 1)
	if err != nil {
		t.Fatal(err)
	}
	be, err := nets.NewCPUBackend(net, nets.BackendOptions{MaxBatch: maxBatch})
	if err != nil {
		t.Fatal(err)
	}
	return be
}

func TestNetBench(t *testing.T) {
	be := tinyBackend(t, 8)
	var done []int
	r, err := Net(context.Background(), NetConfig{Backend: be, Batches: []int{1, 8}, Duration: 30 * time.Millisecond, Seed: 1,
		Progress: func(d, n int) { done = append(done, d) }})
	if err != nil {
		t.Fatal(err)
	}
	if r.Backend != "cpu" || r.InputSize != 18 || r.PolicySize != 9 || r.MaxBatch != 8 || len(r.Rows) != 2 || len(done) != 2 {
		t.Fatalf("result %+v, progress %v", r, done)
	}
	for i, row := range r.Rows {
		if row.Batch != []int{1, 8}[i] || row.Calls < MinCalls || row.Evals != int64(row.Calls*row.Batch) ||
			row.Seconds < 0.025 || row.EvalsPerSec <= 0 || row.P50ms <= 0 || row.P99ms < row.P50ms {
			t.Errorf("row %d: %+v", i, row)
		}
	}
}

func TestNetBenchErrors(t *testing.T) {
	be := tinyBackend(t, 8)
	ctx := context.Background()
	for name, cfg := range map[string]NetConfig{
		"no backend":   {Batches: []int{1}, Duration: time.Millisecond},
		"no batches":   {Backend: be, Duration: time.Millisecond},
		"zero batch":   {Backend: be, Batches: []int{0}, Duration: time.Millisecond},
		"above max":    {Backend: be, Batches: []int{9}, Duration: time.Millisecond},
		"zero seconds": {Backend: be, Batches: []int{1}},
	} {
		if _, err := Net(ctx, cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Net(cctx, NetConfig{Backend: be, Batches: []int{1}, Duration: time.Second}); err == nil {
		t.Error("cancelled context: no error")
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	if p50, p99 := percentileMs(d, 0.5), percentileMs(d, 0.99); p50 != 50 || p99 != 99 {
		t.Errorf("p50 %v p99 %v", p50, p99)
	}
	if percentileMs(nil, 0.5) != 0 || percentileMs(d[:1], 0.99) != 1 {
		t.Error("edge cases")
	}
}
