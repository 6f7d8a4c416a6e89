package rl

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Loss and its gradient against PyTorch autograd on fixed data
// (testdata/ppo_loss.json, written by testdata/make_reference.py with
// CleanRL's loss on masked logits, float64 arithmetic).
func TestLossMatchesPyTorch(t *testing.T) {
	buf, err := os.ReadFile(filepath.Join("testdata", "ppo_loss.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		B, P                                  int
		Clip                                  float64   `json:"clip"`
		ValueClip                             float64   `json:"value_clip"`
		ValueCoef                             float64   `json:"value_coef"`
		EntropyCoef                           float64   `json:"entropy_coef"`
		OldLogProb                            []float32 `json:"old_logprob"`
		OldValue                              []float32 `json:"old_value"`
		Legal, Logits, Values                 []float32
		Returns, Advantages, DLogits, DValues []float32
		Action                                []int32
		Loss, Policy, Value, Entropy          float64
	}
	if err := json.Unmarshal(buf, &ref); err != nil {
		t.Fatal(err)
	}
	o := LossOptions{ClipRange: ref.Clip, ValueClip: ref.ValueClip, ValueCoef: ref.ValueCoef, EntropyCoef: ref.EntropyCoef, NormalizeAdvantages: true}
	mb := &Minibatch{B: ref.B, P: ref.P, Legal: ref.Legal, Action: ref.Action, OldLogProb: ref.OldLogProb,
		OldValue: ref.OldValue, Advantage: ref.Advantages, Return: ref.Returns}
	dl, dv := make([]float32, ref.B*ref.P), make([]float32, ref.B)
	st, err := Loss(o, mb, ref.Logits, ref.Values, dl, dv)
	if err != nil {
		t.Fatal(err)
	}
	const tol = 1e-5
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"loss", st.Total, ref.Loss}, {"policy", st.Policy, ref.Policy}, {"value", st.Value, ref.Value}, {"entropy", st.Entropy, ref.Entropy}} {
		if !near(c.got, c.want, tol) {
			t.Errorf("%s: %.8f, PyTorch %.8f", c.name, c.got, c.want)
		}
	}
	for i := range dl {
		if !near(float64(dl[i]), float64(ref.DLogits[i]), tol) {
			t.Errorf("dlogits[%d]: %g, PyTorch %g", i, dl[i], ref.DLogits[i])
		}
	}
	for i := range dv {
		if !near(float64(dv[i]), float64(ref.DValues[i]), tol) {
			t.Errorf("dvalues[%d]: %g, PyTorch %g", i, dv[i], ref.DValues[i])
		}
	}
	if st.ClipFrac == 0 {
		t.Error("the reference data clip no ratio")
	}
}
