package pyapi

import (
	"fmt"
	"slices"
	"strings"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"

	_ "github.com/canopy-go/canopy/games/all" // every game
	_ "github.com/canopy-go/canopy/nets/zoo"  // the shipped networks
	_ "github.com/canopy-go/canopy/search"    // the mcts agent
	_ "github.com/canopy-go/canopy/search/engine"
	_ "github.com/canopy-go/canopy/search/multi" // the turn-search agents
)

// GameRow is one game as `canopy games --json` lists it.
type GameRow struct {
	Name     string          `json:"name"`
	Summary  string          `json:"summary"`
	Options  []games.Option  `json:"options"`
	Default  string          `json:"default_spec"`
	Players  [2]int          `json:"players"`
	Actions  int             `json:"actions"`
	Shape    []int           `json:"observation_shape"`
	Features map[string]bool `json:"features"`
}

func features(t games.Type) map[string]bool {
	return map[string]bool{
		"simultaneous": t.Dynamics == games.Simultaneous,
		"chance":       t.Chance != games.Deterministic,
		"imperfect":    t.Information == games.ImperfectInformation,
		"multi_action": t.MultiAction,
	}
}

// Games lists the registered games with their default options.
func Games() ([]GameRow, error) {
	var rows []GameRow
	for _, r := range games.Registered() {
		g, err := games.New(r.Name)
		if err != nil {
			return nil, runtimeErrorf("game %s does not build with default options: %v", r.Name, err)
		}
		t := g.Type()
		rows = append(rows, GameRow{
			Name: r.Name, Summary: r.Summary, Options: r.Options, Default: g.Spec(),
			Players: [2]int{t.MinPlayers, t.MaxPlayers}, Actions: g.NumActions(),
			Shape: g.ObservationShape(), Features: features(t),
		})
	}
	return rows, nil
}

// AgentRow is one agent as `canopy agents --json` lists it.
type AgentRow struct {
	Name    string         `json:"name"`
	Summary string         `json:"summary"`
	Games   []string       `json:"games,omitempty"`
	Options []agent.Option `json:"options"`
}

// Agents lists the agents that can play game (every agent when game is
// empty).
func Agents(game string) ([]AgentRow, error) {
	var name string
	if game != "" {
		g, err := newGame(game)
		if err != nil {
			return nil, err
		}
		name = g.Type().Name
	}
	var rows []AgentRow
	for _, r := range agent.Registered() {
		if name != "" && len(r.Games) > 0 && !slices.Contains(r.Games, name) {
			continue
		}
		rows = append(rows, AgentRow{r.Name, r.Summary, r.Games, r.Options})
	}
	return rows, nil
}

// newGame builds a game from its spec, as a ValueError naming game_spec
// and listing the games when it fails.
func newGame(specString string) (games.Game, error) {
	if strings.TrimSpace(specString) == "" {
		return nil, valueErrorf("game_spec is empty: name a game, e.g. \"connect4\" or \"hex:size=9\" (canopy.games() lists them)")
	}
	g, err := games.New(specString)
	if err != nil {
		var names []string
		for _, r := range games.Registered() {
			names = append(names, r.Name)
		}
		return nil, valueErrorf("game_spec %q: %v (games: %s)", specString, err, strings.Join(names, ", "))
	}
	return g, nil
}

// GameInfo describes a game for Python.
type GameInfo struct {
	Spec     string          `json:"spec"`
	Players  int             `json:"players"`
	Actions  int             `json:"actions"`
	Shape    []int           `json:"observation_shape"`
	MaxLen   int             `json:"max_game_length"`
	Features map[string]bool `json:"features"`
}

func gameInfo(g games.Game) GameInfo {
	return GameInfo{Spec: g.Spec(), Players: g.NumPlayers(), Actions: g.NumActions(), Shape: g.ObservationShape(),
		MaxLen: g.MaxGameLength(), Features: features(g.Type())}
}

// sequentialGame refuses games with simultaneous moves, pointing to their
// sequential view (games.SequentialViewer) where they have one.
func sequentialGame(g games.Game, what string) error {
	if g.Type().Dynamics != games.Sequential {
		alt := ""
		if sv, ok := g.(games.SequentialViewer); ok {
			alt = fmt.Sprintf(" (use %q, its sequential view: players choose one at a time, earlier choices hidden until revealed)", sv.SequentialView().Spec())
		}
		return valueErrorf("game_spec %q has simultaneous moves; %s needs a sequential game%s", g.Spec(), what, alt)
	}
	return nil
}
