package train

import (
	"context"
	"runtime"
	"testing"
)

// MemoryBytes is what Run allocates for its minibatches (runtime.MemStats
// around a one-step run with a large batch, whose scratch dominates),
// within -20% and +60% plus 1 MiB: the GEMMs' packing buffers are pooled
// per kernel thread, a large share for this tiny network's narrow
// layers (about a tenth of the total for the built-in networks, see
// nets.TestTrainBytesMatchesAllocations); the guard needs the order of
// magnitude, which the old code did not check at all: `canopy train --batch 65536` died of
// out-of-memory instead of being refused with this estimate (issue 46
// item 4).
func TestMemoryBytesMatchesAllocations(t *testing.T) {
	if raceEnabled {
		// sync.Pool drops items at random under the race detector, so the
		// kernels' pooled buffers are allocated again and again (1.99x
		// here under -race), as in nets.TestTrainBytesMatchesAllocations.
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	ds := loadTest(t, "tictactoe", 6, 14, true)
	net := tinyNet(t, ds.Game(), 5)
	opt := DefaultOptions()
	opt.Steps, opt.Batch, opt.Polyak = 1, 8192, 0
	want := opt.MemoryBytes(net)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := Run(context.Background(), net, ds, opt, nil); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	got := int64(after.TotalAlloc - before.TotalAlloc)
	t.Logf("allocated %d bytes, MemoryBytes %d (%.3f)", got, want, float64(got)/float64(want))
	if got < want*8/10 || got > want*16/10+1<<20 {
		t.Errorf("allocated %d bytes, MemoryBytes says %d (want within -20%%, +60%% + 1 MiB)", got, want)
	}
}
