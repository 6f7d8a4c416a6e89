package search

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// pdGame is a two-round simultaneous prisoner's dilemma with a third,
// always-bad action: "defect" (1) strictly dominates "cooperate" (0) and
// "bad" (2). Payoff per round for (mine, theirs): (1,0) = 1, (0,0) = 0.3,
// (1,1) = -0.3, (0,1) = -1, and -1 whenever mine is 2 (bad gives the
// opponent 0.3). Returns are the two-round average.
type pdGame struct{}

type pdState struct {
	round int
	sum   [2]float64
	hist  []games.Action
}

func (pdGame) Type() games.Type {
	return games.Type{Name: "pd-test", Dynamics: games.Simultaneous, Utility: games.GeneralSum,
		MinPlayers: 2, MaxPlayers: 2, MinReturn: -1, MaxReturn: 1}
}
func (pdGame) Spec() string                           { return "pd-test" }
func (pdGame) NumPlayers() int                        { return 2 }
func (pdGame) NumActions() int                        { return 3 }
func (pdGame) MaxGameLength() int                     { return 2 }
func (pdGame) ObservationShape() []int                { return []int{1} }
func (pdGame) NewInitialState() games.State           { return &pdState{hist: make([]games.Action, 0, 4)} }
func (pdGame) ParseState(string) (games.State, error) { return nil, fmt.Errorf("not supported") }

func (s *pdState) Game() games.Game { return pdGame{} }
func (s *pdState) CurrentPlayer() int {
	if s.round == 2 {
		return games.TerminalPlayer
	}
	return games.SimultaneousPlayer
}
func (s *pdState) IsTerminal() bool     { return s.round == 2 }
func (s *pdState) Legal(dst games.Mask) { dst.Clear() }
func (s *pdState) Apply(games.Action)   { panic("simultaneous") }
func (s *pdState) LegalFor(p int, dst games.Mask) {
	dst.Clear()
	if s.round < 2 {
		dst.Set(0)
		dst.Set(1)
		dst.Set(2)
	}
}
func pdPay(mine, theirs games.Action) float64 {
	switch {
	case mine == 2:
		return -1
	case theirs == 2:
		return 0.3
	case mine == 1 && theirs == 0:
		return 1
	case mine == 0 && theirs == 0:
		return 0.3
	case mine == 1 && theirs == 1:
		return -0.3
	}
	return -1
}
func (s *pdState) ApplyJoint(j []games.Action) {
	s.sum[0] += pdPay(j[0], j[1])
	s.sum[1] += pdPay(j[1], j[0])
	s.hist = append(s.hist, j[0], j[1])
	s.round++
}
func (s *pdState) Clone() games.State {
	c := *s
	c.hist = append(make([]games.Action, 0, 4), s.hist...)
	return &c
}
func (s *pdState) CloneInto(d games.State) {
	t := d.(*pdState)
	h := append(t.hist[:0], s.hist...)
	*t = *s
	t.hist = h
}
func (s *pdState) Returns(dst []float64) {
	if s.round < 2 {
		dst[0], dst[1] = 0, 0
		return
	}
	dst[0], dst[1] = s.sum[0]/2, s.sum[1]/2
}
func (s *pdState) Hash() uint64                             { return uint64(len(s.hist)) }
func (s *pdState) Observation(int, []float32)               {}
func (s *pdState) MoveNumber() int                          { return len(s.hist) }
func (s *pdState) ActionString(a games.Action) string       { return string("cdb"[a]) }
func (s *pdState) ParseAction(string) (games.Action, error) { return 0, fmt.Errorf("no") }
func (s *pdState) String() string {
	var b strings.Builder
	for _, a := range s.hist {
		b.WriteString(s.ActionString(a))
	}
	return b.String()
}

// Decoupled selection: each player runs its own bandit at a joint node,
// so both find the dominant action under the bandits that converge to an
// equilibrium, Exp3 and regret matching (Lisý et al. 2013). The random
// edge order decides which path a search falls into, so a single seed
// proves little: the check is a majority over 9 seeds (18 choices; each
// rule chose d 17 or 18 times of 18 at 3000 simulations, 2026-11-28).
// Decoupled UCB (simsel=ucb) co-adapts here, as it is known to: both
// players' statistics move in lock step along the diagonal (c,c), (d,d),
// where c pays 0.3 and d -0.3. With one child per joint action (each
// round-2 subgame its own pair of bandits, co-adapting on its own) d was
// chosen 13, 6 and 7 times of 18 by UCT, RAVE and alpha-AMAF at 3000
// simulations (13, 6, 4 at 20000); with the former single open-loop child
// (one round-2 pair for every joint action) 10, 15 and 16. So simsel=ucb
// is only checked for allocation-free simulations, not for the choice.
func TestDecoupledSimultaneous(t *testing.T) {
	g := pdGame{}
	for _, rule := range []Rule{UCT, RAVE, AlphaAMAF} {
		for _, sel := range []SimRule{SimExp3, SimRM} {
			o := DefaultOptions()
			o.Rule, o.Sims, o.SimSel = rule, 3000, sel
			const seeds = 9
			right := 0
			var missed []string
			for seed := uint64(1); seed <= seeds; seed++ {
				a := newAgent(t, g, o, seed)
				s := g.NewInitialState()
				for p := range 2 {
					act, err := a.Act(context.Background(), s, p)
					if err != nil {
						t.Fatal(err)
					}
					if act == 1 {
						right++
					} else {
						missed = append(missed, fmt.Sprintf("seed %d player %d chose %s", seed, p, s.ActionString(act)))
					}
				}
			}
			if right <= seeds {
				t.Errorf("%v, simsel=%v: the dominant d chosen %d times of %d, want a majority; %v", rule, sel, right, 2*seeds, missed)
			}
		}
		o := DefaultOptions()
		o.Rule, o.Sims = rule, 3000
		// Allocation-free simulations on the simultaneous path too.
		a := newAgent(t, g, o, 5)
		if _, err := a.Act(context.Background(), g.NewInitialState(), 0); err != nil {
			t.Fatal(err)
		}
		tr := a.Tree()
		w := tr.walkers[0]
		if n := testing.AllocsPerRun(100, func() { tr.simulate(w) }); n != 0 {
			t.Errorf("%v: %v allocs per simulation", rule, n)
		}
	}
}

// takeGame is a two-round simultaneous game in which what a player may
// choose in round 2 depends on the other player's round-1 choice, as in
// Sushi Go (a neighbour may take the last card of a kind): each player
// picks 0, 1 or 2 in round 1; in round 2 player p may pick 0, 1 or 2
// except the other player's round-1 pick. ApplyJoint panics on an illegal
// choice. The open-loop child of the root is reached by every joint
// action, so its edges (made at its first visit) are not all legal in
// later simulations' states.
type takeGame struct{}

type takeState struct {
	round int
	picks [2][2]games.Action // [round][player]
}

func (takeGame) Type() games.Type {
	return games.Type{Name: "take-test", Dynamics: games.Simultaneous, Utility: games.ZeroSum,
		MinPlayers: 2, MaxPlayers: 2, MinReturn: -1, MaxReturn: 1}
}
func (takeGame) Spec() string                           { return "take-test" }
func (takeGame) NumPlayers() int                        { return 2 }
func (takeGame) NumActions() int                        { return 3 }
func (takeGame) MaxGameLength() int                     { return 2 }
func (takeGame) ObservationShape() []int                { return []int{1} }
func (takeGame) NewInitialState() games.State           { return &takeState{} }
func (takeGame) ParseState(string) (games.State, error) { return nil, fmt.Errorf("not supported") }

func (s *takeState) Game() games.Game { return takeGame{} }
func (s *takeState) CurrentPlayer() int {
	if s.round == 2 {
		return games.TerminalPlayer
	}
	return games.SimultaneousPlayer
}
func (s *takeState) IsTerminal() bool     { return s.round == 2 }
func (s *takeState) Legal(dst games.Mask) { dst.Clear() }
func (s *takeState) Apply(games.Action)   { panic("simultaneous") }
func (s *takeState) LegalFor(p int, dst games.Mask) {
	dst.Clear()
	if s.round == 2 {
		return
	}
	for a := range games.Action(3) {
		if s.round == 0 || a != s.picks[0][1-p] {
			dst.Set(a)
		}
	}
}
func (s *takeState) ApplyJoint(j []games.Action) {
	m := games.NewMask(3)
	for p := range 2 {
		if s.LegalFor(p, m); !m.Has(j[p]) {
			panic(fmt.Sprintf("take-test: player %d's %d is not legal in round %d after %v", p, j[p], s.round, s.picks[0]))
		}
	}
	s.picks[s.round] = [2]games.Action{j[0], j[1]}
	s.round++
}
func (s *takeState) Clone() games.State      { c := *s; return &c }
func (s *takeState) CloneInto(d games.State) { *d.(*takeState) = *s }
func (s *takeState) Hash() uint64 {
	return uint64(s.round)<<8 | uint64(s.picks[0][0])<<4 | uint64(s.picks[0][1])
}
func (s *takeState) Observation(int, []float32)         {}
func (s *takeState) MoveNumber() int                    { return s.round }
func (s *takeState) ActionString(a games.Action) string { return fmt.Sprint(int(a)) }
func (s *takeState) ParseAction(string) (games.Action, error) {
	return 0, fmt.Errorf("no")
}
func (s *takeState) String() string { return fmt.Sprint(s.round, s.picks) }

// Player 0 wins the round-2 clash when the sum of the picks is odd.
func (s *takeState) Returns(dst []float64) {
	dst[0], dst[1] = 0, 0
	if s.round == 2 {
		v := 1.0
		if (s.picks[1][0]+s.picks[1][1])%2 == 0 {
			v = -1
		}
		dst[0], dst[1] = v, -v
	}
}

// A joint action that a node's edges offer but the simulation's state
// does not allow is never applied (takeGame panics if it is): every
// selection rule at joint nodes, threads 1 and 2, many seeds.
func TestSimultaneousStaleEdges(t *testing.T) {
	g := takeGame{}
	for _, sel := range []SimRule{SimUCB, SimExp3, SimRM} {
		for _, rule := range []Rule{UCT, PUCT} {
			for seed := uint64(1); seed <= 6; seed++ {
				o := DefaultOptions()
				o.Rule, o.SimSel, o.Sims = rule, sel, 400
				o.Threads = 1 + int(seed%2) // shared trees: jointChild's CAS
				if rule == PUCT {
					o.Eval, o.ExpandVisits = Uniform{}, 0
				}
				tr, err := New(g, o, seed)
				if err != nil {
					t.Fatal(err)
				}
				if n := tr.Search(context.Background(), g.NewInitialState()); n != 400 {
					t.Fatalf("%v, %v: %d simulations, want 400", sel, rule, n)
				}
			}
		}
	}
}
