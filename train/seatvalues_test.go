package train

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/sushigo"
	_ "github.com/canopy-go/canopy/games/tetrislink"
	"github.com/canopy-go/canopy/nets"
)

// seatShard writes a shard of n random games of g whose per-player value
// targets (array values, unless omitted) are the final returns rotated
// so that the mover's comes first, computed here from the game.
func seatShard(t *testing.T, g games.Game, n int, seed uint64, withValues bool) string {
	t.Helper()
	return seatShardRV(t, g, n, seed, withValues, false)
}

// seatShardRV is seatShard, with a root_values array when withRV: row i
// starts with root_q's (i mod 7)/10, entry k > 0 is rootValue(i, k).
func seatShardRV(t *testing.T, g games.Game, n int, seed uint64, withValues, withRV bool) string {
	t.Helper()
	rng := games.NewRand(seed)
	A, np := g.NumActions(), g.NumPlayers()
	m := games.NewMask(A)
	ret := make([]float64, np)
	var obs, pol, val, vals []float32
	var legal []uint8
	rows := 0
	for range n {
		s := g.NewInitialState()
		var movers []int
		for !s.IsTerminal() {
			p := s.CurrentPlayer()
			o := make([]float32, games.ObservationSize(g))
			s.Observation(p, o)
			obs = append(obs, o...)
			s.Legal(m)
			var acts []games.Action
			po, lg := make([]float32, A), make([]uint8, A)
			for a := range m.All() {
				acts = append(acts, a)
				lg[a] = 1
			}
			for _, a := range acts {
				po[a] = 1 / float32(len(acts))
			}
			pol, legal = append(pol, po...), append(legal, lg...)
			movers = append(movers, p)
			s.Apply(acts[rng.IntN(len(acts))])
		}
		s.Returns(ret)
		for _, p := range movers {
			val = append(val, float32(ret[p]))
			for k := range np {
				vals = append(vals, float32(ret[(p+k)%np]))
			}
		}
		rows += len(movers)
	}
	arr := []testArray{
		{name: "obs", descr: "<f4", shape: append([]int{rows}, g.ObservationShape()...), data: obs},
		{name: "policy", descr: "<f4", shape: []int{rows, A}, data: pol},
		{name: "value", descr: "<f4", shape: []int{rows}, data: val},
		{name: "legal", descr: "|u1", shape: []int{rows, A}, data: legal},
		{name: "root_q", descr: "<f4", shape: []int{rows}, data: rootQ(rows)},
	}
	if withValues {
		arr = append(arr, testArray{name: "values", descr: "<f4", shape: []int{rows, np}, data: vals})
	}
	if withRV {
		rv := make([]float32, rows*np)
		q := rootQ(rows)
		for i := range rows {
			rv[i*np] = q[i]
			for k := 1; k < np; k++ {
				rv[i*np+k] = rootValue(i, k)
			}
		}
		arr = append(arr, testArray{name: "root_values", descr: "<f4", shape: []int{rows, np}, data: rv})
	}
	path := filepath.Join(t.TempDir(), "shard.npz")
	writeFile(t, path, npzBytes(t, arr))
	return path
}

// rootQ is a made-up root_q array: row i holds (i mod 7)/10.
func rootQ(n int) []float32 {
	q := make([]float32, n)
	for i := range q {
		q[i] = float32(i%7) / 10
	}
	return q
}

// rootValue is a made-up root value of player k (seat-rotated) at row i.
func rootValue(i, k int) float32 { return float32((i+3*k)%5)/5 - 0.4 }

// With root_values (self-play's search values for every player) qmix
// mixes each player's entry with its own root value: hand-computed
// targets (1-w)*z_k + w*q_k.
func TestSamplerRootValuesQMix(t *testing.T) {
	g := games.MustNew("tetrislink:players=3")
	ds, err := LoadDataset([]string{seatShardRV(t, g, 1, 4, true, true)}, g, DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.RootValues(0) == nil {
		t.Fatal("RootValues nil for a shard with root_values")
	}
	s, err := NewSampler(ds, 8, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetValueSize(3); err != nil {
		t.Fatal(err)
	}
	if err := s.SetQMix(0.25); err != nil {
		t.Fatal(err)
	}
	ref, _ := NewSampler(ds, 8, 1, false)
	b := s.Next()
	for k, i := range ref.perm[:8] {
		z := ds.Values(int(i))
		q := []float32{float32(int(i)%7) / 10, rootValue(int(i), 1), rootValue(int(i), 2)}
		for j := range 3 {
			want := float32(0.75*float64(z[j]) + 0.25*float64(q[j]))
			if got := b.Value[k*3+j]; got != want {
				t.Errorf("sample %d (row %d) player %d: target %v, want %v (z %v, q %v)", k, i, j, got, want, z[j], q[j])
			}
		}
	}
}

// The sampler hands a per-player head its rows whole, and qmix mixes the
// root Q into the mover's entry alone (data without root_values).
func TestSamplerSeatValuesQMix(t *testing.T) {
	g := games.MustNew("tetrislink:players=3")
	ds, err := LoadDataset([]string{seatShard(t, g, 1, 4, true)}, g, DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSampler(ds, 8, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetValueSize(4); err == nil {
		t.Error("a 4-player head on 3-player data: no error")
	}
	if err := s.SetValueSize(3); err != nil {
		t.Fatal(err)
	}
	if err := s.SetQMix(0.25); err != nil {
		t.Fatal(err)
	}
	// The sampler's order, replayed: the same seed draws the same rows.
	ref, _ := NewSampler(ds, 8, 1, false)
	b := s.Next()
	order := ref.perm[:8]
	if len(b.Value) != 8*3 {
		t.Fatalf("batch of %d values, want 24", len(b.Value))
	}
	for k, i := range order {
		want := ds.Values(int(i))
		mix := float32(0.75*float64(want[0]) + 0.25*float64(float32(int(i)%7)/10))
		if got := b.Value[k*3 : (k+1)*3]; got[0] != mix || got[1] != want[1] || got[2] != want[2] {
			t.Errorf("sample %d (row %d): values %v, want [%v %v %v]", k, i, got, mix, want[1], want[2])
		}
	}
}

// A per-player value head trains on per-player targets (its value loss,
// the mean over samples and players, halves), a scalar head still trains
// on the mover's value of the same data, and the head refuses data
// without per-player targets or of another player count.
func TestTrainSeatValues(t *testing.T) {
	g := games.MustNew("tetrislink:players=3")
	ds, err := LoadDataset([]string{seatShard(t, g, 2, 1, true)}, g, DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.SeatValues() != 3 {
		t.Fatalf("SeatValues %d, want 3", ds.SeatValues())
	}
	cfg, err := nets.Config{Preset: "tiny", Head: nets.HeadAlphaZero, Channels: 8, Blocks: 1, ValueHidden: 8, ValuePlayers: 3}.ForGame(g)
	if err != nil {
		t.Fatal(err)
	}
	vec, err := nets.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	opt := DefaultOptions()
	opt.Steps, opt.Batch, opt.MetricsEvery, opt.Optimizer, opt.LR, opt.L2 = 300, 16, 100, Adam, 0.003, 0
	res, err := Run(context.Background(), vec, ds, opt, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !(res.FinalLoss.Value < 0.5*res.FirstLoss.Value) {
		t.Errorf("per-player value loss %.4f -> %.4f; want it halved", res.FirstLoss.Value, res.FinalLoss.Value)
	}
	t.Logf("per-player value loss %.4f -> %.4f", res.FirstLoss.Value, res.FinalLoss.Value)
	held, err := HeldOutLoss(vec, ds, 0, ds.Len(), 64)
	if err != nil || !(held.Value < res.FirstLoss.Value) {
		t.Errorf("held-out loss %+v, %v", held, err)
	}

	cfg.ValuePlayers = 0
	scalar, _ := nets.New(cfg, 1)
	if sres, err := Run(context.Background(), scalar, ds, opt, nil); err != nil {
		t.Errorf("scalar head on data with per-player targets: %v", err)
	} else {
		t.Logf("scalar value loss %.4f -> %.4f", sres.FirstLoss.Value, sres.FinalLoss.Value)
	}

	bare, err := LoadDataset([]string{seatShard(t, g, 1, 2, false)}, g, DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), vec, bare, opt, nil); err == nil || !strings.Contains(err.Error(), "no per-player value targets") {
		t.Errorf("per-player head on data without them: %v", err)
	}
	if _, err := HeldOutLoss(vec, bare, 0, bare.Len(), 8); err == nil {
		t.Error("held-out loss of a per-player head on data without targets: no error")
	}
}

// A values array whose rows do not start with the mover's value (not
// seat-rotated) is a bad shard.
func TestSeatValuesRejected(t *testing.T) {
	g := games.MustNew("tetrislink:players=3")
	path := seatShard(t, g, 1, 3, true)
	arrays, err := readNPZ(mustRead(t, path))
	if err != nil {
		t.Fatal(err)
	}
	v := arrays["values"]
	n := v.shape[0]
	f32 := func(a *npyArray) []float32 { return a.f32 }
	rot := make([]float32, 0, n*3)
	for i := range n { // rotate each row by one more seat
		r := f32(v)[i*3 : (i+1)*3]
		rot = append(rot, r[1], r[2], r[0])
	}
	var arr []testArray
	for _, name := range []string{"obs", "policy", "value", "legal"} {
		a := arrays[name]
		var data any = a.f32
		if a.descr == "|u1" {
			data = a.u8
		}
		arr = append(arr, testArray{name: name, descr: a.descr, shape: a.shape, data: data})
	}
	arr = append(arr, testArray{name: "values", descr: "<f4", shape: v.shape, data: rot})
	bad := filepath.Join(t.TempDir(), "bad.npz")
	writeFile(t, bad, npzBytes(t, arr))
	if _, err := LoadDataset([]string{bad}, g, DatasetOptions{}); err == nil || !strings.Contains(err.Error(), "seat-rotated") {
		t.Errorf("values not seat-rotated: %v", err)
	}
}

// FuzzLoadShardValues: a shard with a values array, mutated, loads or
// fails with an error; it never panics.
func FuzzLoadShardValues(f *testing.F) {
	g := games.MustNew("sushigo-seq:players=3") // a small observation: short inputs
	seed := func() []byte {
		// A small shard: two positions of the initial state.
		s := g.NewInitialState()
		A, np := g.NumActions(), g.NumPlayers()
		o := make([]float32, games.ObservationSize(g))
		s.Observation(0, o)
		pol := make([]float32, 2*A)
		pol[0], pol[A] = 1, 1
		legal := make([]uint8, 2*A)
		legal[0], legal[A] = 1, 1
		return npzBytes(f, []testArray{
			{name: "obs", descr: "<f4", shape: append([]int{2}, g.ObservationShape()...), data: append(append([]float32(nil), o...), o...)},
			{name: "policy", descr: "<f4", shape: []int{2, A}, data: pol},
			{name: "value", descr: "<f4", shape: []int{2}, data: []float32{0.5, -1}},
			{name: "legal", descr: "|u1", shape: []int{2, A}, data: legal},
			{name: "values", descr: "<f4", shape: []int{2, np}, data: []float32{0.5, -1, 0.5, -1, 0.5, 0.5}},
		})
	}()
	f.Add(seed)
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "fuzz.npz")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		ds, err := LoadDataset([]string{path}, g, DatasetOptions{})
		if err == nil && ds.SeatValues() != 0 {
			if err := ds.CheckValueSize(3); err != nil {
				t.Errorf("loaded values of %d players, then %v", ds.SeatValues(), err)
			}
		}
	})
}
