package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"github.com/canopy-go/canopy/spec"
	"io"
	"os"
	"strings"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/games"
)

func init() {
	register(&command{
		Name:    "play",
		Summary: "play a game between agents or against a human in the terminal",
		Usage:   "--game G --agents A,B[,...] [--seed S] [--log FILE] [--json]",
		Help: `Plays one game. Each seat is an agent spec (see ` + "`canopy agents`" + `) or "human",
who types moves on standard input (illegal input is asked again with the
reason; "help" lists the legal moves, "quit" ends the game). The board is
drawn after every move; a human sees only what that player may see.

Example:
  canopy play --game connect4 --agents human,solver
  canopy play --game hex:size=7 --agents random,onestep --seed 3`,
		Setup: func(fs *flag.FlagSet) func(*env, []string) error {
			game, agents, netBackend, logPath := new(string), new(string), new(string), new(string)
			seed, asJSON := new(uint64), new(bool)
			spec.Table{
				gameOption(game, "", ""),
				agentsOption(agents, "", "one per seat; \"human\" for a person"),
				seedOption(seed, "agents and chance"),
				backendOption(netBackend, agentBackendNote),
				spec.String("log", logPath, "", "write the JSON game log to this file"),
				jsonOption(asJSON, "the result, instead of boards"),
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
				specs := splitAgents(*agents)
				if len(specs) != g.NumPlayers() {
					return usagef("--agents: %s has %d players, got %d agent(s) %q", g.Spec(), g.NumPlayers(), len(specs), *agents)
				}
				if *logPath != "" {
					if err := checkOutputFile(*logPath); err != nil {
						return fmt.Errorf("--log: %v", err)
					}
				}
				if err := checkAgentMemory(g, specs, 1); err != nil {
					return err
				}
				in := bufio.NewScanner(e.Stdin)
				ags := make([]agent.Agent, len(specs))
				humans := 0
				for p, sp := range specs {
					if sp == "human" {
						ags[p] = &human{in: in, out: e.Stdout, player: p}
						humans++
						continue
					}
					a, err := agent.New(g, sp, aenv.WithSeed(arena.DeriveSeed(*seed, uint64(p))))
					if err != nil {
						return usagef("--agents: seat %d: %v", p, err)
					}
					ags[p] = a
				}
				// Draw for the single human if there is one, else omniscient.
				viewer := -1
				if humans == 1 {
					for p, sp := range specs {
						if sp == "human" {
							viewer = p
						}
					}
				}
				s := g.NewInitialState()
				show := func(s games.State) {
					if *asJSON {
						return
					}
					fmt.Fprintln(e.Stdout, drawState(s, viewer))
				}
				show(s)
				onMove := func(s games.State, player int, text string) {
					if *asJSON {
						return
					}
					who := "chance"
					if player >= 0 {
						who = fmt.Sprintf("player %d (%s)", player, specs[player])
					}
					if text != "" {
						fmt.Fprintf(e.Stdout, "%s plays %s\n", who, text)
					}
					show(s)
				}
				rec, err := arena.PlayFrom(context.Background(), s, ags, specs, arena.DeriveSeed(*seed, 1<<32), onMove)
				if err != nil {
					if errors.Is(err, errQuit) {
						fmt.Fprintln(e.Stdout, "game abandoned")
						return nil
					}
					return err
				}
				if *logPath != "" {
					l, err := arena.LogFromRecord(g, rec, *seed)
					if err != nil {
						return err
					}
					var sb strings.Builder
					if err := arena.WriteLog(&sb, l); err != nil {
						return err
					}
					if err := writeFileAtomic(*logPath, []byte(sb.String())); err != nil {
						return fmt.Errorf("--log: %v", err)
					}
				}
				res := resultOf(rec.Final, specs)
				if *asJSON {
					res.Moves = rec.Text
					return writeJSON(e.Stdout, res)
				}
				fmt.Fprintln(e.Stdout, res.Summary)
				return nil
			}
		},
	})
}

// drawState renders s for viewer (-1 = everything) through games.Drawer, or
// falls back to the notation.
func drawState(s games.State, viewer int) string {
	if d, ok := s.(games.Drawer); ok {
		return d.Draw(viewer)
	}
	return s.String()
}

type gameResult struct {
	Game     string    `json:"game"`
	Agents   []string  `json:"agents"`
	Terminal bool      `json:"terminal"`
	ToMove   int       `json:"to_move"`
	Returns  []float64 `json:"returns"`
	Scores   []float64 `json:"scores,omitempty"`
	Winner   int       `json:"winner"` // -1 for a draw or an unfinished game
	Summary  string    `json:"summary"`
	Moves    []string  `json:"moves,omitempty"`
}

func resultOf(s games.State, specs []string) gameResult {
	g := s.Game()
	r := gameResult{Game: g.Spec(), Agents: specs, Terminal: s.IsTerminal(), ToMove: s.CurrentPlayer(), Winner: -1}
	r.Returns = make([]float64, g.NumPlayers())
	s.Returns(r.Returns)
	if sc, ok := s.(games.Scorer); ok {
		r.Scores = make([]float64, g.NumPlayers())
		sc.Scores(r.Scores)
	}
	if !r.Terminal {
		r.Summary = "game not over"
		return r
	}
	best, n := r.Returns[0], 0
	for p, v := range r.Returns {
		if v > best {
			best, n, r.Winner = v, 1, p
		} else if v == best {
			n++
			if n == 1 {
				r.Winner = p
			}
		}
	}
	if n != 1 {
		r.Winner = -1
		r.Summary = fmt.Sprintf("draw; returns %v", r.Returns)
	} else {
		name := ""
		if specs != nil {
			name = " (" + specs[r.Winner] + ")"
		}
		r.Summary = fmt.Sprintf("player %d%s wins; returns %v", r.Winner, name, r.Returns)
	}
	if r.Scores != nil {
		r.Summary += fmt.Sprintf("; scores %v", r.Scores)
	}
	return r
}

var errQuit = errors.New("quit")

// human is an agent that asks a person on the terminal.
type human struct {
	in     *bufio.Scanner
	out    io.Writer
	player int
}

func (h *human) Act(_ context.Context, s games.State, player int) (games.Action, error) {
	m := games.NewMask(s.Game().NumActions())
	if ss, ok := s.(games.SimultaneousState); ok && s.CurrentPlayer() == games.SimultaneousPlayer {
		ss.LegalFor(player, m)
		fmt.Fprintln(h.out, drawState(s, player))
	} else {
		s.Legal(m)
	}
	for {
		fmt.Fprintf(h.out, "player %d, your move (help for the legal moves): ", player)
		if !h.in.Scan() {
			if err := h.in.Err(); err != nil {
				return games.NoAction, err
			}
			return games.NoAction, fmt.Errorf("input ended before the game did")
		}
		line := strings.TrimSpace(h.in.Text())
		switch line {
		case "":
			continue
		case "quit", "exit":
			return games.NoAction, errQuit
		case "help", "?":
			fmt.Fprintf(h.out, "legal: %s\n", games.FormatActions(s, m))
			continue
		}
		a, err := s.ParseAction(line)
		if err != nil {
			fmt.Fprintf(h.out, "not a move: %v\n", err)
			continue
		}
		if !m.Has(a) {
			fmt.Fprintf(h.out, "%s is not legal here; legal: %s\n", line, games.FormatActions(s, m))
			continue
		}
		return a, nil
	}
}

var _ = os.Stdin
