package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"github.com/canopy-go/canopy/spec"
	"io"
	"strconv"
	"strings"

	"github.com/canopy-go/canopy/games/connect4"
	"github.com/canopy-go/canopy/games/connect4/solver"
)

func init() {
	register(&command{
		Name:    "solve",
		Summary: "solve Connect Four positions exactly (score or per-column analysis)",
		Usage:   "[--game connect4] [--moves M] [--analyze] [--outcome [--book FILE]] [--json]",
		Help: `Solves Connect Four positions with the perfect solver. A position is a
move sequence in Pascal Pons' notation: one digit 1..7 (columns from the
left) per move, first player first ("4453"; "" is the empty board).

With --moves, solves that position. Otherwise reads one position per line
from stdin; anything after the first blank on a line is ignored (so Pons'
"<moves> <score>" benchmark files can be piped in) and empty lines are
skipped.

Prints "<moves> <score>": the score is from the view of the player to move:
0 draw, a win scores 22 minus the number of stones the winner has played
when the game ends, a loss the negative of the opponent's win. With
--analyze, prints the moves then the score of each of the 7 columns ("-"
for a full column). --json prints one JSON object per position.

--outcome prints win, draw or loss instead of the score (a cheaper
search). Outcomes of positions with at most 8 stones come at once from
the opening book built into the binary (the outcome of every position
after 8 plies); --book FILE uses another book written by genbook (see
games/connect4/solver/genbook), --book none solves them (minutes).
Exact scores of positions with few stones take long (the empty board:
hours): for those, --outcome answers at once.`,
		Setup: func(fs *flag.FlagSet) func(*env, []string) error {
			game, moves, bookFile := new(string), new(string), new(string)
			analyze, asJSON, outcome := new(bool), new(bool), new(bool)
			spec.Table{
				gameOption(game, "connect4", "solve knows connect4 only"),
				movesOption(moves, "default: read positions from stdin, one per line"),
				spec.Bool("analyze", analyze, false, "score every column instead of the position"),
				jsonOption(asJSON, "one object per position"),
				spec.Bool("outcome", outcome, false, "print win/draw/loss instead of the exact score"),
				solver.BookOption(bookFile, "for --outcome"),
			}.Flags(fs)
			return func(e *env, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q (positions come from --moves or stdin)", args[0])
				}
				g, err := newGame(*game)
				if err != nil {
					return err
				}
				if g.Type().Name != "connect4" {
					return usagef("solve supports only --game connect4, not %q", *game)
				}
				hasMoves := false
				fs.Visit(func(f *flag.Flag) { hasMoves = hasMoves || f.Name == "moves" })
				sv := &solveRun{out: bufio.NewWriter(e.Stdout), analyze: *analyze, json: *asJSON, outcome: *outcome}
				if flagSet(fs, "book") && !*outcome {
					return usagef("--book answers --outcome queries; add --outcome")
				}
				if *outcome {
					// Loading is cheap: the book's index is only computed
					// when a position with at most solver.BookPly stones
					// needs it. A bad book file is reported here, before
					// any output, as a usage error; a damaged built-in book
					// is not the user's doing.
					if sv.book, err = solver.LoadBook(*bookFile); err != nil {
						if *bookFile == "default" || *bookFile == "" {
							return fmt.Errorf("--book %s: %w", *bookFile, err)
						}
						return usagef("--book %s: %v (give a file written by genbook, or default or none)", *bookFile, err)
					}
				}
				if hasMoves {
					p, err := connect4.ParsePosition(strings.TrimSpace(*moves))
					if err != nil {
						return usagef("--moves: %v", err)
					}
					err = sv.solve(strings.TrimSpace(*moves), p)
					return sv.finish(err)
				}
				return sv.finish(sv.lines(e.Stdin))
			}
		},
	})
}

// solveRun solves positions with one solver (its table is reused).
type solveRun struct {
	s       *solver.Solver
	book    *solver.Book // optional, for outcome
	out     *bufio.Writer
	analyze bool
	json    bool
	outcome bool
}

// outcomeWords names solver.Loss, Draw and Win.
var outcomeWords = [3]string{"loss", "draw", "win"}

// outcomeOf returns p's outcome for the player to move, from the book
// when it holds it.
func (sv *solveRun) outcomeOf(p connect4.Position) int {
	if sv.book != nil {
		if v, ok := sv.book.Outcome(p); ok {
			return v
		}
	}
	return sv.s.Outcome(p)
}

// solveOutcome prints p's outcome, or with --analyze every column's.
func (sv *solveRun) solveOutcome(moves string, p connect4.Position) error {
	if !sv.analyze {
		w := outcomeWords[sv.outcomeOf(p)+1]
		if sv.json {
			return sv.printJSON(struct {
				Moves   string `json:"moves"`
				Outcome string `json:"outcome"`
			}{moves, w})
		}
		_, err := fmt.Fprintf(sv.out, "%s %s\n", moves, w)
		return err
	}
	var cols [connect4.Width]*string // nil for a full column or a finished game
	for col := range connect4.Width {
		if p.LastMoverWon() || p.Moves() == connect4.Cells || !p.CanPlay(col) {
			continue
		}
		w := outcomeWords[2]
		if !p.IsWinningMove(col) {
			q := p
			q.Play(col)
			w = outcomeWords[1-sv.outcomeOf(q)]
		}
		cols[col] = &w
	}
	if sv.json {
		return sv.printJSON(struct {
			Moves    string    `json:"moves"`
			Outcomes []*string `json:"outcomes"`
		}{moves, cols[:]})
	}
	sv.out.WriteString(moves)
	for _, w := range cols {
		if w == nil {
			sv.out.WriteString(" -")
		} else {
			sv.out.WriteString(" " + *w)
		}
	}
	return sv.out.WriteByte('\n')
}

// finish flushes what was solved before err (results stay valid when a
// later line is bad) and returns err, else the flush's error: output that
// cannot be written (a full disk, a closed pipe) is a failure.
func (sv *solveRun) finish(err error) error {
	ferr := sv.out.Flush()
	if err != nil {
		return err
	}
	return stdoutError(ferr)
}

// maxSolveLine bounds a line of stdin: a position has at most 42 moves,
// and Pons' benchmark lines add a score; anything this long is not input.
const maxSolveLine = 64 << 10

// lines solves every position read from r.
func (sv *solveRun) lines(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), maxSolveLine)
	n := 1
	for ; sc.Scan(); n++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		p, err := connect4.ParsePosition(fields[0])
		if err != nil {
			return fmt.Errorf("stdin line %d: %v", n, err)
		}
		if err := sv.solve(fields[0], p); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("stdin line %d is longer than %d bytes (one position of at most 42 moves per line)", n, maxSolveLine)
		}
		return fmt.Errorf("reading stdin after line %d: %v", n-1, err)
	}
	return nil
}

// solve prints one position's result.
func (sv *solveRun) solve(moves string, p connect4.Position) error {
	if sv.s == nil {
		sv.s = solver.New()
	}
	if sv.outcome {
		return sv.solveOutcome(moves, p)
	}
	if !sv.analyze {
		score := sv.s.Solve(p)
		if sv.json {
			return sv.printJSON(struct {
				Moves string `json:"moves"`
				Score int    `json:"score"`
			}{moves, score})
		}
		_, err := fmt.Fprintf(sv.out, "%s %d\n", moves, score)
		return err
	}
	scores := sv.s.Analyze(p)
	if sv.json {
		js := make([]*int, len(scores)) // null for a full column
		for i := range scores {
			if scores[i] != solver.Illegal {
				js[i] = &scores[i]
			}
		}
		return sv.printJSON(struct {
			Moves  string `json:"moves"`
			Scores []*int `json:"scores"`
		}{moves, js})
	}
	sv.out.WriteString(moves)
	for _, v := range scores {
		if v == solver.Illegal {
			sv.out.WriteString(" -")
		} else {
			sv.out.WriteString(" " + strconv.Itoa(v))
		}
	}
	return sv.out.WriteByte('\n')
}

func (sv *solveRun) printJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	sv.out.Write(b)
	return sv.out.WriteByte('\n')
}
