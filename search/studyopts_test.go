package search

import (
	"cmp"
	"context"
	"github.com/canopy-go/canopy/agent"
	"math"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/connect4"
	_ "github.com/canopy-go/canopy/games/sequence"
	_ "github.com/canopy-go/canopy/games/sushigo"
	"github.com/canopy-go/canopy/spec"
)

// Tests of issue 21: the progressive-bias bug (heuristic priors at
// simultaneous nodes, scaled to [0, 1]) and the studies' method options.
// Each formula is written out again here from the study's text.

// newMCTS builds the mcts agent of spec string sp for game g.
func newMCTS(t *testing.T, g games.Game, sp string, seed uint64) (*Agent, error) {
	t.Helper()
	s, err := spec.Parse(sp)
	if err != nil {
		t.Fatal(err)
	}
	o, err := ParseOptions(g, s, agent.Env{})
	if err != nil {
		return nil, err
	}
	return NewAgent(g, o, seed)
}

// sushiPosition deals a Sushi Go position (chance resolved) after a few
// random picks, so that the hands hold cards of different values.
func sushiPosition(g games.Game, picks int, seed uint64) games.State {
	s := g.NewInitialState()
	rng := games.NewRand(seed)
	m := games.NewMask(g.NumActions())
	joint := make([]games.Action, g.NumPlayers())
	for done := 0; !s.IsTerminal(); {
		switch p := s.CurrentPlayer(); p {
		case games.ChancePlayer:
			s.Apply(s.(games.ChanceState).SampleChance(rng))
			continue
		case games.SimultaneousPlayer:
			if done == picks {
				return s
			}
			for q := range joint {
				s.(games.SimultaneousState).LegalFor(q, m)
				joint[q] = m.Random(rng)
			}
			s.(games.SimultaneousState).ApplyJoint(joint)
		default:
			if done == picks {
				return s
			}
			s.Legal(m)
			s.Apply(m.Random(rng))
		}
		done++
	}
	return s
}

// The bug (issue 21): with progressive bias, the root edges of every
// choosing player must carry that player's heuristic values scaled to
// [0, 1] (best action 1, worst 0), and with a dominant bias the first
// simulation must visit a best action. Before the fix the simultaneous
// view gave every edge the prior 1/|hand| (the heuristic was never called
// at joint nodes, so the first visit was a random card) and the
// sequential view stored the raw heuristic in points.
func TestProgressiveBiasSushiGo(t *testing.T) {
	for _, gs := range []string{"sushigo", "sushigo-seq"} {
		g := games.MustNew(gs)
		for pos := range 6 {
			s := sushiPosition(g, pos%3, uint64(pos)+11)
			players := []int{s.CurrentPlayer()}
			if players[0] == games.SimultaneousPlayer {
				players = []int{0, 1, 2, 3}[:g.NumPlayers()]
			}
			h := s.(games.Heuristic)
			m := games.NewMask(g.NumActions())
			for _, p := range players {
				a, err := newMCTS(t, g, "mcts:bias=1e6,sims=1,det=1", uint64(pos)+1)
				if err != nil {
					t.Fatalf("%s: %v", gs, err)
				}
				st, err := a.Stats(context.Background(), s, p)
				if err != nil {
					t.Fatalf("%s: %v", gs, err)
				}
				if ss, ok := s.(games.SimultaneousState); ok && s.CurrentPlayer() == games.SimultaneousPlayer {
					ss.LegalFor(p, m)
				} else {
					s.Legal(m)
				}
				lo, hi := math.Inf(1), math.Inf(-1)
				for act := range m.All() {
					v := h.HeuristicValue(p, act)
					lo, hi = min(lo, v), max(hi, v)
				}
				if hi == lo {
					continue // nothing to prefer in this hand
				}
				for _, x := range st {
					want := (h.HeuristicValue(p, x.Action) - lo) / (hi - lo)
					if math.Abs(float64(x.Prior)-want) > 1e-6 {
						t.Errorf("%s pos %d player %d: %s prior %v, want the heuristic scaled to [0, 1] %v (raw %v in [%v, %v])",
							gs, pos, p, s.ActionString(x.Action), x.Prior, want, h.HeuristicValue(p, x.Action), lo, hi)
					}
				}
				if v := h.HeuristicValue(p, st[0].Action); st[0].Visits != 1 || v != hi {
					t.Errorf("%s pos %d player %d: first visit to %s (h=%v, %d visits); best heuristic value %v",
						gs, pos, p, s.ActionString(st[0].Action), v, st[0].Visits, hi)
				}
			}
		}
	}
}

// heuristicPriors is the min-max scaling over the legal actions; equal
// values all get 1.
func TestHeuristicPriors(t *testing.T) {
	raw := map[games.Action]float64{1: 2, 4: 4, 5: 3, 7: -2}
	h := HeuristicFunc(func(_ games.State, _ int, a games.Action) float64 { return raw[a] })
	m := games.NewMask(8)
	for a := range raw {
		m.Set(a)
	}
	dst, scratch := make([]float32, 8), make([]float64, 8)
	heuristicPriors(dst, scratch, m, nil, 0, h)
	for a, v := range raw {
		if want := (v - -2) / (4 - -2); math.Abs(float64(dst[a])-want) > 1e-7 {
			t.Errorf("action %d: %v, want %v", a, dst[a], want)
		}
	}
	flat := HeuristicFunc(func(games.State, int, games.Action) float64 { return 3 })
	heuristicPriors(dst, scratch, m, nil, 0, flat)
	for a := range raw {
		if dst[a] != 1 {
			t.Errorf("equal values: action %d gets %v, want 1", a, dst[a])
		}
	}
}

// The studies' scores, against their formulas written out again.
func TestStudyFormulas(t *testing.T) {
	for _, c := range []struct {
		q, qa float64
		n, an int
		lnN   float64
		beta  float64
		cc    float64
	}{
		{0.2, -0.4, 10, 30, math.Log(50), 1000, 1},
		{-0.9, 0.7, 1, 1500, math.Log(2), 1000, 2}, // n_RAVE > beta: alpha < 0
		{0.5, 0, 4000, 0, math.Log(9000), 1000, 0.5},
	} {
		// Study 001, section 4.1.4.
		x, xr := (c.q+1)/2, 0.0
		if c.an > 0 {
			xr = (c.qa + 1) / 2
		}
		alpha := (c.beta - float64(c.an)) / c.beta
		want := x + alpha*xr + c.cc*math.Sqrt(2*c.lnN/float64(c.n))
		near(t, "raveStudy001Score", raveStudy001Score(x, xr, c.an, c.beta, false, c.n, c.lnN, c.cc), want)
		// study001clamp: alpha stops at 0.
		want = x + max(alpha, 0)*xr + c.cc*math.Sqrt(2*c.lnN/float64(c.n))
		near(t, "raveStudy001Score clamped", raveStudy001Score(x, xr, c.an, c.beta, true, c.n, c.lnN, c.cc), want)

		// Study 003, eqs. 1-4: (1-a)Q + a*Q_amaf, a = max(0, (k-n)/k), plus
		// sqrt(ln N / n * min(1/4, V)), V = X^2/n - (X/n)^2 + sqrt(2 ln N / n).
		sq := c.q*c.q + 0.1 // a mean square consistent with a spread of values
		a := math.Max(0, (1000-float64(c.n))/1000)
		mean01 := ((1-a)*c.q + a*c.qa + 1) / 2
		ex, ex2 := (c.q+1)/2, (sq+2*c.q+1)/4
		v := ex2 - ex*ex + math.Sqrt(2*c.lnN/float64(c.n))
		want01 := mean01 + c.cc*math.Sqrt(c.lnN/float64(c.n)*math.Min(0.25, v))
		got := amafTunedScore((1-a)*c.q+a*c.qa, c.q, sq, 1/float64(c.n), c.lnN, c.cc)
		near(t, "amafTunedScore", (got+1)/2, want01)
		// UCB1-Tuned unchanged by the refactoring into tunedRadius.
		near(t, "ucb1TunedScore", ucb1TunedScore(c.q, sq, 1/float64(c.n), c.lnN, c.cc),
			bookUCB1Tuned(c.q, sq, c.n, int(math.Round(math.Exp(c.lnN))), c.cc))
	}
	near(t, "to01(-1)", to01(-1), 0)
	near(t, "to01(0.5)", to01(0.5), 0.75)

	// Study 003, eq. 5 as a selection: two visited edges, the loop's choice
	// is the maximum of Q + K*sqrt(ln(N+1)/n) + b*h/(1+n).
	g := games.MustNew("tictactoe")
	o := DefaultOptions()
	o.Sims, o.PBForm, o.Bias = 1, PBUCTLn1, 0.2
	o.Heuristic = HeuristicFunc(func(games.State, int, games.Action) float64 { return 0 })
	tr, err := New(g, o, 1)
	if err != nil {
		t.Fatal(err)
	}
	if tr.opt.C != 5 {
		t.Fatalf("pbform=study003: c = %v, want K = 5", tr.opt.C)
	}
	tr.Prepare(g.NewInitialState())
	nd := &tr.a.nodes[tr.root]
	for i := range nd.numEdges {
		h := &tr.a.hot[nd.firstEdge+i]
		h.n, h.w, h.prior = 40, int64(0.1*40*valueScale), 0
	}
	// Edge 0: fewer visits, lower mean, heuristic 1.
	h0 := &tr.a.hot[nd.firstEdge]
	h0.n, h0.w, h0.prior = 2, int64(-0.5*2*valueScale), 1
	nd.n = 40*8 + 2 + 1
	N := float64(nd.n)
	s0 := -0.5 + 5*math.Sqrt(math.Log(N+1)/2) + 0.2*1/(1+2)
	s1 := 0.1 + 5*math.Sqrt(math.Log(N+1)/40)
	wantFirst := s0 > s1
	if got := tr.selectEdge(nd, nd.firstEdge, nd.numEdges) == nd.firstEdge; got != wantFirst {
		t.Errorf("study003: picked edge 0 = %v, eq. 5 says %v (%.4f vs %.4f)", got, wantFirst, s0, s1)
	}
}

// CutValue: tanh((x_p - mean of the others) / scale) with x_p the best
// heuristic value of each choosing player (cut=heuristic), the running
// score (cut=score) or the game's evaluation of the position (cut=state),
// computed here from the game's own methods.
func TestCutValue(t *testing.T) {
	g := games.MustNew("sushigo")
	s := sushiPosition(g, 3, 5)
	np := g.NumPlayers()
	h := s.(games.Heuristic)
	m := games.NewMask(g.NumActions())
	best := make([]float64, np)
	for p := range np {
		s.(games.SimultaneousState).LegalFor(p, m)
		best[p] = math.Inf(-1)
		for a := range m.All() {
			best[p] = max(best[p], h.HeuristicValue(p, a))
		}
	}
	scores := make([]float64, np)
	s.(games.Scorer).Scores(scores)
	state := make([]float64, np)
	for p := range np {
		state[p] = s.(games.StateValuer).StateValue(p)
	}
	ctx := newEvalContext(g, games.NewRand(1))
	for _, c := range []struct {
		name string
		cv   *CutValue
		x    []float64
	}{
		{"heuristic", &CutValue{Heuristic: lookupHeuristic(g), Scale: 3}, best},
		{"score", &CutValue{Scale: 7}, scores},
		{"state", &CutValue{State: true, Scale: 10}, state},
	} {
		value := make([]float64, np)
		c.cv.Evaluate(ctx, s.Clone(), value, nil)
		var sum, vsum float64
		for _, x := range c.x {
			sum += x
		}
		for p := range np {
			d := c.x[p] - (sum-c.x[p])/float64(np-1)
			near(t, c.name, value[p], math.Tanh(d/c.cv.Scale))
			vsum += value[p]
		}
		if np == 2 && math.Abs(vsum) > 1e-12 {
			t.Errorf("%s: two-player values %v not zero-sum", c.name, value)
		}
	}
	// A sequential state: only the mover chooses, the others score 0.
	gs := games.MustNew("sushigo-seq")
	s = sushiPosition(gs, 2, 5)
	p := s.CurrentPlayer()
	s.Legal(m)
	hb := math.Inf(-1)
	for a := range m.All() {
		hb = max(hb, s.(games.Heuristic).HeuristicValue(p, a))
	}
	value := make([]float64, gs.NumPlayers())
	(&CutValue{Heuristic: lookupHeuristic(gs), Scale: 2}).Evaluate(newEvalContext(gs, games.NewRand(1)), s.Clone(), value, nil)
	other := (p + 1) % gs.NumPlayers()
	near(t, "seq mover", value[p], math.Tanh(hb/2))
	near(t, "seq other", value[other], math.Tanh((0-hb/float64(gs.NumPlayers()-1))/2))
	// cut=state needs the capability; Connect Four has none.
	if _, err := NewCut(games.MustNew("connect4"), "state", 10); err == nil || !strings.Contains(err.Error(), "StateValuer") {
		t.Errorf("cut=state on connect4: %v, want an error naming the capability", err)
	}
	if cv, err := NewCut(g, "state", 10); err != nil || !cv.(*CutValue).State {
		t.Errorf("cut=state on sushigo: %v, %v", cv, err)
	}
}

// Every new option is in the table with its default, its defaults leave
// the defaults as they were, and bad combinations are refused.
func TestStudyOptionsParse(t *testing.T) {
	g := games.MustNew("sushigo-seq")
	c4 := games.MustNew("connect4")
	parse := func(gg games.Game, sp string) (Options, error) {
		s, err := spec.Parse(sp)
		if err != nil {
			t.Fatal(err)
		}
		o, err := ParseOptions(gg, s, agent.Env{})
		if err != nil {
			return o, err
		}
		_, err = NewAgent(gg, o, 1)
		return o, err
	}
	o, err := parse(g, "mcts:pbform=study003")
	if err != nil || o.Bias != 0.2 || o.PBForm != PBUCTLn1 {
		t.Errorf("pbform=study003: bias %v form %q err %v; want study 003's b = 0.2", o.Bias, o.PBForm, err)
	}
	if o, err = parse(g, "mcts:pbform=study003,bias=3"); err != nil || o.Bias != 3 {
		t.Errorf("pbform=study003,bias=3: bias %v err %v", o.Bias, err)
	}
	if o, err = parse(c4, "mcts:rewards=01,cut=zero,amafexplore=uct,pbform=canopy"); err != nil || !o.Rewards01 {
		t.Errorf("rewards=01: %+v %v", o.Rewards01, err)
	}
	tr, _ := New(c4, func() Options { o := DefaultOptions(); o.Rule, o.RaveSchedule = RAVE, RaveAdditive; return o }(), 1)
	if tr.opt.C != 1 {
		t.Errorf("ravesched=study001: c = %v, want the printed coefficient 1", tr.opt.C)
	}
	for _, c := range []struct {
		game     games.Game
		sp, want string
	}{
		{g, "mcts:pbform=study003,sel=puct", "sel=uct"},
		{c4, "mcts:amafexplore=ucb1tuned", "RAVE family"},
		{c4, "mcts:sel=alphaamaf,ravesched=study001", "sel=rave and poolrave"},
		{c4, "mcts:cut=score,depth=4", "games.Scorer"},
		{c4, "mcts:cut=heuristic,depth=4", "no heuristic"},
		{g, "mcts:ismcts=true,threads=2", "single-threaded"},
		{g, "mcts:ismcts=true,det=4", "without det"},
		{c4, "mcts:ismcts=true", "hidden-information"},
		{games.MustNew("sushigo:players=2"), "mcts:ismcts=true", "sushigo-seq"},
		{c4, "mcts:sel=rave,pool=tree", "sel=poolrave"},
	} {
		if _, err := parse(c.game, c.sp); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", c.sp, err, c.want)
		}
	}
	for _, sp := range []string{"mcts:ismcts=true,sel=uct", "mcts:ismcts=true,sel=puct", "mcts:ismcts=true,sel=rave",
		"mcts:ismcts=true,sel=ucb1tuned", "mcts:ismcts=true,sel=alphaamaf,amafexplore=ucb1tuned", "mcts:ismcts=true,bias=1",
		"mcts:ismcts=true,pbform=study003", "mcts:ismcts=true,rewards=01", "mcts:ismcts=true,sel=poolrave,pool=tree"} {
		if _, err := parse(g, sp); err != nil {
			t.Errorf("%s: %v", sp, err)
		}
	}
}

// Each option changes what the search does: the root statistics of the
// same position, seed and budget differ from those without it. The cut
// rows search a Sushi Go position three picks before the end of a round:
// running scores change only at a round's end, which cut-off rollouts
// from the leaves of a 300-simulation tree (a child per joint action)
// reach only from there.
func TestStudyOptionsChangeSearch(t *testing.T) {
	ctx := context.Background()
	c4 := games.MustNew("connect4")
	sushi := games.MustNew("sushigo:players=2")
	seq := games.MustNew("sushigo-seq:players=2")
	for _, c := range []struct {
		g        games.Game
		base, sp string
		picks    int // Sushi Go: joint picks before the position (default 2)
	}{
		{c4, "mcts:sims=400", "mcts:sims=400,rewards=01", 0},
		{c4, "mcts:sims=400,sel=rave", "mcts:sims=400,sel=rave,ravesched=study001", 0},
		{c4, "mcts:sims=400,sel=rave,ravesched=study001,ravek=50", "mcts:sims=400,sel=rave,ravesched=study001clamp,ravek=50", 0},
		{c4, "mcts:sims=400,sel=alphaamaf", "mcts:sims=400,sel=alphaamaf,amafexplore=ucb1tuned", 0},
		{seq, "mcts:sims=300,det=1", "mcts:sims=300,det=1,pbform=study003", 0},
		{seq, "mcts:sims=300,det=1,bias=0.2,c=0.3", "mcts:sims=300,det=1,pbform=study003,c=0.3", 0},
		{sushi, "mcts:sims=300,det=1", "mcts:sims=300,det=1,bias=2", 0},
		{sushi, "mcts:sims=300,det=1,depth=4", "mcts:sims=300,det=1,depth=4,cut=heuristic", 0},
		{sushi, "mcts:sims=300,det=1,depth=4", "mcts:sims=300,det=1,depth=4,cut=score", 7},
	} {
		s := c.g.NewInitialState()
		if c.g != c4 {
			s = sushiPosition(c.g, cmp.Or(c.picks, 2), 3)
		}
		p := max(s.CurrentPlayer(), 0)
		var stats [2][]ActionStat
		for i, sp := range []string{c.base, c.sp} {
			a, err := newMCTS(t, c.g, sp, 7)
			if err != nil {
				t.Fatalf("%s: %v", sp, err)
			}
			if stats[i], err = a.Stats(ctx, s, p); err != nil {
				t.Fatalf("%s: %v", sp, err)
			}
		}
		same := len(stats[0]) == len(stats[1])
		for j := 0; same && j < len(stats[0]); j++ {
			same = stats[0][j].Action == stats[1][j].Action && stats[0][j].Visits == stats[1][j].Visits && stats[0][j].Q == stats[1][j].Q
		}
		if same {
			t.Errorf("%s: same root statistics as %s", c.sp, c.base)
		}
	}
}

// pbh=one is study 003's eq. 5 as printed: the bias term b/(1+n) with no
// heuristic, so every root edge carries the prior 1 (in any game, one
// without a heuristic included), and it is refused where it means nothing.
func TestProgressiveBiasUnit(t *testing.T) {
	ctx := context.Background()
	for _, gs := range []string{"connect4", "sushigo:players=2"} {
		g := games.MustNew(gs)
		s, sp := g.NewInitialState(), "mcts:pbform=study003,pbh=one,sims=50"
		if gs != "connect4" {
			s, sp = sushiPosition(g, 1, 3), sp+",det=1"
		}
		a, err := newMCTS(t, g, sp, 1)
		if err != nil {
			t.Fatalf("%s: %v", gs, err)
		}
		st, err := a.Stats(ctx, s, 0)
		if err != nil {
			t.Fatal(err)
		}
		total := 0
		for _, x := range st {
			total += x.Visits
			if x.Prior != 1 {
				t.Errorf("%s: %s prior %v, want 1 for every action", gs, s.ActionString(x.Action), x.Prior)
			}
		}
		if total != 50 {
			t.Errorf("%s: %d root visits, want 50", gs, total)
		}
	}
	c4 := games.MustNew("connect4")
	for _, c := range []struct{ sp, want string }{
		{"mcts:pbh=one", "needs bias"},
		{"mcts:bias=1,pbh=one,rollout=heuristic", "drop pbh=one"},
		{"mcts:bias=1", "no heuristic"},
	} {
		if _, err := newMCTS(t, c4, c.sp, 1); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one naming %q", c.sp, err, c.want)
		}
	}
}
