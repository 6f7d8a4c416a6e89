package tetrislink

import (
	"fmt"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/spec"
)

func init() {
	games.Register(games.Registration{
		Name:    "tetrislink",
		Summary: "Tetris Link: drop tetrominoes into a 10x20 grid, score same-colour groups of 3+ (2-4 players)",
		Options: playersTable(new(int)).Docs(),
		New: func(s *spec.Spec) (games.Game, error) {
			var n int
			if err := playersTable(&n).Parse(s); err != nil {
				return nil, err
			}
			g, err := New(n)
			if err != nil {
				return nil, err
			}
			return g, nil
		},
	})
}

// Game is Tetris Link for a fixed number of players. It is immutable and
// safe for concurrent use.
type Game struct {
	players int
}

// New returns the game for 2 to 4 players.
func New(players int) (*Game, error) {
	if players < 2 || players > MaxPlayers {
		return nil, fmt.Errorf("tetrislink: %d players, want 2 to %d", players, MaxPlayers)
	}
	return &Game{players: players}, nil
}

// Type implements games.Game. Returns are rank-based (see State.Returns),
// so they lie in [-1, 1] and sum to zero.
func (g *Game) Type() games.Type {
	return games.Type{
		Name: "tetrislink", LongName: "Tetris Link",
		Dynamics: games.Sequential, Chance: games.Deterministic,
		Information: games.PerfectInformation, Utility: games.ZeroSum,
		MinPlayers: 2, MaxPlayers: MaxPlayers,
		MinReturn: -1, MaxReturn: 1,
	}
}

// Spec implements games.Game.
func (g *Game) Spec() string { return fmt.Sprintf("tetrislink:players=%d", g.players) }

// NumPlayers implements games.Game.
func (g *Game) NumPlayers() int { return g.players }

// NumActions implements games.Game: 19 orientations x 10 drop columns.
func (g *Game) NumActions() int { return NumActionIDs }

// MaxGameLength implements games.Game: every action places one of the
// players' 25 pieces; skips are not actions.
func (g *Game) MaxGameLength() int { return g.players * NumShapes * PiecesEach }

// ObservationShape implements games.Game: [6*players, 20, 10]. See
// State.Observation for the planes.
func (g *Game) ObservationShape() []int { return []int{6 * g.players, Height, Width} }

// NewInitialState implements games.Game.
func (g *Game) NewInitialState() games.State { return g.NewState() }

// NewState returns the initial state as its concrete type.
func (g *Game) NewState() *State {
	s := &State{g: g}
	s.Reset()
	return s
}

// playersTable declares Tetris Link's one option, bound to n.
func playersTable(n *int) spec.Table {
	return spec.Table{spec.Int("players", n, 2, 2, MaxPlayers, "number of players")}
}
