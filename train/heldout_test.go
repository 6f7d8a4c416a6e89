package train

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
)

// HeldOutLoss is the mean over the chosen rows of each row's own
// inference loss, the rows evenly spaced when limited.
func TestHeldOutLoss(t *testing.T) {
	g := games.MustNew("connect4")
	dir := filepath.Join(t.TempDir(), "run")
	writeRun(t, dir, g, 9, 3, 5, true)
	ds, err := LoadDataset([]string{dir}, g, DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	net := tinyNet(t, g, 2)
	O, A := ds.obsSize, ds.actions
	rowLoss := func(i int) nets.Loss {
		b := nets.Batch{N: 1, Input: make([]float32, O), Legal: make([]float32, A), Value: make([]float32, 1)}
		pol, val, legal := ds.Row(i, b.Input)
		b.Policy, b.Value[0] = pol, val
		for a, l := range legal {
			b.Legal[a] = float32(l)
		}
		l, err := nets.InferenceLoss(net, &b)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	n := ds.Len()
	lo, hi := 3, n-2
	for _, limit := range []int{0, 7} {
		rows := []int{}
		for i := lo; i < hi; i++ {
			rows = append(rows, i)
		}
		if limit > 0 {
			rows = rows[:0]
			for k := range limit {
				rows = append(rows, lo+k*(hi-lo)/limit)
			}
		}
		var want nets.Loss
		for _, i := range rows {
			l := rowLoss(i)
			want.Policy += l.Policy / float64(len(rows))
			want.Value += l.Value / float64(len(rows))
		}
		got, err := HeldOutLoss(net, ds, lo, hi, limit)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got.Policy-want.Policy) > 1e-5 || math.Abs(got.Value-want.Value) > 1e-5 {
			t.Errorf("limit %d: %+v, want the rows' mean policy %.6f value %.6f", limit, got, want.Policy, want.Value)
		}
	}
	if _, err := HeldOutLoss(net, ds, 5, 5, 0); err == nil {
		t.Error("an empty range: no error")
	}
}
