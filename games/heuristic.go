package games

// Heuristic is implemented by states of games with domain knowledge: a
// quick static score of each action for the player choosing it. Searches
// use it for progressive bias (the score is stored per edge when a node is
// expanded) and for heuristic (epsilon-greedy) rollouts, where it is called
// for every legal action at every rollout step.
//
// HeuristicValue returns the value of action a, legal for player in the
// receiver, to player: larger is better. player is the player to move at
// ordinary states and one of the choosing players at a simultaneous state
// (SimultaneousPlayer). The scale is the game's own (points, feature sums,
// distances), so a search scales it by its bias weight; only the order and
// the relative sizes among one state's actions matter. Chance and terminal
// states, and actions that are not legal, may score anything (0 by
// convention).
//
// HeuristicValue must not modify the state, must not allocate, and must be
// safe to call concurrently on distinct states (searches call it from
// several goroutines, each on its own copy).
type Heuristic interface {
	State
	HeuristicValue(player int, a Action) float64
}

// HeuristicBatch is an optional capability of Heuristic states that
// score all legal actions at once faster than one call per action (Hex
// builds its two-distance graphs once per position instead of once per
// action). Searches use it for heuristic rollouts and progressive-bias
// priors.
//
// HeuristicValues writes HeuristicValue(player, a) into dst[a] for every
// action a in legal, a subset of the legal actions, and leaves the other
// entries of dst alone; dst has NumActions entries. The values must equal
// HeuristicValue's exactly (searches may use either), and the same
// contract holds: no change to the state, no allocation, safe to call
// concurrently on distinct states.
type HeuristicBatch interface {
	Heuristic
	HeuristicValues(player int, legal Mask, dst []float64)
}

// StateValuer is an optional capability of a game's states: a static
// evaluation of the whole position for each player, in the game's own
// units (points), for searches that cut rollouts off and score the
// position reached (search's cut=state). Sushi Go's is study 003's
// EVALUATESTATE: the points scored so far plus this round's table with
// partial credit for unfinished sets and the maki and pudding standings
// projected. Sequence's counts the player's open five-square windows,
// weighted by the chips already in them, and its completed sequences.
//
// StateValue must not modify the state, must not allocate, and must be
// safe to call concurrently on distinct states.
type StateValuer interface {
	State
	StateValue(player int) float64
}
