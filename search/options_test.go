package search

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/spec"
)

// Node budget: with full=keep the search runs every simulation without
// growing past the budget; with full=stop it ends when the arena is full.
func TestNodeBudget(t *testing.T) {
	g := games.MustNew("connect4")
	for _, stop := range []bool{false, true} {
		o := DefaultOptions()
		o.Sims, o.MaxNodes, o.StopWhenFull = 5000, 300, stop
		tr, err := New(g, o, 1)
		if err != nil {
			t.Fatal(err)
		}
		n := tr.Search(context.Background(), g.NewInitialState())
		st := tr.Stats()
		if st.Nodes > 300 || !tr.Full() {
			t.Errorf("stop=%v: %d nodes (budget 300), full=%v", stop, st.Nodes, tr.Full())
		}
		switch {
		case !stop && n != 5000:
			t.Errorf("full=keep ran %d simulations, want 5000", n)
		case stop && (n >= 5000 || n < 290):
			t.Errorf("full=stop ran %d simulations, want about the budget (300)", n)
		}
		total := 0
		for _, x := range tr.RootStats(0, nil) {
			total += x.Visits
		}
		if total != n {
			t.Errorf("stop=%v: root visits %d, simulations %d", stop, total, n)
		}
	}
}

// Root parallelism merges the root statistics of independent trees.
func TestRootParallel(t *testing.T) {
	g := games.MustNew("tictactoe")
	sp, _ := spec.Parse("mcts:root=4,sims=4000")
	o, err := ParseOptions(g, sp, agent.Env{})
	if err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, g, o, 1)
	s, _ := g.ParseState("1425")
	st, err := a.Stats(context.Background(), s, s.CurrentPlayer())
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, x := range st {
		total += x.Visits
	}
	if total != 4000 || len(a.trees) != 4 {
		t.Errorf("root visits %d over %d trees, want 4000 over 4", total, len(a.trees))
	}
	if st[0].Action != 2 { // cell 3 wins
		t.Errorf("best %d, want the win at cell 3", st[0].Action)
	}
}

// Temperature: in the first TempPlies plies the move is sampled from the
// visit distribution; Dirichlet noise keeps root priors a distribution.
func TestTemperatureAndNoise(t *testing.T) {
	o := DefaultOptions()
	o.TempPlies, o.Temp = 10, 1
	tr, _ := New(games.MustNew("tictactoe"), o, 1)
	stats := []ActionStat{{Action: 0, Visits: 300}, {Action: 1, Visits: 100}, {Action: 2, Visits: 0}}
	var count [3]int
	const n = 8000
	for range n {
		count[tr.Choose(stats, 0)]++
	}
	// Expected 3/4 and 1/4 (visits^1); binomial sd about 0.005.
	if f := float64(count[0]) / n; math.Abs(f-0.75) > 0.025 || count[2] != 0 {
		t.Errorf("sampled frequencies %v, want 3:1:0", count)
	}
	if a := tr.Choose(stats, 10); a != 0 {
		t.Errorf("after the temperature plies chose %d, want argmax 0", a)
	}
	g := games.MustNew("connect4")
	sp, _ := spec.Parse("mcts:sel=puct,eval=uniform,dir=0.3,sims=50")
	po, err := ParseOptions(g, sp, agent.Env{})
	if err != nil {
		t.Fatal(err)
	}
	pt, _ := New(g, po, 3)
	pt.Prepare(g.NewInitialState())
	var sum float64
	uniform := true
	for _, x := range pt.RootStats(0, nil) {
		sum += float64(x.Prior)
		uniform = uniform && math.Abs(float64(x.Prior)-1.0/7) < 1e-6
	}
	if math.Abs(sum-1) > 1e-5 || uniform {
		t.Errorf("noisy priors sum to %v (uniform: %v)", sum, uniform)
	}
}

// Depth-limited rollouts return 0 at the cut; blend mixes two evaluators.
func TestEvaluators(t *testing.T) {
	g := games.MustNew("connect4")
	c := newEvalContext(g, games.NewRand(1))
	v := make([]float64, 2)
	s := g.NewInitialState()
	(&Rollout{Depth: 4}).Evaluate(c, s, v, nil)
	if v[0] != 0 || v[1] != 0 || s.MoveNumber() != 4 {
		t.Errorf("depth-4 rollout: value %v after %d moves, want 0 after 4", v, s.MoveNumber())
	}
	// X wins with its 4th stone in column 1: a finished game scores +1/-1.
	s, _ = g.ParseState("1212121")
	b := NewBlend(g, Uniform{}, &Rollout{}, 0.5)
	b.Evaluate(c, s, v, nil)
	if v[0] != 1 || v[1] != -1 {
		t.Errorf("blend at a terminal: %v, want [1 -1]", v)
	}
	s, _ = g.ParseState("44")
	pri := make([]float32, 7)
	if !b.Evaluate(c, s, v, pri) || pri[0] != 1 {
		t.Errorf("blend should pass on Uniform's priors: %v", pri)
	}
	if math.Abs(v[0]) != 0.5 && v[0] != 0 {
		t.Errorf("blend value %v: want 0.5 * (0) + 0.5 * rollout result in {-1, 0, 1}", v[0])
	}
	if _, err := agent.New(g, "mcts:eval=nosuch", agent.Env{Seed: 1}); err == nil {
		t.Error("unknown evaluator accepted")
	}
}

// Turn-limited rollouts count player turns, not chance plies: in Sequence
// (a draw follows each move) 3 turns take 5 plies: move, draw, move, draw,
// move (the rollout stops as the third turn ends).
func TestRolloutTurns(t *testing.T) {
	g := games.MustNew("sequence")
	s := seqPosition(t, g, 1)
	c := newEvalContext(g, games.NewRand(1))
	v := make([]float64, g.NumPlayers())
	start := s.MoveNumber()
	(&Rollout{Turns: 3}).Evaluate(c, s, v, nil)
	if got := s.MoveNumber() - start; got != 5 && !s.IsTerminal() {
		t.Errorf("3 turns took %d plies, want 5", got)
	}
	sp, _ := spec.Parse("mcts:eval=blend,sims=300")
	o, err := ParseOptions(g, sp, agent.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if b, ok := o.Eval.(*Blend); !ok || b.W != 0.5 || b.B.(*Rollout).Turns != 8 {
		t.Errorf("eval=blend: %+v, want 0.5 static + 0.5 8-turn rollout", o.Eval)
	}
}

// Sequence's turn-limited rollouts take its fast playout
// (PlayRandomTurns) unless moves are recorded; both paths play uniformly
// random moves but consume the random stream differently, so they are
// compared in distribution: the mean cut value (cut=state) and the mean
// plies played, from a mid-game position, within 4 standard errors.
func TestRolloutTurnsFastMatchesGeneric(t *testing.T) {
	n := 4000
	if testing.Short() {
		n = 1000
	}
	for _, sp := range []string{"sequence:jacks=false", "sequence"} {
		g := games.MustNew(sp)
		start := seqPosition(t, g, 3)
		cut, err := NewCut(g, "state", 200)
		if err != nil {
			t.Fatal(err)
		}
		r := &Rollout{Turns: 8, Cut: cut}
		var sum, sum2, plies [2]float64
		v := make([]float64, g.NumPlayers())
		s := g.NewInitialState()
		for path := range 2 {
			c := newEvalContext(g, games.NewRand(uint64(7+path)))
			c.Record = path == 1 // the generic path
			for range n {
				start.CloneInto(s)
				c.Trace = c.Trace[:0]
				r.Evaluate(c, s, v, nil)
				sum[path] += v[0]
				sum2[path] += v[0] * v[0]
				plies[path] += float64(s.MoveNumber() - start.MoveNumber())
			}
		}
		N := float64(n)
		m0, m1 := sum[0]/N, sum[1]/N
		se := math.Sqrt((sum2[0]/N - m0*m0 + sum2[1]/N - m1*m1) / N)
		if math.Abs(m0-m1) > 4*se {
			t.Errorf("%s: mean cut value %.4f (fast) vs %.4f (generic), 4 SE = %.4f", sp, m0, m1, 4*se)
		}
		if p0, p1 := plies[0]/N, plies[1]/N; math.Abs(p0-p1) > 0.5 {
			t.Errorf("%s: mean plies %.2f (fast) vs %.2f (generic)", sp, p0, p1)
		}
		t.Logf("%s: mean value %.4f / %.4f, plies %.2f / %.2f (fast / generic)", sp, m0, m1, plies[0]/N, plies[1]/N)
	}
}

// A time budget alone bounds the search.
func TestTimeBudget(t *testing.T) {
	g := games.MustNew("connect4")
	sp, _ := spec.Parse("mcts:time=30ms")
	o, err := ParseOptions(g, sp, agent.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if o.Sims != 0 || o.Time != 30*time.Millisecond {
		t.Fatalf("time=30ms parsed as sims=%d time=%v", o.Sims, o.Time)
	}
	tr, _ := New(g, o, 1)
	start := time.Now()
	n := tr.Search(context.Background(), g.NewInitialState())
	if el := time.Since(start); el < 30*time.Millisecond || el > 2*time.Second || n == 0 {
		t.Errorf("time=30ms: ran %d simulations in %v", n, el)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if n := tr.Search(ctx, g.NewInitialState()); n > 16 {
		t.Errorf("cancelled context: %d simulations", n)
	}
}

// PoolRAVE's pool holds the PoolK actions with the best AMAF mean.
func TestPoolRAVEPool(t *testing.T) {
	g := games.MustNew("connect4")
	o := DefaultOptions()
	o.Rule, o.PoolK, o.Sims = PoolRAVE, 3, 1
	tr, _ := New(g, o, 1)
	tr.Prepare(g.NewInitialState())
	rn := &tr.a.nodes[tr.root]
	// AMAF means by action: a -> (a-3)/10, counts 1; action 6 unvisited.
	for i := rn.firstEdge; i < rn.firstEdge+rn.numEdges; i++ {
		a := tr.a.edges[i].action
		if a == 6 {
			continue
		}
		x := &tr.a.ext[i]
		x.amafN, x.amafW = 1, int64(float64(a-3)/10*valueScale)
	}
	w := tr.NewWalker(1)
	tr.fillPool(w, tr.root)
	want := []games.Action{5, 4, 3}
	if len(w.Ctx.Pool) != 3 || w.Ctx.Pool[0] != want[0] || w.Ctx.Pool[1] != want[1] || w.Ctx.Pool[2] != want[2] {
		t.Errorf("pool %v, want %v", w.Ctx.Pool, want)
	}
	// With PoolP = 1 every rollout move comes from the pool when legal.
	c := newEvalContext(g, games.NewRand(2))
	c.Pool, c.PoolP, c.Record = []games.Action{3}, 1, true
	s := g.NewInitialState()
	(&Rollout{Depth: 6}).Evaluate(c, s, make([]float64, 2), nil)
	for _, m := range c.Trace {
		if m.Action != 3 {
			t.Fatalf("rollout played %d with a pool of {3} at p=1: %v", m.Action, c.Trace)
		}
	}
}
