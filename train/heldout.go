package train

import (
	"fmt"

	"github.com/canopy-go/canopy/nets"
)

// HeldOutLoss returns net's loss on positions lo..hi-1 of ds as the
// network plays (nets.InferenceLoss: batch norm's running statistics, no
// symmetries, no L2): on positions it never trained on, the loss that
// says whether training generalises or memorises. At most limit positions
// are used (0: all), evenly spaced over the range; the result is their
// mean.
func HeldOutLoss(net *nets.Net, ds *Dataset, lo, hi, limit int) (nets.Loss, error) {
	if lo < 0 || hi > ds.Len() || lo >= hi {
		return nets.Loss{}, fmt.Errorf("train: held-out rows %d..%d of a dataset of %d", lo, hi, ds.Len())
	}
	if net.InputSize() != ds.obsSize || net.PolicySize() != ds.actions {
		return nets.Loss{}, fmt.Errorf("train: network takes %d inputs and %d actions, the data has %d and %d",
			net.InputSize(), net.PolicySize(), ds.obsSize, ds.actions)
	}
	vs := net.ValueSize()
	if err := ds.CheckValueSize(vs); err != nil {
		return nets.Loss{}, fmt.Errorf("train: held-out data: %w", err)
	}
	n := hi - lo
	if limit > 0 && n > limit {
		n = limit
	}
	const batch = 64
	O, A := ds.obsSize, ds.actions
	b := nets.Batch{Input: make([]float32, batch*O), Policy: make([]float32, batch*A), Value: make([]float32, batch*vs)}
	if ds.HasLegal() {
		b.Legal = make([]float32, batch*A)
	}
	var sum nets.Loss
	for k := 0; k < n; k += batch {
		b.N = min(batch, n-k)
		for j := range b.N {
			// Row k+j of n evenly spaced rows of lo..hi-1.
			i := lo + int(int64(k+j)*int64(hi-lo)/int64(n))
			pol, val, legal := ds.Row(i, b.Input[j*O:(j+1)*O])
			copy(b.Policy[j*A:(j+1)*A], pol)
			if vs > 1 {
				copy(b.Value[j*vs:(j+1)*vs], ds.Values(i))
			}
			b.Value[j*vs] = val
			if b.Legal != nil {
				for a, l := range legal {
					b.Legal[j*A+a] = float32(l)
				}
			}
		}
		l, err := nets.InferenceLoss(net, &b)
		if err != nil {
			return nets.Loss{}, err
		}
		w := float64(b.N) / float64(n)
		sum.Policy += w * l.Policy
		sum.Value += w * l.Value
	}
	sum.Total = sum.Policy + sum.Value
	return sum, nil
}
