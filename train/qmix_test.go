package train

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// writeQShard writes the positions of six random games of g as a bare
// shard, with a root_q array of values spread over [-1, 1] when withQ,
// and returns its path, the positions and the q values.
func writeQShard(t *testing.T, dir, name string, g games.Game, seed uint64, withQ bool) (string, []position, []float32) {
	t.Helper()
	var ps []position
	for _, r := range randomGames(g, 6, seed) {
		ps = append(ps, r...)
	}
	arr := shardArrays(g, ps, true)
	q := make([]float32, len(ps))
	for i := range q {
		q[i] = float32(i%9)/4 - 1 // -1, -0.75, ..., 1
	}
	if withQ {
		arr = append(arr, testArray{name: "root_q", descr: "<f4", shape: []int{len(ps)}, data: q})
	}
	path := filepath.Join(dir, name)
	writeFile(t, path, npzBytes(t, arr))
	return path, ps, q
}

// With QMix w the batches' value targets are (1-w)*z + w*q for the rows
// drawn (z the outcome, q the shard's root_q); w = 0 keeps z exactly, and
// the rows drawn do not depend on w.
func TestQMixTargets(t *testing.T) {
	g := games.MustNew("tictactoe")
	path, ps, q := writeQShard(t, t.TempDir(), "a.npz", g, 1, true)
	ds, err := LoadDataset([]string{path}, g, DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !ds.HasRootQ() {
		t.Fatal("HasRootQ false for a shard with root_q")
	}
	for i := range ps {
		if ds.RootQ(i) != q[i] {
			t.Fatalf("RootQ(%d) = %v, want %v", i, ds.RootQ(i), q[i])
		}
	}
	for _, w := range []float64{0, 0.25, 1} {
		s, err := NewSampler(ds, ds.Len(), 7, false)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.SetQMix(w); err != nil {
			t.Fatal(err)
		}
		b := s.Next()
		O, A := games.ObservationSize(g), g.NumActions()
		for k := range b.N {
			i := findRow(t, ds, b.Input[k*O:(k+1)*O], b.Policy[k*A:(k+1)*A])
			z := ps[i].value
			want := float32((1-w)*float64(z) + w*float64(q[i]))
			if w == 0 && b.Value[k] != z {
				t.Errorf("qmix 0, row %d: value %v, want the outcome %v", i, b.Value[k], z)
			}
			if d := b.Value[k] - want; d > 1e-6 || d < -1e-6 {
				t.Errorf("qmix %v, row %d: value %v, want %v (z %v, q %v)", w, i, b.Value[k], want, z, q[i])
			}
		}
	}
}

// QMix > 0 over data without root Q is an error naming the shard; qmix
// out of range and a root_q outside [-1, 1] are errors too.
func TestQMixErrors(t *testing.T) {
	g := games.MustNew("tictactoe")
	dir := t.TempDir()
	withQ, _, _ := writeQShard(t, dir, "with.npz", g, 1, true)
	without, _, _ := writeQShard(t, dir, "without.npz", g, 2, false)
	ds, err := LoadDataset([]string{withQ, without}, g, DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.HasRootQ() {
		t.Error("HasRootQ true with a shard lacking root_q")
	}
	s, err := NewSampler(ds, 4, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetQMix(0); err != nil {
		t.Errorf("qmix 0 without root_q: %v", err)
	}
	if err := s.SetQMix(0.5); err == nil || !strings.Contains(err.Error(), "without.npz") || !strings.Contains(err.Error(), "root_q") {
		t.Errorf("qmix 0.5 without root_q: %v", err)
	}
	if err := s.SetQMix(1.5); err == nil {
		t.Error("qmix 1.5: no error")
	}
	o := DefaultOptions()
	if o.QMix != 0 {
		t.Errorf("default qmix %v, want 0", o.QMix)
	}
	o.QMix = -0.1
	if err := o.Check(); err == nil || !strings.Contains(err.Error(), "qmix") {
		t.Errorf("qmix -0.1: %v", err)
	}

	var ps []position
	for _, r := range randomGames(g, 1, 3) {
		ps = append(ps, r...)
	}
	bad := make([]float32, len(ps))
	bad[0] = 2
	path := filepath.Join(dir, "bad.npz")
	writeFile(t, path, npzBytes(t, append(shardArrays(g, ps, true), testArray{name: "root_q", descr: "<f4", shape: []int{len(ps)}, data: bad})))
	if _, err := LoadDataset([]string{path}, g, DatasetOptions{}); err == nil || !strings.Contains(err.Error(), "root_q") {
		t.Errorf("root_q 2: %v", err)
	}
}

// Run honours QMix: a run that mixes the root values in trains to other
// weights than one on the outcomes alone, and a run with qmix on data
// without root_q fails before training.
func TestRunUsesQMix(t *testing.T) {
	g := games.MustNew("tictactoe")
	dir := t.TempDir()
	withQ, _, _ := writeQShard(t, dir, "with.npz", g, 1, true)
	without, _, _ := writeQShard(t, dir, "without.npz", g, 2, false)
	run := func(path string, w float64) (float64, error) {
		ds, err := LoadDataset([]string{path}, g, DatasetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		o := DefaultOptions()
		o.Steps, o.Batch, o.QMix, o.Polyak = 5, 8, w, 0
		res, err := Run(context.Background(), tinyNet(t, g, 1), ds, o, nil)
		return res.FinalLoss.Value, err
	}
	v0, err0 := run(withQ, 0)
	v1, err1 := run(withQ, 1)
	if err0 != nil || err1 != nil || v0 == v1 {
		t.Errorf("value loss with qmix 0: %v (%v), qmix 1: %v (%v): want two different successful runs", v0, err0, v1, err1)
	}
	if _, err := run(without, 0.5); err == nil || !strings.Contains(err.Error(), "root_q") {
		t.Errorf("qmix 0.5 on a shard without root_q: %v", err)
	}
}
