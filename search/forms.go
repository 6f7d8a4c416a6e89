package search

import "slices"

// named lists the spellings of a typed option value: its name (what help
// shows and String returns) and aliases that are still accepted, such as
// the study-numbered names earlier versions used (RESULTS' commands keep
// running with them).
type named struct {
	name    string
	aliases []string
}

func parseNamed(table []named, s string) (int, bool) {
	for i, n := range table {
		if n.name == s || slices.Contains(n.aliases, s) {
			return i, true
		}
	}
	return 0, false
}

func namedChoices(table []named) []string {
	var out []string
	for _, n := range table {
		out = append(out, n.name)
		out = append(out, n.aliases...)
	}
	return out
}

func nameOf(table []named, i int) string {
	if i >= 0 && i < len(table) {
		return table[i].name
	}
	return "unknown"
}

// RaveSchedule is how the RAVE family (sel=rave and poolrave) weighs the
// AMAF mean against the edge's own mean (ravesched).
type RaveSchedule uint8

const (
	// RaveSqrt: beta = sqrt(k/(3n+k)) (Gelly & Silver 2007), k = RaveK.
	RaveSqrt RaveSchedule = iota
	// RaveSilver: beta = na/(n+na+4b^2 n na) (Gelly & Silver 2011), b =
	// RaveB.
	RaveSilver
	// RaveAdditive is an additive score instead of a blend:
	// x + alpha*x_RAVE + c*sqrt(2 ln N / n) with alpha = (k - n_RAVE)/k,
	// negative beyond k AMAF visits, on 0/1 win rates: study 001's score
	// as printed (alias study001; see raveStudy001Score).
	RaveAdditive
	// RaveAdditiveClamped is RaveAdditive with alpha = max(0, (k -
	// n_RAVE)/k), the reading of study 001's words (alias study001clamp).
	RaveAdditiveClamped
)

var raveScheduleNames = []named{
	RaveSqrt:            {name: "sqrt"},
	RaveSilver:          {name: "silver"},
	RaveAdditive:        {name: "additive", aliases: []string{"study001"}},
	RaveAdditiveClamped: {name: "additive-clamped", aliases: []string{"study001clamp"}},
}

// ParseRaveSchedule returns the schedule named s (a name or an alias).
func ParseRaveSchedule(s string) (RaveSchedule, bool) {
	i, ok := parseNamed(raveScheduleNames, s)
	return RaveSchedule(i), ok
}

func (r RaveSchedule) String() string { return nameOf(raveScheduleNames, int(r)) }

// additive reports whether r is one of the additive scores.
func (r RaveSchedule) additive() bool { return r == RaveAdditive || r == RaveAdditiveClamped }

// PBForm is the score that progressive bias is added to (pbform).
type PBForm uint8

const (
	// PBAdded adds b*h/(1+n) to the selection rule's own score (the
	// default; alias canopy).
	PBAdded PBForm = iota
	// PBUCTLn1 is Q + K*sqrt(ln(N+1)/n) + b*h/(1+n) with K = c defaulting
	// to 5 and b to 0.2, sel=uct only: study 003's eq. 5 (alias study003).
	PBUCTLn1
)

var pbFormNames = []named{
	PBAdded:  {name: "added", aliases: []string{"canopy"}},
	PBUCTLn1: {name: "uct-ln1", aliases: []string{"study003"}},
}

// ParsePBForm returns the form named s (a name or an alias).
func ParsePBForm(s string) (PBForm, bool) {
	i, ok := parseNamed(pbFormNames, s)
	return PBForm(i), ok
}

func (f PBForm) String() string { return nameOf(pbFormNames, int(f)) }

// AmafExplore is the RAVE family's exploration term around the blended
// mean (amafexplore).
type AmafExplore uint8

const (
	// AmafUCT is c*sqrt(ln N / n) (the default).
	AmafUCT AmafExplore = iota
	// AmafUCB1Tuned is UCB1-Tuned's variance bound, as study 003 combines
	// alpha-AMAF with UCB1-Tuned (see amafTunedScore).
	AmafUCB1Tuned
)

var amafExploreNames = []named{
	AmafUCT:       {name: "uct"},
	AmafUCB1Tuned: {name: "ucb1tuned"},
}

// ParseAmafExplore returns the exploration term named s.
func ParseAmafExplore(s string) (AmafExplore, bool) {
	i, ok := parseNamed(amafExploreNames, s)
	return AmafExplore(i), ok
}

func (a AmafExplore) String() string { return nameOf(amafExploreNames, int(a)) }

// PoolAt is where PoolRAVE plays its pool moves (pool).
type PoolAt uint8

const (
	// PoolInRollout (the default; Rimmel et al. 2010): with probability
	// PoolP a rollout move is drawn from the PoolK actions with the best
	// AMAF value at the last tree node.
	PoolInRollout PoolAt = iota
	// PoolInTree (study 001, section 4.1.4): with probability PoolP a
	// selection step takes one of the PoolK edges with the best AMAF
	// value instead of the tree policy; rollouts are then plain. See
	// selectPool.
	PoolInTree
)

var poolAtNames = []named{
	PoolInRollout: {name: "rollout"},
	PoolInTree:    {name: "tree"},
}

// ParsePoolAt returns the pool placement named s.
func ParsePoolAt(s string) (PoolAt, bool) {
	i, ok := parseNamed(poolAtNames, s)
	return PoolAt(i), ok
}

func (p PoolAt) String() string { return nameOf(poolAtNames, int(p)) }

// FinalMove is how the move to play is chosen from the root's statistics
// once no move is sampled (final).
type FinalMove uint8

const (
	// FinalVisits plays the most visited action, ties by value (the
	// default).
	FinalVisits FinalMove = iota
	// FinalValue plays the best value among the visited actions.
	FinalValue
)

var finalMoveNames = []named{
	FinalVisits: {name: "visits"},
	FinalValue:  {name: "value"},
}

// ParseFinalMove returns the choice named s.
func ParseFinalMove(s string) (FinalMove, bool) {
	i, ok := parseNamed(finalMoveNames, s)
	return FinalMove(i), ok
}

func (f FinalMove) String() string { return nameOf(finalMoveNames, int(f)) }

// SimFinal is how simsel=exp3/rm choose the move at a simultaneous root
// from the average strategy (simfinal).
type SimFinal uint8

const (
	// SimFinalMax plays the average strategy's most probable action (ties
	// by visits, then lowest id); the default. Where one move is best,
	// as in most Sushi Go picks, it plays that move once the strategy
	// ranks it first, long before the average (which keeps the early,
	// near-uniform iterations) has concentrated on it.
	SimFinalMax SimFinal = iota
	// SimFinalSample samples the average strategy: the equilibrium-
	// consistent choice, needed where the equilibrium is mixed (matching
	// pennies), but at the budgets of a game move it plays dominated
	// moves often: the default until 2026-11-29, with which simsel=exp3
	// and rm lost every Sushi Go game to standard MCTS (RESULTS §3b).
	SimFinalSample
)

var simFinalNames = []named{
	SimFinalMax:    {name: "max"},
	SimFinalSample: {name: "sample"},
}

// ParseSimFinal returns the choice named s.
func ParseSimFinal(s string) (SimFinal, bool) {
	i, ok := parseNamed(simFinalNames, s)
	return SimFinal(i), ok
}

func (f SimFinal) String() string { return nameOf(simFinalNames, int(f)) }
