package train

import (
	"path/filepath"
	"testing"

	"github.com/canopy-go/canopy/games"
)

func loadTest(t testing.TB, spec string, nGames int, seed uint64, legal bool) *Dataset {
	t.Helper()
	g := games.MustNew(spec)
	dir := filepath.Join(t.TempDir(), "run")
	writeRun(t, dir, g, nGames, 3, seed, legal)
	ds, err := LoadDataset([]string{dir}, g, DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// The batches are a function of the seed: the same seed repeats them, and
// another seed gives others.
func TestSamplerReproducible(t *testing.T) {
	ds := loadTest(t, "connect4", 8, 1, true)
	batches := func(seed uint64) [][]float32 {
		s, err := NewSampler(ds, 16, seed, true)
		if err != nil {
			t.Fatal(err)
		}
		var out [][]float32
		for range 5 {
			b := s.Next()
			out = append(out, append(append(append([]float32{}, b.Input...), b.Policy...), b.Legal...))
		}
		return out
	}
	a, b, c := batches(7), batches(7), batches(8)
	same := true
	for i := range a {
		if !equalF32(a[i], b[i]) {
			t.Fatalf("batch %d differs between two samplers with seed 7", i)
		}
		same = same && equalF32(a[i], c[i])
	}
	if same {
		t.Error("seeds 7 and 8 give the same batches")
	}
}

// Without augmentation every position appears exactly once per epoch.
func TestSamplerEpochs(t *testing.T) {
	ds := loadTest(t, "tictactoe", 10, 2, false)
	n := ds.Len()
	s, err := NewSampler(ds, 1, 3, false)
	if err != nil {
		t.Fatal(err)
	}
	for epoch := range 3 {
		seen := map[int]int{}
		for range n {
			b := s.Next()
			seen[findRow(t, ds, b.Input, b.Policy)]++
		}
		if len(seen) != n {
			t.Fatalf("epoch %d visited %d distinct positions of %d", epoch, len(seen), n)
		}
	}
	if e := s.Epochs(); e != 3 {
		t.Errorf("Epochs() = %v, want 3", e)
	}
}

// findRow returns the dataset row with exactly this observation and
// policy (random policies make rows unique).
func findRow(t *testing.T, ds *Dataset, obs, pol []float32) int {
	t.Helper()
	for i := range ds.Len() {
		o := make([]float32, ds.ObsSize())
		p, _, _ := ds.Row(i, o)
		if equalF32(o, obs) && equalF32(p, pol) {
			return i
		}
	}
	t.Fatal("sample matches no dataset row")
	return -1
}

// Each augmented sample is its dataset row under the identity or under a
// declared symmetry, observation, policy and legal mask transformed alike;
// both occur; undoing the symmetry restores the row.
func TestSamplerAugmentation(t *testing.T) {
	for _, spec := range []string{"connect4", "hex:size=4,swap=true"} {
		ds := loadTest(t, spec, 6, 4, true)
		syms := games.SymmetriesOf(ds.Game())
		if len(syms) != 1 {
			t.Fatalf("%s: %d symmetries", spec, len(syms))
		}
		sym := syms[0]
		s, err := NewSampler(ds, 8, 5, true)
		if err != nil {
			t.Fatal(err)
		}
		if s.Symmetries() != 2 {
			t.Fatalf("Symmetries() = %d", s.Symmetries())
		}
		O, A := games.ObservationSize(ds.Game()), ds.Game().NumActions()
		back := struct{ obs, pol, legal []float32 }{make([]float32, O), make([]float32, A), make([]float32, A)}
		counts := [2]int{}
		for range 20 {
			perm, pos := append([]int32{}, s.perm...), s.pos
			b := s.Next()
			for k := range b.N {
				if pos+k >= len(perm) {
					break // crossed an epoch: the row is in the new permutation
				}
				row := int(perm[pos+k])
				obs := make([]float32, ds.ObsSize())
				pol, val, legal := ds.Row(row, obs)
				gotObs, gotPol, gotLegal := b.Input[k*O:(k+1)*O], b.Policy[k*A:(k+1)*A], b.Legal[k*A:(k+1)*A]
				if b.Value[k] != val {
					t.Fatalf("%s: value changed", spec)
				}
				legalF := make([]float32, A)
				for a, l := range legal {
					legalF[a] = float32(l)
				}
				if equalF32(gotObs, obs) && equalF32(gotPol, pol) && equalF32(gotLegal, legalF) {
					counts[0]++
					continue
				}
				// The mirror is an involution for these games: applying it
				// again must give back the row.
				sym.Observation(back.obs, gotObs)
				sym.Policy(back.pol, gotPol)
				sym.Policy(back.legal, gotLegal)
				if !equalF32(back.obs, obs) || !equalF32(back.pol, pol) || !equalF32(back.legal, legalF) {
					t.Fatalf("%s: sample %d is neither row %d nor its %s image", spec, k, row, sym.Name())
				}
				counts[1]++
			}
		}
		if counts[0] < 20 || counts[1] < 20 {
			t.Errorf("%s: identity %d times, %s %d times; want both often", spec, counts[0], sym.Name(), counts[1])
		}
	}
}

func TestSamplerAllocations(t *testing.T) {
	ds := loadTest(t, "connect4", 4, 6, true)
	s, err := NewSampler(ds, 32, 1, true)
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(50, func() { s.Next() }); n != 0 {
		t.Errorf("Next allocates %v times per batch, want 0", n)
	}
}
