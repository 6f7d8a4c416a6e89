package nets

import (
	"math"
	"testing"
)

// InferenceLoss against the definition computed here from Forward's
// outputs: the cross-entropy of the target against the softmax over legal
// actions, and the squared value error, averaged over the batch.
func TestInferenceLoss(t *testing.T) {
	cfg := tinyConfigs["alphazero"]
	net, err := New(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	b := randomBatch(cfg, 5, 9)
	P := cfg.PolicySize
	logits, values := make([]float32, b.N*P), make([]float32, b.N)
	net.Forward(b.N, b.Input, logits, values)
	var wantP, wantV float64
	for i := range b.N {
		var z float64
		for a := range P {
			if b.Legal[i*P+a] != 0 {
				z += math.Exp(float64(logits[i*P+a]))
			}
		}
		for a := range P {
			if p := float64(b.Policy[i*P+a]); p > 0 {
				wantP -= p * (float64(logits[i*P+a]) - math.Log(z)) / float64(b.N)
			}
		}
		d := float64(values[i] - b.Value[i])
		wantV += d * d / float64(b.N)
	}
	got, err := InferenceLoss(net, b)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(got.Policy-wantP) > 1e-5 || math.Abs(got.Value-wantV) > 1e-6 || math.Abs(got.Total-wantP-wantV) > 1e-5 {
		t.Errorf("InferenceLoss %+v, want policy %.6f value %.6f", got, wantP, wantV)
	}
	b.Policy[1] = 0.5 // mass on an illegal action is an error
	b.Legal[1] = 0
	if _, err := InferenceLoss(net, b); err == nil {
		t.Error("target mass on an illegal action: no error")
	}
}
