package zero

import (
	"context"
	"slices"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// tttLabel is a hand-labelled tic-tac-toe position (cells 1-9).
type tttLabel struct {
	line    []string
	optimal []int // actions (cell - 1) that keep the value
	legal   int
	outcome int
}

func (l tttLabel) Line() []string       { return l.line }
func (l tttLabel) Optimal(a int) bool   { return slices.Contains(l.optimal, a) }
func (l tttLabel) Outcome() int         { return l.outcome }
func (l tttLabel) RandomShare() float64 { return float64(len(l.optimal)) / float64(l.legal) }

// A Reference of another game than Connect Four is scored the same way:
// zero replays each line in the game's notation and checks the move
// chosen. Labels by hand: after X1 O4 X2, O must block at 3 (a draw);
// after X1 O4 X2 O5, X wins at 3; after X5 O1 X9, O must take a corner
// (3 or 7: an edge loses to X7's double threat). The first-legal mover
// plays 3, 3 and 2: right, right, wrong.
func TestReferenceOfAnotherGame(t *testing.T) {
	labels := []Labelled{
		tttLabel{[]string{"1", "4", "2"}, []int{2}, 6, 0},
		tttLabel{[]string{"1", "4", "2", "5"}, []int{2}, 5, 1},
		tttLabel{[]string{"5", "1", "9"}, []int{2, 6}, 6, 0},
	}
	ok, err := optimalMoves(context.Background(), games.MustNew("tictactoe"), labels, func() (actor, error) { return firstLegal{}, nil })
	if err != nil {
		t.Fatal(err)
	}
	if want := []bool{true, true, false}; !slices.Equal(ok, want) {
		t.Fatalf("optimal moves %v, want %v", ok, want)
	}
	byName := map[string]SolverGroup{}
	for _, gr := range solverGroups(labels, ok, []bool{false, true, true}) {
		byName[gr.Name] = gr
	}
	if gr := byName["drawn"]; gr.Positions != 2 || gr.Policy != 0.5 || gr.Search != 0.5 || gr.Random != (1.0/6+2.0/6)/2 {
		t.Errorf("drawn group %+v, want 2 positions, alone 0.5, search 0.5, random %v", gr, (1.0/6+2.0/6)/2)
	}
	if gr := byName["won"]; gr.Positions != 1 || gr.Policy != 1 || gr.Search != 1 || gr.Random != 0.2 {
		t.Errorf("won group %+v, want 1 position, alone 1, search 1, random 0.2", gr)
	}
	// A line the game cannot play is an error naming the position.
	_, err = optimalMoves(context.Background(), games.MustNew("tictactoe"), []Labelled{tttLabel{[]string{"1", "1"}, nil, 1, 0}}, func() (actor, error) { return firstLegal{}, nil })
	if err == nil {
		t.Error("an illegal line was scored")
	}
	if _, err := SolverScore(context.Background(), nil, nil, "random", 1, 1); err == nil {
		t.Error("SolverScore without a reference set: no error")
	}
}
