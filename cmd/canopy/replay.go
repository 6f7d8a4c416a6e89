package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"github.com/canopy-go/canopy/spec"
	"strings"

	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/internal/readfile"
)

func init() {
	register(&command{
		Name:    "replay",
		Summary: "replay moves or a game log and show the resulting position",
		Usage:   "(--game G --moves M | --log FILE) [--write-log FILE] [--json]",
		Help: `Replays a position and prints the board, whose turn it is, the legal
actions and the returns. The position comes from --moves (the game's state
notation, e.g. "4453" for connect4, or action texts separated by spaces) or
from a JSON game log written by "canopy play --log" (every move and recorded
score is checked while replaying; logs of more than 64 MiB are refused: a
game log takes a few kB).`,
		Setup: func(fs *flag.FlagSet) func(*env, []string) error {
			game, moves, logPath, writeLog := new(string), new(string), new(string), new(string)
			asJSON := new(bool)
			spec.Table{
				gameOption(game, "", "with --moves"),
				movesOption(moves, "or give --log"),
				spec.File("log", logPath, "", "JSON game log to read"),
				spec.String("write-log", writeLog, "", "write the replayed game as a JSON game log"),
				jsonOption(asJSON, ""),
			}.Flags(fs)
			return func(e *env, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				var (
					s   games.State
					log *arena.Log
				)
				switch {
				case *logPath != "" && (*moves != "" || *game != ""):
					return usagef("give either --log or --game with --moves, not both")
				case *logPath != "":
					buf, err := readCapped(*logPath, maxLogBytes)
					if err != nil {
						return inputUsage(fmt.Errorf("--log: %w", err))
					}
					log, s, err = arena.ReadLog(bytes.NewReader(buf))
					if err != nil {
						return fmt.Errorf("%s: %v", *logPath, err)
					}
				default:
					g, err := newGame(*game)
					if err != nil {
						return err
					}
					var played []games.Action
					s, played, err = parsePosition(g, *moves)
					if err != nil {
						return err
					}
					if played != nil {
						if log, err = arena.LogFromRecord(g, &arena.Record{Actions: played}, 0); err != nil {
							return err
						}
					}
				}
				if *writeLog != "" {
					if err := checkOutputFile(*writeLog); err != nil {
						return fmt.Errorf("--write-log: %v", err)
					}
					if log == nil {
						return usagef("--write-log needs the moves as a list of actions separated by spaces (e.g. \"4 4 5 3\"), not a position notation")
					}
					if s.IsTerminal() {
						log.Returns = make([]float64, s.Game().NumPlayers())
						s.Returns(log.Returns)
					}
					var sb strings.Builder
					if err := arena.WriteLog(&sb, log); err != nil {
						return err
					}
					if err := writeFileAtomic(*writeLog, []byte(sb.String())); err != nil {
						return fmt.Errorf("--write-log: %v", err)
					}
				}
				var players []string
				if log != nil {
					players = log.Players
				}
				res := resultOf(s, players)
				m := games.NewMask(s.Game().NumActions())
				s.Legal(m)
				legal := strings.Fields(games.FormatActions(s, m))
				if *asJSON {
					return writeJSON(e.Stdout, struct {
						gameResult
						State string   `json:"state"`
						Legal []string `json:"legal"`
						Move  int      `json:"move_number"`
					}{res, s.String(), legal, s.MoveNumber()})
				}
				fmt.Fprintln(e.Stdout, drawState(s, -1))
				switch p := s.CurrentPlayer(); {
				case s.IsTerminal():
					fmt.Fprintln(e.Stdout, "game over:", res.Summary)
				case p == games.ChancePlayer:
					fmt.Fprintln(e.Stdout, "to move: chance")
				case p == games.SimultaneousPlayer:
					fmt.Fprintln(e.Stdout, "to move: all players at once")
				default:
					fmt.Fprintf(e.Stdout, "to move: player %d\n", p)
				}
				if len(legal) > 0 {
					fmt.Fprintf(e.Stdout, "legal (%d): %s\n", len(legal), strings.Join(legal, " "))
				}
				if !s.IsTerminal() {
					fmt.Fprintf(e.Stdout, "returns so far: %v\n", res.Returns)
				}
				return nil
			}
		},
	})
}

// maxLogBytes bounds a game log read by replay (64 MiB): the longest games
// log a few hundred kB, so more is the wrong file (or a stream without end,
// such as --log /dev/stdin fed by a runaway program).
const maxLogBytes = 64 << 20

// readCapped reads the file at path (any file: a pipe or /dev/stdin too)
// and fails, naming the limit, when it holds more than limit bytes.
func readCapped(path string, limit int64) ([]byte, error) {
	buf, err := readfile.Capped(path, limit)
	if errors.Is(err, readfile.ErrTooLarge) {
		return nil, fmt.Errorf("%v: not a game log (logs take a few kB)", err)
	}
	return buf, err
}
