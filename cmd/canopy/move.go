package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/search" // registers the mcts agent
	"github.com/canopy-go/canopy/spec"
)

func init() {
	register(&command{
		Name:    "move",
		Summary: "ask an agent for its move in a position (with --analyze: its statistics per action)",
		Usage:   "--game G --agent SPEC [--moves M] [--player P] [--seed S] [--analyze] [--json]",
		Help: `Builds the position from --moves (a move list from the start, or the game's
state notation; empty = initial position) and prints the action the agent
chooses. With --analyze it prints the agent's statistics per action
(visits, Q from the mover's view, prior), for agents that can explain
themselves (mcts does), and for az and policy with a per-player value
head (games of 3+ players) every player's value of the position by seat.
Chance events before the first decision (dealing cards) are sampled with
--seed. --player picks whose choice is asked for at simultaneous-move
positions (default 0).
Example:
  canopy move --game connect4 --agent mcts:sims=20000 --moves 4453 --analyze`,
		Setup: func(fs *flag.FlagSet) func(*env, []string) error {
			game, agentSpec, moves, netBackend := new(string), new(string), new(string), new(string)
			player, seed, analyze, asJSON := new(int), new(uint64), new(bool), new(bool)
			spec.Table{
				gameOption(game, "", ""),
				spec.String("agent", agentSpec, "", "agent spec, e.g. mcts:sims=2000 (see canopy agents)"),
				movesOption(moves, "default: the initial position"),
				playerOption(player, ""),
				seedOption(seed, ""),
				backendOption(netBackend, agentBackendNote),
				spec.Bool("analyze", analyze, false, "print visits, Q and prior per action"),
				jsonOption(asJSON, ""),
			}.Flags(fs)
			return func(e *env, args []string) error {
				aenv, err := agentEnv(*netBackend, e.Stderr)
				if err != nil {
					return err
				}
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				g, err := newGame(*game)
				if err != nil {
					return err
				}
				if *player == -1 && flagSet(fs, "player") {
					return usagef("--player %d: players are numbered from 0", *player)
				}
				if *agentSpec == "" {
					return usagef("--agent is required, e.g. --agent mcts:sims=2000 (see `canopy agents`)")
				}
				s := g.NewInitialState()
				if *moves != "" {
					if s, _, err = parsePosition(g, *moves); err != nil {
						return usageError{err.Error()}
					}
				}
				// Chance events before the first decision (the deal) are
				// sampled with --seed, as net eval does.
				dealt, err := sampleChance(s, g, *seed)
				if err != nil {
					return err
				}
				if len(dealt) > 0 && !*asJSON {
					fmt.Fprintf(e.Stderr, "sampled %d chance events with --seed %d: %s\n", len(dealt), *seed, strings.Join(dealt, " "))
				}
				if s.IsTerminal() {
					return fmt.Errorf("position %q: the game is over; give a position with a move to play", s.String())
				}
				p := s.CurrentPlayer()
				switch {
				case p == games.SimultaneousPlayer:
					p = max(*player, 0)
					if p >= g.NumPlayers() {
						return usagef("--player %d: the game has players 0..%d", p, g.NumPlayers()-1)
					}
				case p == games.ChancePlayer:
					return fmt.Errorf("position %q: a chance event is next, not a player's move", s.String())
				case *player >= 0 && *player != p:
					return usagef("--player %d: player %d is to move", *player, p)
				}
				if err := checkAgentMemory(g, []string{*agentSpec}, 1); err != nil {
					return err
				}
				ag, err := agent.New(g, *agentSpec, aenv.WithSeed(*seed))
				if err != nil {
					return usageError{err.Error()}
				}
				ctx := context.Background()
				var rows []agent.Analysis
				var value *float64  // the position's value (agent.Evaluator)
				var seats []float64 // every player's value of it (agent.SeatValuer)
				if *analyze {
					an, ok := ag.(agent.Analyzer)
					if !ok {
						return usagef("agent %q cannot --analyze (try mcts)", *agentSpec)
					}
					if rows, err = an.Analyze(ctx, s, p); err != nil {
						return err
					}
					if sv, ok := ag.(agent.SeatValuer); ok {
						seats = slices.Clone(sv.SeatValues()) // the same search as rows
					}
					if ev, ok := ag.(agent.Evaluator); ok {
						v, err := ev.Evaluate(ctx, s, p)
						if err != nil {
							return err
						}
						value = &v
					}
				}
				act, err := ag.Act(ctx, s, p)
				if err != nil {
					return err
				}
				if *asJSON {
					type row struct {
						Action string   `json:"action"`
						ID     int      `json:"id"`
						Visits int      `json:"visits"`
						Q      *float64 `json:"q"` // null: no value per action (see value)
						Prior  float64  `json:"prior"`
					}
					out := struct {
						Game     string    `json:"game"`
						Position string    `json:"position"`
						Player   int       `json:"player"`
						Move     string    `json:"move"`
						ID       int       `json:"id"`
						Value    *float64  `json:"value,omitempty"`  // the position's, for player
						Values   []float64 `json:"values,omitempty"` // every player's, by seat
						Chance   []string  `json:"chance,omitempty"` // events sampled before it (--seed)
						Analysis []row     `json:"analysis,omitempty"`
					}{g.Spec(), s.String(), p, s.ActionString(act), int(act), value, seats, dealt, nil}
					for _, r := range rows {
						var q *float64
						if !math.IsNaN(r.Q) {
							q = &r.Q
						}
						out.Analysis = append(out.Analysis, row{s.ActionString(r.Action), int(r.Action), r.Visits, q, r.Prior})
					}
					return writeJSON(e.Stdout, out)
				}
				if *analyze {
					if value != nil {
						fmt.Fprintf(e.Stdout, "value of the position for player %d: %.3f\n", p, *value)
					}
					if seats != nil {
						fmt.Fprint(e.Stdout, "values of the position by seat (the search's):")
						for q, v := range seats {
							fmt.Fprintf(e.Stdout, "  %d %.3f", q, v)
						}
						fmt.Fprintln(e.Stdout)
					}
					fmt.Fprintf(e.Stdout, "%-8s %8s %8s %8s\n", "action", "visits", "q", "prior")
					for _, r := range rows {
						q := "-" // no value per action
						if !math.IsNaN(r.Q) {
							q = fmt.Sprintf("%.3f", r.Q)
						}
						fmt.Fprintf(e.Stdout, "%-8s %8d %8s %8.3f\n", s.ActionString(r.Action), r.Visits, q, r.Prior)
					}
					if value != nil {
						fmt.Fprintln(e.Stdout, "(q: the agent values positions, not moves: see the value above)")
					}
				}
				fmt.Fprintln(e.Stdout, s.ActionString(act))
				return nil
			}
		},
	})
}
