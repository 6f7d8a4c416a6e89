package rl

import (
	"github.com/canopy-go/canopy/agent"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
)

func smallPPONet(t testing.TB, g games.Game, seed uint64) *nets.Net {
	t.Helper()
	cfg, err := nets.Config{Head: nets.HeadPPO, ConvChannels: []int{4}, Dense: 8}.ForGame(g)
	if err != nil {
		t.Fatal(err)
	}
	net, err := nets.New(cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	return net
}

// shareNear fails unless count/n is within 5 standard deviations of the
// probability p (the binomial's), the share the studies state.
func shareNear(t *testing.T, what string, count, n int, p float64) {
	t.Helper()
	sd := math.Sqrt(p * (1 - p) / float64(n))
	if got := float64(count) / float64(n); math.Abs(got-p) > 5*sd+1e-12 {
		t.Errorf("%s: share %.4f over %d draws, want %.4f (+- %.4f)", what, got, n, p, 5*sd)
	}
}

// Study 002's league plays the latest weights 80% of the games and a
// uniformly drawn snapshot 20%, keeps the 20 newest snapshots, and plays
// only the latest weights while the pool is empty.
func TestLeagueStudy002(t *testing.T) {
	g := connect4Game(t)
	learner := smallPPONet(t, g, 1)
	l, err := NewLeague(g, learner, Study002League())
	if err != nil {
		t.Fatal(err)
	}
	if k := l.Kinds(); len(k) != 2 || k[0] != "latest" || k[1] != "pool" {
		t.Fatalf("kinds %v", k)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		if o, k := l.Pick(rng); k != 0 || o != Opponent(l.latest) {
			t.Fatalf("empty pool: picked kind %d", k)
		}
	}
	// 23 snapshots, each with its first weight set to its number: the
	// pool keeps numbers 3..22.
	for i := range 23 {
		snap := learner.Clone()
		snap.Params()[0].Data[0] = float32(i)
		if err := l.AddSnapshot(snap); err != nil {
			t.Fatal(err)
		}
	}
	if l.PoolLen() != 20 {
		t.Fatalf("pool of %d, want 20", l.PoolLen())
	}
	counts := map[float32]int{}
	const n = 200000
	latest := 0
	for range n {
		o, k := l.Pick(rng)
		switch k {
		case 0:
			latest++
		case 1:
			counts[o.(*NetOpponent).Net.Params()[0].Data[0]]++
		default:
			t.Fatalf("kind %d", k)
		}
	}
	shareNear(t, "latest", latest, n, 0.8)
	for i := 3; i < 23; i++ {
		shareNear(t, "snapshot", counts[float32(i)], n, 0.2/20)
	}
	if len(counts) != 20 {
		t.Errorf("drew %d distinct snapshots, want 20", len(counts))
	}
	// Sync copies the learner's weights into the latest opponent, and only
	// Sync does.
	learner.Params()[0].Data[0] = 42
	if l.latestNet.Net.Params()[0].Data[0] == 42 {
		t.Fatal("latest opponent shares the learner's weights")
	}
	if err := l.Sync(learner); err != nil || l.latestNet.Net.Params()[0].Data[0] != 42 {
		t.Fatalf("Sync: %v", err)
	}
}

type constOpp int

func (c constOpp) Act(_ games.State, _ int, legal games.Mask, _ *rand.Rand) (games.Action, error) {
	return legal.First(), nil
}

// Study 000's schedule: greedy or random half the games each for 400
// updates, then 70% the pool of the 5 newest snapshots, 15% greedy, 15%
// random (the pool's share going to the others while it is empty).
func TestLeagueStudy000(t *testing.T) {
	g := connect4Game(t)
	learner := smallPPONet(t, g, 1)
	greedy, random := constOpp(1), constOpp(2)
	l, err := NewLeague(g, learner, Study000League(greedy, random))
	if err != nil {
		t.Fatal(err)
	}
	kinds := l.Kinds()
	if strings.Join(kinds, ",") != "latest,pool,greedy,random" {
		t.Fatalf("kinds %v", kinds)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	const n = 100000
	draw := func() []int {
		c := make([]int, len(kinds))
		for range n {
			o, k := l.Pick(rng)
			if (k == 2 && o != Opponent(greedy)) || (k == 3 && o != Opponent(random)) {
				t.Fatalf("kind %d played by %v", k, o)
			}
			c[k]++
		}
		return c
	}
	for _, u := range []int{0, 399} {
		l.SetUpdate(u)
		c := draw()
		shareNear(t, "warm-up greedy", c[2], n, 0.5)
		shareNear(t, "warm-up random", c[3], n, 0.5)
	}
	l.SetUpdate(400)
	c := draw()
	shareNear(t, "empty pool greedy", c[2], n, 0.5)
	for i := range 7 {
		if err := l.AddSnapshot(learner); err != nil {
			t.Fatal(err)
		}
		_ = i
	}
	if l.PoolLen() != 5 {
		t.Fatalf("pool of %d, want 5", l.PoolLen())
	}
	c = draw()
	if c[0] != 0 {
		t.Errorf("latest weights played %d games, want 0", c[0])
	}
	shareNear(t, "pool", c[1], n, 0.7)
	shareNear(t, "greedy", c[2], n, 0.15)
	shareNear(t, "random", c[3], n, 0.15)
}

func TestLeagueOptionErrors(t *testing.T) {
	g := connect4Game(t)
	net := smallPPONet(t, g, 1)
	for _, o := range []LeagueOptions{
		{PoolSize: -1, Main: Mixture{Latest: 1}},
		{Main: Mixture{Pool: 1}},
		{PoolSize: 3, Main: Mixture{Pool: 1}},
		{Main: Mixture{}},
		{Main: Mixture{Latest: math.NaN()}},
		{Main: Mixture{Latest: 1, Fixed: []WeightedOpponent{{"latest", constOpp(0), 1}}}},
		{Main: Mixture{Latest: 1, Fixed: []WeightedOpponent{{"x", nil, 1}}}},
		{WarmupUpdates: 3, Main: Mixture{Latest: 1}},
	} {
		if _, err := NewLeague(g, net, o); err == nil || !strings.HasPrefix(err.Error(), "rl: ") {
			t.Errorf("%+v: error %v", o, err)
		}
	}
}

// Games are counted per opponent kind; the kinds' counts add up to the
// total, and each kind's games are the ones its opponent played.
func TestEnvStatsByKind(t *testing.T) {
	g := connect4Game(t)
	for _, workers := range []int{1, 2} {
		l, err := NewLeague(g, smallPPONet(t, g, 2), LeagueOptions{Main: Mixture{Latest: 1,
			Fixed: []WeightedOpponent{{"first", constOpp(0), 1}, {"random", RandomOpponent(), 2}}}})
		if err != nil {
			t.Fatal(err)
		}
		e, err := NewEnv(g, EnvOptions{N: 6, Seat: SeatAlternate, Seed: 5, Opponents: l, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		acts := make([]games.Action, e.N())
		for k := range 3000 {
			randomActions(e, acts, k)
			if err := e.Step(acts); err != nil {
				t.Fatal(err)
			}
		}
		by, all := e.StatsByKind(), e.Stats()
		var sum EpisodeStats
		for k, s := range by {
			if s.Episodes == 0 {
				if k != 1 { // the pool is empty
					t.Errorf("kind %s played no game", e.Kinds()[k])
				}
				continue
			}
			sum.Add(s)
		}
		if sum != all {
			t.Errorf("kinds add up to %v, total %v", sum, all)
		}
		e.Close()
	}
	if _, err := NewEnv(g, EnvOptions{Opponent: RandomOpponent(), Opponents: Fixed{"r", RandomOpponent()}}); err == nil {
		t.Error("Opponent and Opponents both accepted")
	}
}

// A network opponent plays legal moves drawn from its masked policy.
func TestNetOpponent(t *testing.T) {
	g := connect4Game(t)
	o, err := NewNetOpponent(g, smallPPONet(t, g, 3))
	if err != nil {
		t.Fatal(err)
	}
	s := g.NewInitialState()
	for range 6 {
		s.Apply(2) // column 2 full
	}
	m := games.NewMask(g.NumActions())
	s.Legal(m)
	rng := rand.New(rand.NewPCG(1, 1))
	seen := map[games.Action]bool{}
	for range 500 {
		a, err := o.Act(s, s.CurrentPlayer(), m, rng)
		if err != nil || a == 2 || !m.Has(a) {
			t.Fatalf("action %d, %v", a, err)
		}
		seen[a] = true
	}
	if len(seen) < 3 {
		t.Errorf("a fresh net's sampled policy played only %v", seen)
	}
}

// A reseeded agent opponent plays as a new one made with that seed.
func TestSpecOpponentReseed(t *testing.T) {
	g := connect4Game(t)
	play := func(o Opponent) []games.Action {
		s := g.NewInitialState()
		m := games.NewMask(7)
		var out []games.Action
		for range 12 {
			s.Legal(m)
			a, err := o.Act(s, s.CurrentPlayer(), m, nil)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, a)
			s.Apply(a)
			if s.IsTerminal() {
				break
			}
		}
		return out
	}
	a, err := NewSpecOpponent(g, "random", agent.Env{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	first := play(a)
	if err := a.Reseed(1); err != nil {
		t.Fatal(err)
	}
	if again := play(a); !slices.Equal(first, again) {
		t.Errorf("after Reseed(1) %v, a new opponent %v", again, first)
	}
	if err := a.Reseed(2); err != nil {
		t.Fatal(err)
	}
	if other := play(a); slices.Equal(first, other) {
		t.Errorf("seeds 1 and 2 play the same %v", other)
	}
	if _, err := NewSpecOpponent(g, "nosuch", agent.Env{Seed: 1}); err == nil {
		t.Error("unknown agent accepted")
	}
}
