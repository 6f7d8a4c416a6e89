package search

import (
	"context"
	"fmt"
	"github.com/canopy-go/canopy/agent"
	"math"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/spec"
)

// matrixGame is one simultaneous round of a two-player zero-sum matrix
// game: each player names an action 0..n-1, player 0 receives
// payoff(a0, a1) and player 1 its negation.
type matrixGame struct {
	name   string
	n      int
	payoff func(a0, a1 games.Action) float64
}

type matrixState struct {
	g    matrixGame
	done bool
	j    [2]games.Action
}

// mpGame is one round of matching pennies: player 0 wins (+1) when the two
// coins match, player 1 when they differ. The unique equilibrium is 50/50
// for both players (a pure strategy is exploited by the other player).
var mpGame = matrixGame{"mp-test", 2, func(a0, a1 games.Action) float64 {
	if a0 == a1 {
		return 1
	}
	return -1
}}

func (g matrixGame) Type() games.Type {
	return games.Type{Name: g.name, Dynamics: games.Simultaneous, Utility: games.ZeroSum,
		MinPlayers: 2, MaxPlayers: 2, MinReturn: -1, MaxReturn: 1}
}
func (g matrixGame) Spec() string                         { return g.name }
func (matrixGame) NumPlayers() int                        { return 2 }
func (g matrixGame) NumActions() int                      { return g.n }
func (matrixGame) MaxGameLength() int                     { return 1 }
func (matrixGame) ObservationShape() []int                { return []int{1} }
func (g matrixGame) NewInitialState() games.State         { return &matrixState{g: g} }
func (matrixGame) ParseState(string) (games.State, error) { return nil, fmt.Errorf("not supported") }

func (s *matrixState) Game() games.Game { return s.g }
func (s *matrixState) CurrentPlayer() int {
	if s.done {
		return games.TerminalPlayer
	}
	return games.SimultaneousPlayer
}
func (s *matrixState) IsTerminal() bool     { return s.done }
func (s *matrixState) Legal(dst games.Mask) { dst.Clear() }
func (s *matrixState) Apply(games.Action)   { panic("simultaneous") }
func (s *matrixState) LegalFor(p int, dst games.Mask) {
	dst.Clear()
	if !s.done {
		for a := range s.g.n {
			dst.Set(games.Action(a))
		}
	}
}
func (s *matrixState) ApplyJoint(j []games.Action) { s.j, s.done = [2]games.Action{j[0], j[1]}, true }
func (s *matrixState) Clone() games.State          { c := *s; return &c }
func (s *matrixState) CloneInto(d games.State)     { *d.(*matrixState) = *s }
func (s *matrixState) Returns(dst []float64) {
	dst[0], dst[1] = 0, 0
	if s.done {
		dst[0] = s.g.payoff(s.j[0], s.j[1])
		dst[1] = -dst[0]
	}
}
func (s *matrixState) Hash() uint64 {
	if s.done {
		return 1 + uint64(s.j[0])*uint64(s.g.n) + uint64(s.j[1])
	}
	return 0
}
func (s *matrixState) Observation(int, []float32)               {}
func (s *matrixState) MoveNumber() int                          { return map[bool]int{false: 0, true: 1}[s.done] }
func (s *matrixState) ActionString(a games.Action) string       { return fmt.Sprint(int(a)) }
func (s *matrixState) ParseAction(string) (games.Action, error) { return 0, fmt.Errorf("no") }
func (s *matrixState) String() string                           { return fmt.Sprint(s.done, s.j) }

func approx(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

// Exp3 and regret-matching strategies on hand-computed numbers.
func TestBanditPolicies(t *testing.T) {
	rho := make([]float64, 3)
	// eta = 0.1/3, cum = 0, 10, 20: weights e^0, e^(1/3), e^(2/3) =
	// 1, 1.3956124, 1.9477340 (sum 4.3433464).
	Exp3Policy(rho, []float64{0, 10, 20}, 0.1/3)
	for i, want := range []float64{0.2302375, 0.3213223, 0.4484401} {
		if math.Abs(rho[i]-want) > 1e-6 {
			t.Errorf("Exp3 rho[%d] = %.7f, want %.7f", i, rho[i], want)
		}
	}
	// sigma = 0.9*rho + 0.1/3.
	for i, want := range []float64{0.2405471, 0.3225234, 0.4369294} {
		if got := MixUniform(rho[i], 0.1, 3); math.Abs(got-want) > 1e-6 {
			t.Errorf("Exp3 sigma[%d] = %.7f, want %.7f", i, got, want)
		}
	}
	// Stability: huge sums differing by 30 at eta 0.1: 1/(1+e^3), e^3/(1+e^3).
	Exp3Policy(rho[:2], []float64{1e12, 1e12 + 30}, 0.1)
	if math.Abs(rho[0]-0.0474259) > 1e-6 || math.Abs(rho[1]-0.9525741) > 1e-6 {
		t.Errorf("Exp3 with large sums: %v, want [0.0474259 0.9525741]", rho[:2])
	}
	rho = make([]float64, 4)
	RegretMatchingPolicy(rho, []float64{2, -1, 6, 0})
	for i, want := range []float64{0.25, 0, 0.75, 0} {
		if !approx(rho[i], want) {
			t.Errorf("RM rho[%d] = %v, want %v", i, rho[i], want)
		}
	}
	// gamma 0.2 among 4: sigma = 0.8*rho + 0.05.
	for i, want := range []float64{0.25, 0.05, 0.65, 0.05} {
		if got := MixUniform(rho[i], 0.2, 4); !approx(got, want) {
			t.Errorf("RM sigma[%d] = %v, want %v", i, got, want)
		}
	}
	RegretMatchingPolicy(rho, []float64{-3, 0, -1, -2})
	for i := range rho {
		if !approx(rho[i], 0.25) {
			t.Errorf("RM without positive regret: rho = %v, want uniform", rho)
		}
	}
}

// One simulation of matching pennies from a fresh tree, checked by hand:
// both players sample from the uniform strategy (sigma = 1/2), the joint
// action ends the game, and the player who won (x = 1) gets Exp3 sum
// x/sigma = 2 on its edge, or RM regrets +1 (x/sigma - x) on its edge and
// -1 on the other; the loser (x = 0) gets nothing. Each edge's cumulative
// strategy is 1/2.
func TestBanditUpdates(t *testing.T) {
	g := mpGame
	for _, sel := range []SimRule{SimExp3, SimRM} {
		o := DefaultOptions()
		o.SimSel, o.Sims = sel, 1
		tr, err := New(g, o, 3)
		if err != nil {
			t.Fatal(err)
		}
		tr.Search(context.Background(), g.NewInitialState())
		nd := &tr.a.nodes[tr.root]
		w := tr.walkers[0]
		winner := 1
		if tr.a.edges[w.path[0].edge].action == tr.a.edges[w.path[1].edge].action {
			winner = 0
		}
		for p := range 2 {
			first, cnt := simSegment(tr.a, nd, p, 2)
			for i := first; i < first+cnt; i++ {
				e, x := &tr.a.edges[i], &tr.a.ext[i]
				// x = v/2: +1/2 for the winner, -1/2 for the loser;
				// sigma = 1/2 for either edge of a first visit.
				r := -0.5
				if p == winner {
					r = 0.5
				}
				chosen := i == w.path[p].edge
				var want float64
				switch {
				case sel == SimExp3 && chosen:
					want = r / 0.5
				case sel == SimExp3:
				case chosen:
					want = r/0.5 - r
				default:
					want = -r
				}
				if got := float64(x.w2) / valueScale; !approx(got, want) {
					t.Errorf("%v player %d action %d (chosen %v, winner %d): sum %v, want %v", sel, p, e.action, chosen, winner, got, want)
				}
				if got := float64(x.amafW) / valueScale; !approx(got, 0.5) {
					t.Errorf("%v: cumulative strategy %v, want 0.5", sel, got)
				}
			}
		}
	}
}

// The prisoner's dilemma of simultaneous_test.go, where decoupled UCT
// picks the dominated c in about half of its choices: Exp3 and regret
// matching, which sample from mixed strategies instead of co-adapting
// deterministically, choose the dominant d. The move is the average
// strategy's most probable action (simfinal=max, the default; 17-18 of 18
// when it was sampled from it, simfinal=sample), and RM's strategies are
// noisy at small budgets, so a few misses are allowed: the check is at
// least 16 of 18 choices (9 seeds, 2 players). Observed: see the log (-v).
func TestBanditPrisonersDilemma(t *testing.T) {
	g := pdGame{}
	for _, sel := range []SimRule{SimExp3, SimRM} {
		const seeds = 9
		right := 0
		var missed []string
		var pd float64
		for seed := uint64(1); seed <= seeds; seed++ {
			o := DefaultOptions()
			o.SimSel, o.Sims = sel, 3000
			a := newAgent(t, g, o, seed)
			s := g.NewInitialState()
			for p := range 2 {
				st, err := a.Stats(context.Background(), s, p)
				if err != nil {
					t.Fatal(err)
				}
				for _, x := range st {
					if x.Action == 1 {
						pd += x.Strategy / (2 * seeds)
					}
				}
				act := a.trees[0].Choose(st, s.MoveNumber())
				if act == 1 {
					right++
				} else {
					missed = append(missed, fmt.Sprintf("seed %d player %d chose %s", seed, p, s.ActionString(act)))
				}
			}
		}
		t.Logf("%v: d chosen %d of %d; mean average-strategy weight of d %.3f", sel, right, 2*seeds, pd)
		if right < 16 {
			t.Errorf("%v: the dominant d chosen %d times of %d, want >= 16; %v", sel, right, 2*seeds, missed)
		}
	}
}

// Matching pennies: the average strategy of Exp3 and regret matching at
// the root approaches the unique equilibrium 50/50 for both players.
// (Decoupled UCB is not required to: its visit frequencies also hover near
// 1/2 here, but it is deterministic given its statistics, so the move it
// plays is a pure strategy; its numbers are only logged.)
func TestBanditMatchingPennies(t *testing.T) {
	g := mpGame
	sims := 20000
	if testing.Short() {
		sims = 5000
	}
	for _, sel := range []SimRule{SimExp3, SimRM, SimUCB} {
		for seed := uint64(1); seed <= 3; seed++ {
			o := DefaultOptions()
			o.SimSel, o.Sims = sel, sims
			tr, err := New(g, o, seed)
			if err != nil {
				t.Fatal(err)
			}
			tr.Search(context.Background(), g.NewInitialState())
			var heads [2]float64
			for p := range 2 {
				for _, st := range tr.RootStats(p, nil) {
					if st.Action != 0 {
						continue
					}
					heads[p] = st.Strategy
					if sel == SimUCB {
						heads[p] = float64(st.Visits) / float64(sims)
					}
				}
			}
			t.Logf("%v seed %d: P(heads) = %.3f, %.3f", sel, seed, heads[0], heads[1])
			if sel == SimUCB {
				continue
			}
			for p, h := range heads {
				if math.Abs(h-0.5) > 0.1 {
					t.Errorf("%v seed %d: player %d average strategy P(heads) = %.3f, want 0.5 +- 0.1", sel, seed, p, h)
				}
			}
		}
	}
}

// Bandit simulations allocate nothing, also combined with rules whose
// statistics share the bandit fields (UCB1-Tuned: w2, RAVE: amafW).
func TestBanditZeroAllocs(t *testing.T) {
	g := pdGame{}
	for _, sel := range []SimRule{SimExp3, SimRM} {
		for _, rule := range []Rule{UCT, UCB1Tuned, RAVE} {
			o := DefaultOptions()
			o.SimSel, o.Rule, o.Sims = sel, rule, 500
			a := newAgent(t, g, o, 5)
			if _, err := a.Act(context.Background(), g.NewInitialState(), 0); err != nil {
				t.Fatal(err)
			}
			tr := a.Tree()
			w := tr.walkers[0]
			if n := testing.AllocsPerRun(100, func() { tr.simulate(w) }); n != 0 {
				t.Errorf("%v %v: %v allocs per simulation", sel, rule, n)
			}
			// The rule's statistics did not leak into the bandit fields:
			// the cumulative strategy of the root segment sums to the
			// root's visits (one unit per visit).
			nd := &tr.a.nodes[tr.root]
			first, cnt := simSegment(tr.a, nd, 0, 2)
			var sum float64
			for i := first; i < first+cnt; i++ {
				sum += float64(tr.a.ext[i].amafW) / valueScale
				if tr.a.ext[i].amafN != 0 {
					t.Errorf("%v %v: AMAF count %d on a bandit edge", sel, rule, tr.a.ext[i].amafN)
				}
			}
			if math.Abs(sum-float64(nd.n)) > 1e-3*float64(nd.n) {
				t.Errorf("%v %v: cumulative strategy %v, want the root visits %d", sel, rule, sum, nd.n)
			}
		}
	}
}

// threads > 1 is race-free (run with -race) and still finds d.
func TestBanditThreads(t *testing.T) {
	g := pdGame{}
	for _, sel := range []SimRule{SimExp3, SimRM} {
		o := DefaultOptions()
		o.SimSel, o.Sims, o.Threads, o.SimFinal = sel, 2000, 2, SimFinalMax
		a := newAgent(t, g, o, 7)
		st, err := a.Stats(context.Background(), g.NewInitialState(), 0)
		if err != nil {
			t.Fatal(err)
		}
		var sum float64
		for _, x := range st {
			sum += x.Strategy
		}
		if !approx(sum, 1) {
			t.Errorf("%v threads=2: strategies sum to %v", sel, sum)
		}
	}
}

func TestBanditOptions(t *testing.T) {
	g := pdGame{}
	sp, _ := spec.Parse("mcts:simsel=rm,simgamma=0.2,simfinal=max")
	o, err := ParseOptions(g, sp, agent.Env{})
	if err != nil {
		t.Fatal(err)
	}
	if o.SimSel != SimRM || o.SimGamma != 0.2 || o.SimFinal != SimFinalMax {
		t.Errorf("parsed %v %v %v", o.SimSel, o.SimGamma, o.SimFinal)
	}
	for _, bad := range []string{"mcts:simgamma=1.5", "mcts:simsel=exp3,simgamma=0", "mcts:simgamma=-0.1"} {
		sp, err := spec.Parse(bad)
		if err != nil {
			t.Fatal(err)
		}
		o, err := ParseOptions(g, sp, agent.Env{})
		if err == nil {
			_, err = NewAgent(g, o, 1)
		}
		if err == nil || !strings.Contains(err.Error(), "simgamma") {
			t.Errorf("%s: err = %v, want a simgamma error", bad, err)
		}
	}
}
