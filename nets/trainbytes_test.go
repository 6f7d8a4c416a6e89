package nets

import (
	"runtime"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/all"
)

// TrainBytes is what the training scratch takes (runtime.MemStats around
// the first ForwardTrain and Backward of a batch), within 20% plus 1 MiB
// (the GEMMs' packing buffers are pooled per kernel thread, so their
// share varies with the threads).
func TestTrainBytesMatchesAllocations(t *testing.T) {
	if raceEnabled {
		// sync.Pool drops items at random under the race detector, so the
		// kernels' pooled buffers are allocated again and again (it failed
		// there before Winograd training too: 1.31x at 5048510).
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	for _, c := range []struct {
		spec string
		prec Precision
	}{{"tictactoe", FP32}, {"connect4", FP32}, {"connect4", BF16}, {"sushigo:players=2", FP32}, {"sushigo:players=2", BF16}} {
		spec := c.spec + "/" + c.prec.String()
		g := games.MustNew(c.spec)
		cfg, err := DefaultConfig(g)
		if err != nil {
			t.Fatal(err)
		}
		n, err := New(cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		n.SetTrainPrecision(c.prec)
		const batch = 512
		want := n.TrainBytes(batch)
		in := make([]float32, batch*n.InputSize())
		pol, val := make([]float32, batch*n.PolicySize()), make([]float32, batch)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if err := n.ForwardTrain(batch, in, pol, val); err != nil {
			t.Fatal(err)
		}
		if err := n.Backward(pol, val); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		got := int64(after.TotalAlloc - before.TotalAlloc)
		t.Logf("%s: allocated %d bytes, TrainBytes %d (%.3f)", spec, got, want, float64(got)/float64(want))
		if got < want*8/10 || got > want*12/10+1<<20 {
			t.Errorf("%s: allocated %d bytes, TrainBytes says %d (want within 20%% + 1 MiB)", spec, got, want)
		}
	}
}
