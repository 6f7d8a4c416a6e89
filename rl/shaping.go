package rl

import (
	"fmt"
	"math"

	"github.com/canopy-go/canopy/games"
)

// Shaping is study 002's dense reward (section 3.3, "PPO+Dense"), added to
// the learner's reward of each of its moves. It is off by default (zero
// values); Study002Shaping gives the study's values. Both terms are
// defined through the game API, for two-player games whose actions place
// a piece on a column or a cell (an action number names the same place
// for both players, as in Connect Four):
//
//   - Block: the learner's move a blocks an opponent's immediate win: had
//     the learner played another legal action b instead, the opponent
//     could win at once by playing a.
//   - Threat: the learner's move, which did not end the game, creates a
//     threat: after some opponent reply o, the learner could win at once
//     with an action w != o that was not an immediate win before its
//     move.
//
// The terms are not potential-based (Ng et al. 1999), so they change
// which policy is optimal: a learner that already has an immediate win
// earns the threat bonus again by making another threat instead of
// winning, which pays against opponents that do not block (random). A
// Connect Four run against onestep and random learnt exactly that: most
// of its losses to random were wins left standing for several moves
// (docs/RESULTS.md, section 6).
//
// EpisodeStats do not include the shaped rewards (they count games).
type Shaping struct {
	Block  float64 `json:"block,omitempty"`
	Threat float64 `json:"threat,omitempty"`
}

// Study002Shaping is the study's dense reward: +0.1 for a block and +0.05
// for a threat.
func Study002Shaping() Shaping { return Shaping{Block: 0.1, Threat: 0.05} }

func (sh Shaping) enabled() bool { return sh.Block != 0 || sh.Threat != 0 }

func (sh Shaping) check(players int) error {
	if math.IsNaN(sh.Block) || math.IsInf(sh.Block, 0) || math.IsNaN(sh.Threat) || math.IsInf(sh.Threat, 0) {
		return fmt.Errorf("rl: shaping rewards block %g, threat %g: want finite", sh.Block, sh.Threat)
	}
	if sh.enabled() && players != 2 {
		return fmt.Errorf("rl: shaped rewards are defined for two-player games, not %d players", players)
	}
	return nil
}

// shapeScratch is one worker's scratch for Shaping.reward.
type shapeScratch struct {
	x, y, z games.State
	m1, m2  games.Mask
	wins    games.Mask // the learner's immediate wins before its move
	ret     []float64
}

func newShapeScratch(g games.Game) shapeScratch {
	n := g.NumActions()
	return shapeScratch{x: g.NewInitialState(), y: g.NewInitialState(), z: g.NewInitialState(),
		m1: games.NewMask(n), m2: games.NewMask(n), wins: games.NewMask(n), ret: make([]float64, g.NumPlayers())}
}

// wonBy reports whether x is over with player's return above every other.
func wonBy(x games.State, player int, ret []float64) bool {
	if !x.IsTerminal() {
		return false
	}
	x.Returns(ret)
	for p, v := range ret {
		if p != player && v >= ret[player] {
			return false
		}
	}
	return true
}

// winsAfter reports whether player, to move in x, wins at once with a.
func (sc *shapeScratch) winsAfter(x games.State, player int, a games.Action) bool {
	x.CloneInto(sc.z)
	sc.z.Apply(a)
	return wonBy(sc.z, player, sc.ret)
}

// reward is the shaped reward of the learner (seat) playing a in s, whose
// legal actions are legal. s is not modified.
func (sh Shaping) reward(sc *shapeScratch, s games.State, seat int, a games.Action, legal games.Mask) float64 {
	var r float64
	if sh.Block != 0 {
		for b := range legal.All() {
			if b == a {
				continue
			}
			s.CloneInto(sc.y)
			sc.y.Apply(b)
			if sc.y.IsTerminal() || sc.y.CurrentPlayer() < 0 || sc.y.CurrentPlayer() == seat {
				continue
			}
			sc.y.Legal(sc.m1)
			if sc.m1.Has(a) && sc.winsAfter(sc.y, sc.y.CurrentPlayer(), a) {
				r += sh.Block
				break
			}
		}
	}
	if sh.Threat != 0 {
		sc.wins.Clear()
		for w := range legal.All() {
			if sc.winsAfter(s, seat, w) {
				sc.wins.Set(w)
			}
		}
		s.CloneInto(sc.x)
		sc.x.Apply(a)
		if !sc.x.IsTerminal() && sc.x.CurrentPlayer() >= 0 && sc.x.CurrentPlayer() != seat && sh.threat(sc, seat) {
			r += sh.Threat
		}
	}
	return r
}

// threat reports whether, after some opponent reply in sc.x, the learner
// (seat) has an immediate win w that is not the reply's action and not in
// sc.wins.
func (sh Shaping) threat(sc *shapeScratch, seat int) bool {
	sc.x.Legal(sc.m1)
	for o := range sc.m1.All() {
		sc.x.CloneInto(sc.y)
		sc.y.Apply(o)
		if sc.y.IsTerminal() || sc.y.CurrentPlayer() != seat {
			continue
		}
		sc.y.Legal(sc.m2)
		for w := range sc.m2.All() {
			if w != o && !sc.wins.Has(w) && sc.winsAfter(sc.y, seat, w) {
				return true
			}
		}
	}
	return false
}
