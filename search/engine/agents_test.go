package engine

import (
	"context"
	"math"
	"testing"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	_ "github.com/canopy-go/canopy/search" // the mcts agent
)

// analyze runs an Analyzer agent from spec on the position after moves.
func analyze(t *testing.T, g games.Game, specStr string, seed uint64, moves []games.Action) []agent.Analysis {
	t.Helper()
	a, err := agent.New(g, specStr, testEnv(seed))
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := a.(interface{ Close() error }); ok {
		defer c.Close()
	}
	s := g.NewInitialState()
	for _, m := range moves {
		s.Apply(m)
	}
	rows, err := a.(agent.Analyzer).Analyze(context.Background(), s, s.CurrentPlayer())
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// The az agent with a uniform network (the random backend with seed 0:
// equal logits, value 0) builds exactly the tree of mcts:sel=puct with
// the uniform evaluator and the same seed: same visits, values and
// priors at the root.
func TestAZMatchesMCTSWithUniformNetwork(t *testing.T) {
	cases := []struct {
		game  string
		moves []games.Action
		sims  string
	}{
		{"tictactoe", nil, "200"},
		{"tictactoe", []games.Action{4, 0}, "300"},
		{"connect4", []games.Action{3, 3, 2}, "500"},
	}
	for _, tc := range cases {
		g := games.MustNew(tc.game)
		for _, seed := range []uint64{1, 7} {
			want := analyze(t, g, "mcts:sel=puct,eval=uniform,sims="+tc.sims, seed, tc.moves)
			got := analyze(t, g, "az:net=random,sims="+tc.sims, seed, tc.moves)
			if len(got) != len(want) {
				t.Fatalf("%s seed %d: %d root actions, want %d", tc.game, seed, len(got), len(want))
			}
			for i := range want {
				w, x := want[i], got[i]
				if w.Action != x.Action || w.Visits != x.Visits || math.Abs(w.Q-x.Q) > 1e-12 || math.Abs(w.Prior-x.Prior) > 1e-6 {
					t.Errorf("%s seed %d row %d: az %+v, mcts %+v", tc.game, seed, i, x, w)
				}
			}
		}
	}
	if n := testPool.Open(); n != 0 {
		t.Errorf("%d pooled engines still open after every agent closed", n)
	}
}

// The root's priors come from the network's policy (softmax over the
// legal actions), not from a stand-in evaluator.
func TestRootPriorsFromNetwork(t *testing.T) {
	g := games.MustNew("connect4")
	be := nets.NewRandomBackend(84, 7, 42, nets.BackendOptions{})
	e, err := New(g, be, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	st := DefaultSettings()
	st.Sims = 20
	s, err := NewSearcher(e, st.SearchOptions(), 3)
	if err != nil {
		t.Fatal(err)
	}
	root := g.NewInitialState()
	for _, a := range []games.Action{3, 3, 3, 3, 3, 3} { // column 3 full: 6 legal actions
		root.Apply(a)
	}
	stats, err := s.Search(context.Background(), root, root.CurrentPlayer())
	if err != nil {
		t.Fatal(err)
	}
	obs := make([]float32, 84)
	root.Observation(root.CurrentPlayer(), obs)
	logits, val := make([]float32, 7), make([]float32, 1)
	if err := be.Evaluate(context.Background(), 1, obs, logits, val); err != nil {
		t.Fatal(err)
	}
	mask := games.NewMask(7)
	root.Legal(mask)
	want := make([]float32, 7)
	nets.MaskedSoftmax(logits, mask, want)
	if len(stats) != 6 {
		t.Fatalf("%d root actions, want 6", len(stats))
	}
	spread := false
	for _, x := range stats {
		if math.Abs(float64(x.Prior-want[x.Action])) > 1e-6 {
			t.Errorf("action %d: root prior %v, network softmax %v", x.Action, x.Prior, want[x.Action])
		}
		spread = spread || math.Abs(float64(x.Prior-1.0/6)) > 1e-3
	}
	if !spread {
		t.Fatal("the test network's policy is uniform: the check proves nothing")
	}
}

// The policy agent plays the network's most probable legal action.
func TestPolicyAgentArgmax(t *testing.T) {
	g := games.MustNew("connect4")
	a, err := agent.New(g, "policy:net=init,backend=cpu", testEnv(1))
	if err != nil {
		t.Fatal(err)
	}
	defer a.(*Policy).Close()
	net, _, err := nets.OpenNet("init", g)
	if err != nil {
		t.Fatal(err)
	}
	s := g.NewInitialState()
	rng := games.NewRand(5)
	mask := games.NewMask(7)
	for s.MoveNumber() < 12 && !s.IsTerminal() {
		obs := make([]float32, 84)
		logits, val := make([]float32, 7), make([]float32, 1)
		s.Observation(s.CurrentPlayer(), obs)
		net.Forward(1, obs, logits, val)
		s.Legal(mask)
		best := games.NoAction
		for m := range mask.All() {
			if best == games.NoAction || logits[m] > logits[best] {
				best = m
			}
		}
		got, err := a.Act(context.Background(), s, s.CurrentPlayer())
		if err != nil {
			t.Fatal(err)
		}
		if got != best {
			t.Fatalf("move %d: policy agent plays %d, the network's argmax is %d (logits %v)", s.MoveNumber(), got, best, logits)
		}
		s.Apply(mask.Random(rng))
	}
}

// mcts:eval=<net> evaluates leaves with the network: with eval=init the
// root priors are the network's softmax, not uniform.
func TestMCTSEvalNetwork(t *testing.T) {
	g := games.MustNew("connect4")
	rows := analyze(t, g, "mcts:sel=puct,eval=init,sims=50", 1, []games.Action{3, 3, 2}) // the empty board gives the random-init net all-zero inputs
	var sum float64
	uniform := true
	for _, r := range rows {
		sum += r.Prior
		uniform = uniform && math.Abs(r.Prior-1.0/7) < 1e-4
	}
	if math.Abs(sum-1) > 1e-4 || uniform {
		t.Errorf("priors %v: want the network's (non-uniform) softmax summing to 1", rows)
	}
	if _, err := agent.New(g, "mcts:sel=puct,eval=no-such-net.safetensors", testEnv(1)); err == nil {
		t.Error("an unknown network name was accepted")
	}
}

// Agents on the same network share one engine; it closes with the last.
func TestPoolSharesEngines(t *testing.T) {
	g := games.MustNew("tictactoe")
	a1, err := NewAZ(testPool, g, "init", "cpu", DefaultSettings(), false, 1)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := NewAZ(testPool, g, "init", "cpu", DefaultSettings(), false, 2)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPolicy(testPool, g, "random", "cpu", 0, 3)
	if err != nil {
		t.Fatal(err)
	}
	if a1.lease.Engine != a2.lease.Engine || testPool.Open() != 2 {
		t.Errorf("two az agents on one net: engines %p and %p, %d open (want shared, 2 open)", a1.lease.Engine, a2.lease.Engine, testPool.Open())
	}
	a1.Close()
	a1.Close() // idempotent
	p.Close()
	if testPool.Open() != 1 {
		t.Errorf("%d engines open, want 1 (a2 still holds its own)", testPool.Open())
	}
	a2.Close()
	if testPool.Open() != 0 {
		t.Errorf("%d engines open after all closed", testPool.Open())
	}
}

// Bad options are usage errors naming the option and its range.
func TestAZBadOptions(t *testing.T) {
	g := games.MustNew("tictactoe")
	for spec, want := range map[string]string{
		"az:sims=0":           "sims=0 is out of range (want 1..16777216)",
		"az:c=NaN":            `c="NaN" is not a finite number`,
		"az:dirfrac=2":        "dirfrac=2 is out of range (want [0, 1])",
		"az:bogus=1":          "unknown option bogus",
		"az:net=missing.file": "no such file",
		"policy:temp=-1":      "temp=-1 is out of range",
	} {
		_, err := agent.New(g, spec, testEnv(1))
		if err == nil || !contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to say %q", spec, err, want)
		}
	}
	if testPool.Open() != 0 {
		t.Errorf("%d engines left open by failed constructions", testPool.Open())
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// With reuse, the az agent keeps the subtree of the position reached: the
// root of its next search starts with the visits it already had.
func TestAZReuse(t *testing.T) {
	g := games.MustNew("connect4")
	st := DefaultSettings()
	st.Sims = 200
	a, err := NewAZ(testPool, g, "random", "cpu", st, true, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	s := g.NewInitialState()
	ctx := context.Background()
	m, err := a.Act(ctx, s, 0)
	if err != nil {
		t.Fatal(err)
	}
	s.Apply(m)
	s.Apply(3) // the opponent's reply
	stats, err := a.s.Search(ctx, s, 0)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, x := range stats {
		total += x.Visits
	}
	if total <= st.Sims {
		t.Errorf("root visits %d after reuse, want more than this search's %d", total, st.Sims)
	}
}

// testPool is the engine pool of this package's tests: the agents they
// build through the registry get it in their agent.Env.
var testPool = NewPool(PoolOptions{})

// testEnv is the agent.Env of this package's tests, seeded with seed.
func testEnv(seed uint64) agent.Env { return agent.Env{Seed: seed}.With(testPool) }

// Agents built through the registry share the engines of the pool their
// agent.Env carries, take its backend for backend=auto, and without a
// pool each network agent opens a private engine; mcts:eval=NET needs
// the pool (search cannot open networks itself) and says so.
func TestAgentEnvPool(t *testing.T) {
	g := games.MustNew("tictactoe")
	pool := NewPool(PoolOptions{Backend: "random"})
	env := agent.Env{Seed: 1}.With(pool)
	a1, err := agent.New(g, "az:net=init,sims=8", env)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := agent.New(g, "mcts:sel=puct,eval=init,sims=8", env.WithSeed(2))
	if err != nil {
		t.Fatal(err)
	}
	if n := pool.Open(); n != 1 {
		t.Errorf("az and mcts:eval=init on one pool: %d engines open, want 1 shared", n)
	}
	if u := pool.Usage(); len(u) != 1 || u[0].Backend != "random" {
		t.Errorf("usage %+v: want one engine on the pool's backend (random)", u)
	}
	arenaClose(t, a1, a2)
	if n := pool.Open(); n != 0 {
		t.Errorf("%d engines open after both agents closed", n)
	}

	// No pool: az works on a private engine; mcts:eval=init is refused
	// with an error naming what is missing.
	a3, err := agent.New(g, "az:net=init,backend=cpu,sims=8", agent.Env{Seed: 3})
	if err != nil {
		t.Fatalf("az without a pool: %v", err)
	}
	arenaClose(t, a3)
	_, err = agent.New(g, "mcts:sel=puct,eval=init", agent.Env{Seed: 3})
	if err == nil || !contains(err.Error(), "network pool") {
		t.Errorf("mcts:eval=init without a pool: error %v, want one saying it needs a network pool", err)
	}
	// With a pool, an unknown name is still an unknown evaluator.
	_, err = agent.New(g, "mcts:sel=puct,eval=nosuch", env)
	if err == nil || !contains(err.Error(), `unknown evaluator "nosuch"`) {
		t.Errorf("eval=nosuch: error %v", err)
	}
}

func arenaClose(t *testing.T, ags ...agent.Agent) {
	t.Helper()
	for _, a := range ags {
		if c, ok := a.(interface{ Close() error }); ok {
			if err := c.Close(); err != nil {
				t.Error(err)
			}
		}
	}
}
