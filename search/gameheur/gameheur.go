package gameheur

import (
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/sushigo"
	"github.com/canopy-go/canopy/games/tetrislink"
	"github.com/canopy-go/canopy/search"
)

func init() {
	// Tetris Link: the tuned weighted feature sum (points dominate), in
	// points-like units; scale the bias weight accordingly.
	search.RegisterHeuristic("tetrislink", func(games.Game) search.Heuristic {
		return search.HeuristicFunc(Tetrislink)
	})
	// Sushi Go (both views): the change in the mover's heuristic points.
	sg := func(games.Game) search.Heuristic { return search.HeuristicFunc(sushigo.Heuristic) }
	search.RegisterHeuristic("sushigo", sg)
	search.RegisterHeuristic("sushigo-seq", sg)
}

// Tetrislink scores a legal placement a for the player to move in s with
// tetrislink.TunedWeights; 0 for other states. player is ignored (the
// features are the mover's).
func Tetrislink(s games.State, player int, a games.Action) float64 {
	st, ok := s.(*tetrislink.State)
	if !ok || s.IsTerminal() {
		return 0
	}
	v := st.Features(a).Vector()
	w := tetrislink.TunedWeights
	return w[0]*v[0] + w[1]*v[1] + w[2]*v[2] + w[3]*v[3]
}
