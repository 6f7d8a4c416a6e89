package zero

// A Reference is a set of labelled positions of one game, positions whose
// optimal moves are known, on which evaluation scores each network alone
// and with search (the first Config.SolverPositions positions, at
// Config.SolverSims simulations). Connect Four's solver-labelled set
// (games/connect4/solver.Labels) is one; the command passes it in
// (Options.Reference), so that zero names no game. A run of another game
// than Game scores no reference.
type Reference struct {
	Game      string                     // the game spec of the positions
	Positions func() ([]Labelled, error) // in the order they are scored
}

// Labelled is one position of a Reference.
type Labelled interface {
	// Line is the moves that reach the position from the initial state,
	// in the game's notation.
	Line() []string
	// Optimal reports whether action a keeps the position's value (a win
	// stays a win, a draw a draw).
	Optimal(a int) bool
	// Outcome is the position's value for the mover: +1 won, 0 drawn, -1
	// lost.
	Outcome() int
	// RandomShare is the share of the legal moves that are optimal: what
	// a uniformly random mover scores on the position.
	RandomShare() float64
}
