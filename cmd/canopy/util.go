package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/internal/atomicfile"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/spec"
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

// flagSet reports whether the flag name was given on the command line,
// under its name or a deprecated spelling (aliasFlag).
func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		to, _ := aliasOf(f)
		set = set || f.Name == name || to == name
	})
	return set
}

// netUsage returns err, from opening the network a flag or an agent
// option names, as a usage error (exit 2) when the reference names no
// network (no such file, not a shipped name), a network of another game,
// or an ONNX model where a Canopy network file is needed: the command
// line is wrong, not the run. Other errors (a damaged file,
// a full disk) stay as they are.
func netUsage(err error) error {
	var ue usageError
	if err == nil || errors.As(err, &ue) {
		return err
	}
	if errors.Is(err, nets.ErrUnknownNet) || errors.Is(err, nets.ErrWrongGame) || errors.Is(err, nets.ErrONNXFile) || errors.Is(err, fs.ErrNotExist) {
		return usageError{err.Error()}
	}
	return err
}

// inputUsage returns err, from reading an input file or directory the
// command line names, as a usage error (exit 2) when it does not exist:
// the command line is wrong, not the run. Other errors (a damaged file, a
// permission) stay as they are.
func inputUsage(err error) error {
	var ue usageError
	if err == nil || errors.As(err, &ue) {
		return err
	}
	if errors.Is(err, fs.ErrNotExist) {
		return usageError{err.Error()}
	}
	return err
}

// aliasUsage starts the usage of a deprecated flag spelling; the name of
// the flag it sets follows.
const aliasUsage = "deprecated spelling of --"

// aliasFlag declares old as a deprecated spelling of fs's flag name
// (declared before): it sets the same value, and parseFlags prints one
// line naming the new flag when it is used. Old spellings keep the
// commands of docs/RESULTS.md and earlier scripts running after a flag is
// renamed (issue 39: one name, one meaning).
func aliasFlag(fs *flag.FlagSet, old, name string) {
	fs.Var(fs.Lookup(name).Value, old, aliasUsage+name)
}

// negAliasFlag declares old as a deprecated spelling of boolean flag
// name with the opposite polarity: --old sets --name=false (self-play's
// --noreuse is --reuse=false).
func negAliasFlag(fs *flag.FlagSet, old, name string) {
	fs.Var(notValue{fs.Lookup(name).Value}, old, aliasUsage+name+"=false")
}

// notValue is a boolean flag.Value that stores the negation into v.
type notValue struct{ v flag.Value }

func (n notValue) IsBoolFlag() bool { return true }
func (n notValue) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	return n.v.Set(strconv.FormatBool(!b))
}
func (n notValue) String() string {
	if n.v == nil {
		return "false"
	}
	b, _ := strconv.ParseBool(n.v.String())
	return strconv.FormatBool(!b)
}

// aliasOf returns the flag f is a deprecated spelling of (aliasFlag,
// negAliasFlag).
func aliasOf(f *flag.Flag) (string, bool) {
	to, ok := strings.CutPrefix(f.Usage, aliasUsage)
	to, _, _ = strings.Cut(to, "=")
	return to, ok
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
func splitAgents(s string) []string { return spec.SplitSpecs(s) }

// parsePosition builds a state from --moves: as action texts separated by
// spaces or commas applied from the initial position (each checked for
// legality; the applied actions are returned for game logs), else as the
// game's state notation (moves is then nil). Errors are usage errors: the
// --moves flag was given a bad value.
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
			tokErr = usagef("--moves: move %d %q: %v", i+1, clip(tok), err)
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
		return nil, nil, usagef("--moves %q is neither a move list nor a %s position: %v", clip(text), g.Type().Name, err)
	}
	return st, nil, nil
}

// writeFileAtomic writes data to path atomically (see internal/atomicfile).
// Errors name path (never the temporary file) and say how to fix them.
func writeFileAtomic(path string, data []byte) error {
	if err := checkOutputFile(path); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, data); err != nil {
		return fmt.Errorf("cannot write %s: %v", path, unwrapPath(err))
	}
	return nil
}

// checkOutputFile reports, before any work is done, why path cannot be
// written as a file: its directory is missing or not a directory, or path
// itself is a directory. Commands call it up front so that a long run does
// not end by losing its result to a typo in an output path.
func checkOutputFile(path string) error {
	if path == "" {
		return fmt.Errorf("empty output file name")
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory; give a file name", path)
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	switch {
	case err != nil && errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("cannot write %s: directory %s does not exist (create it first)", path, dir)
	case err != nil:
		return fmt.Errorf("cannot write %s: %v", path, unwrapPath(err))
	case !fi.IsDir():
		return fmt.Errorf("cannot write %s: %s is not a directory", path, dir)
	}
	return nil
}

// unwrapPath drops the operation and path of an *fs.PathError (the caller
// names the path itself), keeping the reason.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// clip shortens s for an error message.
func clip(s string) string {
	const n = 60
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

// parseSubFlags parses the flags of a sub-subcommand ("canopy net init",
// "canopy bench games") like the top level does: the flag package prints
// nothing but the usage for -h/--help (returning flag.ErrHelp); any other
// problem comes back as a one-line usage error.
func parseSubFlags(e *env, fs *flag.FlagSet, args []string) error {
	if err := parseFlags(fs, args, e.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err.Error()}
	}
	return nil
}

// progress prints a single self-overwriting progress line to w (stderr),
// at most every 200 ms, with an ETA.
type progress struct {
	w     io.Writer
	what  string
	total int
	// before is the count done by an earlier run that this one resumes:
	// it counts in the progress but not in the rate behind the ETA.
	before int
	start  time.Time
	last   time.Time
	quiet  bool
	// term: w is a terminal, where the line is rewritten in place;
	// elsewhere (a log file, a pipe) whole lines are written, at most
	// every plainEvery and at each tenth of the total.
	term    bool
	lastPct int
}

// plainEvery is how often progress and status lines are written to a
// writer that is not a terminal.
const plainEvery = 30 * time.Second

// isTerminal reports whether w is a character device (a terminal), where
// a line may be redrawn with \r and erased with ESC [K.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func newProgress(w io.Writer, what string, total int, quiet bool) *progress {
	return &progress{w: w, what: what, total: total, start: time.Now(), quiet: quiet, term: isTerminal(w), lastPct: -10}
}

func (p *progress) update(done int, extra string) {
	if p.quiet {
		return
	}
	now := time.Now()
	if done < p.total && now.Sub(p.last) < 200*time.Millisecond {
		return
	}
	pct := 100 * done / max(p.total, 1)
	if !p.term && done < p.total && pct/10 == p.lastPct/10 && now.Sub(p.last) < plainEvery {
		return // plain lines: one per tenth, or every plainEvery
	}
	p.last, p.lastPct = now, pct
	el := now.Sub(p.start)
	eta := "?"
	if ran := done - p.before; ran > 0 {
		eta = (time.Duration(float64(el) / float64(ran) * float64(p.total-done))).Round(time.Second).String()
	}
	line := fmt.Sprintf("%s %d/%d (%.0f%%) elapsed %s ETA %s %s", p.what, done, p.total,
		100*float64(done)/float64(max(p.total, 1)), el.Round(time.Second), eta, extra)
	if !p.term {
		fmt.Fprintln(p.w, strings.TrimRight(line, " "))
		return
	}
	fmt.Fprintf(p.w, "\r%s   ", line)
	if done >= p.total {
		fmt.Fprintln(p.w)
	}
}

// status is a live status line on a terminal-like writer, with log lines
// printed above it.
// On a writer that is not a terminal the status is written as whole
// lines, at most every plainEvery, and never erased.
type status struct {
	mu    sync.Mutex
	w     io.Writer
	quiet bool
	term  bool
	shown bool
	last  time.Time
}

func newStatus(w io.Writer, quiet bool) *status {
	return &status{w: w, quiet: quiet, term: isTerminal(w)}
}

// set replaces the status line (at most 5 times a second on a terminal).
func (s *status) set(line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	every := 200 * time.Millisecond
	if !s.term {
		every = plainEvery
	}
	if s.quiet || time.Since(s.last) < every {
		return
	}
	s.last = time.Now()
	if !s.term {
		fmt.Fprintln(s.w, line)
		return
	}
	fmt.Fprintf(s.w, "\r\033[K%s", line)
	s.shown = true
}

// clear removes the status line.
func (s *status) clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.shown {
		fmt.Fprint(s.w, "\r\033[K")
		s.shown = false
	}
}

// lines returns a writer whose output goes above the status line.
func (s *status) lines() io.Writer { return statusLines{s} }

type statusLines struct{ s *status }

func (l statusLines) Write(p []byte) (int, error) {
	l.s.clear()
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	return l.s.w.Write(p)
}
