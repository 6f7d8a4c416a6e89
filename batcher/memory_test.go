package batcher

import (
	"runtime"
	"testing"

	"github.com/canopy-go/canopy/nets"
)

// RingBytes is what New allocates (runtime.MemStats around it), within
// 5% plus 64 KiB for the batcher's own record, timer and goroutines.
func TestRingBytesMatchesAllocations(t *testing.T) {
	const in, ps = 126, 7
	be := nets.NewRandomBackend(in, ps, 1, nets.BackendOptions{})
	for _, o := range []Options{{MaxBatch: 256, Slots: 10000}, {MaxBatch: 1024}, {Slots: 70000}} {
		want := RingBytes(o, be.PreferredBatch(), in, ps)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		b, err := New(be, o)
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		b.Close()
		got := int64(after.TotalAlloc - before.TotalAlloc)
		t.Logf("%+v: allocated %d bytes, RingBytes %d (%.3f)", o, got, want, float64(got)/float64(want))
		if got < want*95/100 || got > want*105/100+64<<10 {
			t.Errorf("%+v: allocated %d bytes, RingBytes says %d", o, got, want)
		}
	}
}
