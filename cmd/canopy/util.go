package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/internal/atomicfile"
)

// writeJSON prints v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// newGame builds the game named by --game with a usage error when missing.
func newGame(spec string) (games.Game, error) {
	if spec == "" {
		return nil, usagef("--game is required (see `canopy games` for the list)")
	}
	g, err := games.New(spec)
	if err != nil {
		return nil, usageError{err.Error()}
	}
	return g, nil
}

// splitList splits a comma-separated flag value, trimming blanks. Commas
// inside agent specs are options, so agent lists use splitAgents instead.
func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// splitAgents splits "mcts:sims=100,c=1.4,random" style lists: a comma
// starts a new agent unless the next field looks like key=value (an option
// of the previous agent). Agents may also be separated by ';' or spaces.
func splitAgents(s string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ';' || r == ' ' }) {
		for _, f := range strings.Split(part, ",") {
			f = strings.TrimSpace(f)
			if f == "" {
				continue
			}
			if len(out) > 0 && strings.Contains(f, "=") && !strings.Contains(f, ":") && strings.Contains(out[len(out)-1], ":") {
				out[len(out)-1] += "," + f
				continue
			}
			out = append(out, f)
		}
	}
	return out
}

// parsePosition builds a state from --moves: as action texts separated by
// spaces or commas applied from the initial position (each checked for
// legality; the applied actions are returned for game logs), else as the
// game's state notation (moves is then nil).
func parsePosition(g games.Game, text string) (games.State, []games.Action, error) {
	s := g.NewInitialState()
	var moves []games.Action
	var tokErr error
	for i, tok := range strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == ',' }) {
		a, err := s.ParseAction(tok)
		if err == nil {
			err = games.ApplyChecked(s, a)
		}
		if err != nil {
			tokErr = fmt.Errorf("--moves: move %d %q: %v", i+1, tok, err)
			break
		}
		moves = append(moves, a)
	}
	if tokErr == nil {
		return s, moves, nil
	}
	st, err := g.ParseState(text)
	if err != nil {
		if strings.ContainsAny(strings.TrimSpace(text), " ,") {
			return nil, nil, tokErr
		}
		return nil, nil, fmt.Errorf("--moves %q is neither a move list nor a %s position: %v", text, g.Type().Name, err)
	}
	return st, nil, nil
}

// writeFileAtomic writes data to path atomically (see internal/atomicfile).
func writeFileAtomic(path string, data []byte) error { return atomicfile.WriteFile(path, data) }

// progress prints a single self-overwriting progress line to w (stderr),
// at most every 200 ms, with an ETA.
type progress struct {
	w     io.Writer
	what  string
	total int
	start time.Time
	last  time.Time
	quiet bool
}

func newProgress(w io.Writer, what string, total int, quiet bool) *progress {
	return &progress{w: w, what: what, total: total, start: time.Now(), quiet: quiet}
}

func (p *progress) update(done int, extra string) {
	if p.quiet {
		return
	}
	now := time.Now()
	if done < p.total && now.Sub(p.last) < 200*time.Millisecond {
		return
	}
	p.last = now
	el := now.Sub(p.start)
	eta := "?"
	if done > 0 {
		eta = (time.Duration(float64(el) / float64(done) * float64(p.total-done))).Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "\r%s %d/%d (%.0f%%) elapsed %s ETA %s %s   ", p.what, done, p.total,
		100*float64(done)/float64(max(p.total, 1)), el.Round(time.Second), eta, extra)
	if done >= p.total {
		fmt.Fprintln(p.w)
	}
}
