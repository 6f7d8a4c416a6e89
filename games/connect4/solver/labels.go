package solver

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/canopy-go/canopy/games/connect4"
)

//go:embed labels.txt
var labelsText string

// Labelled is a position with the exact score of every column.
type Labelled struct {
	Moves  string              // 1-based column sequence from the empty board
	Scores [connect4.Width]int // per column 0..6, from the mover's view; Illegal when full
}

// Line is the moves that reach the position, one column number (1..7,
// the game's notation) per move.
func (l Labelled) Line() []string {
	out := make([]string, len(l.Moves))
	for i, c := range l.Moves {
		out[i] = string(c)
	}
	return out
}

// Best is the highest column score.
func (l Labelled) Best() int {
	b := Illegal
	for _, s := range l.Scores {
		if s != Illegal && (b == Illegal || s > b) {
			b = s
		}
	}
	return b
}

// Optimal reports whether column col (0..6) keeps the position's value:
// a win stays a win, a draw a draw, a loss a loss. The exact distance to
// the end is not required (a slower win is still optimal play).
func (l Labelled) Optimal(col int) bool {
	s := l.Scores[col]
	if s == Illegal {
		return false
	}
	return sign(s) == sign(l.Best())
}

// Outcome is the position's value for the mover: +1 won, 0 drawn, -1
// lost (the sign of Best).
func (l Labelled) Outcome() int { return sign(l.Best()) }

// Decisive reports whether some legal column changes the outcome: the
// position tests the choice of move (elsewhere every move is optimal).
func (l Labelled) Decisive() bool {
	for c, s := range l.Scores {
		if s != Illegal && !l.Optimal(c) {
			return true
		}
	}
	return false
}

// RandomShare is the share of legal columns that are optimal: what a
// uniformly random mover scores on the position.
func (l Labelled) RandomShare() float64 {
	legal, opt := 0, 0
	for c, s := range l.Scores {
		if s != Illegal {
			legal++
			if l.Optimal(c) {
				opt++
			}
		}
	}
	return float64(opt) / float64(max(legal, 1))
}

func sign(x int) int {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// LabelsGame is the game spec of the positions Labels returns: a
// consumer that scores networks of any game on the set (canopy zero)
// scores those of this game only.
const LabelsGame = "connect4"

// Labels returns the embedded evaluation set (labels.txt): 400 decisive
// positions (some legal move changes the outcome) of plies 8-30 from
// Pascal Pons' published test sets, each column scored by this solver
// (go run ./games/connect4/solver/genlabels). `canopy zero` scores
// networks by the share of optimal moves they play on it.
func Labels() ([]Labelled, error) { return ParseLabels(labelsText) }

// ParseLabels parses lines "MOVES s1,s2,...,s7" (x for a full column);
// blank lines and lines starting with # are skipped.
func ParseLabels(text string) ([]Labelled, error) {
	var out []Labelled
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 2 {
			return nil, fmt.Errorf("labels line %d: want MOVES SCORES, got %q", i+1, line)
		}
		if _, err := connect4.ParsePosition(f[0]); err != nil {
			return nil, fmt.Errorf("labels line %d: %v", i+1, err)
		}
		cols := strings.Split(f[1], ",")
		if len(cols) != connect4.Width {
			return nil, fmt.Errorf("labels line %d: %d scores, want %d", i+1, len(cols), connect4.Width)
		}
		l := Labelled{Moves: f[0]}
		for c, v := range cols {
			if v == "x" {
				l.Scores[c] = Illegal
				continue
			}
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, fmt.Errorf("labels line %d: score %q: %v", i+1, v, err)
			}
			l.Scores[c] = n
		}
		out = append(out, l)
	}
	return out, nil
}
