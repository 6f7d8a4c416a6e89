package rl

import (
	"fmt"
	"math"

	"github.com/canopy-go/canopy/games"
)

// Shaping is a dense reward added to the learner's reward of each of its
// moves, as two studies define it. It is off by default (zero values);
// Study002Shaping and Study000Shaping give the studies' values and
// StudyShaping picks the one defined for a game.
//
// Study 002's terms (section 3.3, "PPO+Dense") are defined through the
// game API, for two-player games whose actions place a piece on a column
// or a cell (an action number names the same place for both players, as
// in Connect Four):
//
//   - Block: the learner's move a blocks an opponent's immediate win: had
//     the learner played another legal action b instead, the opponent
//     could win at once by playing a.
//   - Threat: the learner's move, which did not end the game, creates a
//     threat: after some opponent reply o, the learner could win at once
//     with an action w != o that was not an immediate win before its
//     move.
//
// Study 000's terms (section 3.1, Sequence) need states that measure lines
// (LineState):
//
//   - Extend: per unit of growth of the learner's longest run of chips
//     (corners counted) made by its move.
//   - OpenFour: the learner's move puts a chip on the empty square of an
//     opponent's open four (LineState.BlocksFive).
//
// None of the terms is potential-based (Ng et al. 1999), so they change
// which policy is optimal: a learner that already has an immediate win
// earns the threat bonus again by making another threat instead of
// winning, which pays against opponents that do not block (random). A
// Connect Four run against onestep and random learnt exactly that: most
// of its losses to random were wins left standing for several moves
// (docs/RESULTS.md, section 6). Extend pays once per unit of length, so
// it cannot be farmed that way, but it pays for lines that cannot become
// sequences.
//
// EpisodeStats do not include the shaped rewards (they count games).
type Shaping struct {
	Block    float64 `json:"block,omitempty"`
	Threat   float64 `json:"threat,omitempty"`
	Extend   float64 `json:"extend,omitempty"`
	OpenFour float64 `json:"open_four,omitempty"`
}

// LineState is a state that measures lines for study 000's shaping; the
// Sequence game's states implement it.
type LineState interface {
	games.State
	// LongestRun returns the length of player's longest line of pieces.
	LongestRun(player int) int
	// BlocksFive reports whether the player to move, playing a, fills
	// the gap of an opponent's open four.
	BlocksFive(a games.Action) bool
}

// Study002Shaping is study 002's dense reward: +0.1 for a block and +0.05
// for a threat.
func Study002Shaping() Shaping { return Shaping{Block: 0.1, Threat: 0.05} }

// Study000Shaping is study 000's: +0.05 per unit of growth of the longest
// run and +0.1 for blocking an open four.
func Study000Shaping() Shaping { return Shaping{Extend: 0.05, OpenFour: 0.1} }

// StudyShaping returns the shaping a study defines for g: study 000's for
// games whose states are LineStates (Sequence), study 002's otherwise.
func StudyShaping(g games.Game) Shaping {
	if _, ok := g.NewInitialState().(LineState); ok {
		return Study000Shaping()
	}
	return Study002Shaping()
}

func (sh Shaping) enabled() bool { return sh != Shaping{} }

func (sh Shaping) lines() bool { return sh.Extend != 0 || sh.OpenFour != 0 }

func (sh Shaping) check(g games.Game) error {
	for _, v := range [...]float64{sh.Block, sh.Threat, sh.Extend, sh.OpenFour} {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("rl: shaping rewards %+v: want finite values", sh)
		}
	}
	if sh.enabled() && g.NumPlayers() != 2 {
		return fmt.Errorf("rl: shaped rewards are defined for two-player games, not %d players", g.NumPlayers())
	}
	if _, ok := g.NewInitialState().(LineState); sh.lines() && !ok {
		return fmt.Errorf("rl: study 000's line rewards (extend %g, open four %g) need a game that measures lines, such as sequence; %s does not", sh.Extend, sh.OpenFour, g.Spec())
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
	if sh.lines() {
		r += sh.lineReward(sc, s.(LineState), seat, a)
	}
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

// lineReward is study 000's part of reward.
func (sh Shaping) lineReward(sc *shapeScratch, s LineState, seat int, a games.Action) float64 {
	var r float64
	if sh.OpenFour != 0 && s.BlocksFive(a) {
		r += sh.OpenFour
	}
	if sh.Extend != 0 {
		before := s.LongestRun(seat)
		s.CloneInto(sc.x)
		sc.x.Apply(a)
		r += sh.Extend * float64(sc.x.(LineState).LongestRun(seat)-before)
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
