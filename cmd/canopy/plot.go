package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot/vg"

	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/internal/runlock"
	"github.com/canopy-go/canopy/plots"
	"github.com/canopy-go/canopy/spec"
)

func init() {
	register(&command{
		Name:    "plot",
		Summary: "charts (SVG, PNG) of a run directory, game logs or an arena result",
		Usage:   "run DIR | logs FILE... | arena FILE...  [--out D] [--game G] [--by agent|seat] [--format svg,png] [--width IN] [--height IN] [--dpi N]",
		Help: `Draws Canopy's charts as files, for headless use (the same charts as the
web UI's dashboards). Flags may come before or after the arguments.

  canopy plot run DIR
      A run directory of canopy zero (zero.json): training loss terms per
      iteration (loss), rolling Elo with 95% intervals (elo), the score
      against each baseline with search and, where measured
      (--eval-policy-games), without (scores) and, for connect4, the
      share of optimal moves on the solver set with and without search
      (solver). Of canopy ppo (ppo.json): loss terms per
      update (loss) and the win rate against the opponent with 95% Wilson
      intervals (winrate). Written to DIR/plots unless --out says
      otherwise; writing into DIR takes the run's lock, so it fails while
      the run is in progress (use --out elsewhere then).
  canopy plot logs FILE...
      JSON game logs (canopy play --log; one or more logs per file, e.g.
      JSON lines), each checked by replaying it: the game-length histogram
      per winner (lengths), and for Sequence study 000's chip-placement
      heatmap, one panel per agent (heatmap). Logs of several games need
      --game to choose one. --by seat groups by seat instead of agent.
  canopy plot arena FILE...
      Results of canopy arena --json: each pairing's wins, draws and losses
      with the score's 95% Wilson interval (NAME-pairs) and the Elo ratings
      with their intervals (NAME-ratings), NAME being the file's name
      without .json.

Every chart has its own size (most are 7 x 4 inches); --width and --height
(inches) draw every chart at another, titles rewrapped and legends moved to
fit, and --dpi sets the PNG resolution (default 96: 7 inches = 672 pixels).
Every file is written atomically; the paths written are printed. Errors
name the file and line of bad input.

Examples:
  canopy plot run runs/zero-c4
  canopy plot run runs/ppo-ttt --out /tmp/ppo-plots --format png
  canopy plot run runs/zero-c4 --out /tmp/big --width 12 --height 5 --dpi 150
  canopy play --game sequence --players random,sequence-greedy --log g1.json
  canopy plot logs --game sequence g1.json g2.json --out seq-plots
  canopy arena --game connect4 --agents random,onestep,solver --json > c4.json
  canopy plot arena c4.json --out c4-plots`,
		Setup: func(fs *flag.FlagSet) func(*env, []string) error {
			out, game, by, format := new(string), new(string), new(string), new(string)
			width, height, dpi := new(float64), new(float64), new(int)
			spec.Table{
				spec.String("out", out, "", "output directory (default: DIR/plots for run, ./plots otherwise)"),
				gameOption(game, "", "logs: plot only the logs of this game"),
				spec.Choice("by", by, "agent", []string{"agent", "seat"}, "logs: group by agent or seat"),
				spec.String("format", format, "svg,png", "formats to write, separated by commas: svg, png"),
				spec.Float("width", width, 0, 0, 40, "chart width in inches, 1 to 40 (0: each chart's own)"),
				spec.Float("height", height, 0, 0, 40, "chart height in inches, 1 to 40 (0: each chart's own)"),
				spec.Int("dpi", dpi, 0, 0, 600, "PNG resolution in pixels per inch, 24 to 600 (0: 96)"),
			}.Flags(fs)
			return func(e *env, args []string) error {
				args, err := interspersed(fs, args)
				if errors.Is(err, flag.ErrHelp) {
					// --help after the kind (plot run --help): the
					// command's help, as plot --help prints it.
					fs.SetOutput(e.Stdout)
					fs.Usage()
					return nil
				}
				if err != nil {
					return usageError{err.Error()}
				}
				if len(args) == 0 {
					return usagef("say what to plot: run DIR, logs FILE... or arena FILE...")
				}
				formats, err := plotFormats(*format)
				if err != nil {
					return err
				}
				size, err := plotSize(*width, *height, *dpi)
				if err != nil {
					return err
				}
				kind, inputs := args[0], args[1:]
				kinds := []string{"run", "logs", "arena"}
				if !slices.Contains(kinds, kind) {
					return usagef("unknown kind %q%s: want run, logs or arena", kind, spec.Suggest(kind, kinds))
				}
				if len(inputs) == 0 {
					return usagef("%s: name at least one input", kind)
				}
				var figs []*plots.Figure
				dir := *out
				switch kind {
				case "run":
					if len(inputs) != 1 {
						return usagef("run: one run directory at a time (got %d)", len(inputs))
					}
					if figs, err = runFigures(inputs[0]); err != nil {
						return err
					}
					if dir == "" {
						dir = filepath.Join(inputs[0], "plots")
					}
					if inside(dir, inputs[0]) {
						lock, err := runlock.Acquire(inputs[0])
						if err != nil {
							return fmt.Errorf("%v (or write the plots elsewhere with --out)", err)
						}
						defer lock.Release()
					}
				case "logs":
					grouping, err := plots.ParseGrouping(*by)
					if err != nil {
						return usagef("--by: %v", err)
					}
					if figs, err = logFigures(inputs, *game, grouping); err != nil {
						return err
					}
				case "arena":
					for _, in := range inputs {
						data, err := readInput(in)
						if err != nil {
							return err
						}
						res, err := plots.ParseArena(data, in)
						if err != nil {
							return err
						}
						base := strings.TrimSuffix(filepath.Base(in), ".json")
						for _, f := range plots.ArenaFigures(res) {
							named := *f
							named.Name = base + "-" + f.Name
							figs = append(figs, &named)
						}
					}
				}
				if dir == "" {
					dir = "plots"
				}
				if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
					return fmt.Errorf("--out %s is a file, not a directory", dir)
				}
				for i, f := range figs {
					figs[i] = f.Resized(size)
				}
				paths, err := plots.WriteFiles(dir, figs, formats...)
				for _, p := range paths {
					fmt.Fprintln(e.Stdout, p)
				}
				return err
			}
		},
	})
}

// interspersed parses fs's flags wherever they stand among args (the
// flag package stops at the first argument) and returns the arguments.
// "--" ends the flags.
func interspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for len(args) > 0 {
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		if strings.HasPrefix(args[0], "-") && args[0] != "-" {
			fs.SetOutput(io.Discard)
			if err := fs.Parse(args); err != nil {
				return nil, explainFlagError(fs, err, io.Discard)
			}
			args = fs.Args()
			continue
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
	return pos, nil
}

// plotFormats parses --format.
func plotFormats(s string) ([]string, error) {
	var out []string
	for _, f := range strings.Split(s, ",") {
		f = strings.ToLower(strings.TrimSpace(f))
		if f != "svg" && f != "png" {
			return nil, usagef("--format %q: want svg, png or both separated by a comma", s)
		}
		out = append(out, f)
	}
	return out, nil
}

// plotSize checks --width, --height (inches) and --dpi: 0 keeps each
// chart's own; charts from 1 to 40 inches at 24 to 600 dpi.
func plotSize(w, h float64, dpi int) (plots.Size, error) {
	for _, x := range []struct {
		name string
		v    float64
	}{{"--width", w}, {"--height", h}} {
		if x.v != 0 && !(x.v >= 1 && x.v <= 40) {
			return plots.Size{}, usagef("%s %v: want inches from 1 to 40 (0: each chart's own size)", x.name, x.v)
		}
	}
	if dpi != 0 && (dpi < 24 || dpi > 600) {
		return plots.Size{}, usagef("--dpi %d: want 24 to 600 pixels per inch", dpi)
	}
	if w*float64(max(dpi, plots.DefaultDPI)) > 20000 || h*float64(max(dpi, plots.DefaultDPI)) > 20000 {
		return plots.Size{}, usagef("--width %v, --height %v at %d dpi: over 20000 pixels a side", w, h, dpi)
	}
	return plots.Size{Width: vg.Length(w) * vg.Inch, Height: vg.Length(h) * vg.Inch, DPI: dpi}, nil
}

// inside reports whether path is dir or below it.
func inside(path, dir string) bool {
	p, err1 := filepath.Abs(path)
	d, err2 := filepath.Abs(dir)
	if err1 != nil || err2 != nil {
		return true // lock, to be safe
	}
	rel, err := filepath.Rel(d, p)
	return err == nil && filepath.IsLocal(rel)
}

// readInput reads an input file of at most plots.MaxInputBytes.
func readInput(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, inputUsage(fmt.Errorf("cannot read %s: %w", path, unwrapPathErr(err)))
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("%s is a directory; name the files in it", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, plots.MaxInputBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", path, unwrapPathErr(err))
	}
	if len(data) > plots.MaxInputBytes {
		return nil, fmt.Errorf("%s is over %d bytes; split it", path, plots.MaxInputBytes)
	}
	return data, nil
}

func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// runFigures reads a run directory's charts.
func runFigures(dir string) ([]*plots.Figure, error) {
	if fi, err := os.Stat(dir); err != nil {
		return nil, inputUsage(fmt.Errorf("cannot read the run directory %s: %w", dir, unwrapPathErr(err)))
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory: plot run wants a run directory of canopy zero or canopy ppo", dir)
	}
	r, err := plots.ReadRun(os.DirFS(dir), dir)
	if err != nil {
		return nil, err
	}
	figs := r.Figures()
	if len(figs) == 0 {
		return nil, fmt.Errorf("%s: no metrics yet (%s has no records): nothing to plot", dir, plots.MetricsFile)
	}
	return figs, nil
}

// logFigures reads game logs and draws their lengths (and, for Sequence,
// placements). With game set, logs of other games are skipped.
func logFigures(files []string, game string, by plots.Grouping) ([]*plots.Figure, error) {
	want := ""
	if game != "" {
		g, err := games.New(game)
		if err != nil {
			return nil, usagef("--game: %v", err)
		}
		want = g.Spec()
	}
	var logs []*arena.Log
	seen := map[string]bool{}
	for _, f := range files {
		data, err := readInput(f)
		if err != nil {
			return nil, err
		}
		ls, err := plots.ParseLogs(data, f)
		if err != nil {
			return nil, err
		}
		for _, l := range ls {
			g, _ := games.New(l.Game) // ParseLogs replayed it: cannot fail
			seen[g.Spec()] = true
			if want == "" || g.Spec() == want {
				logs = append(logs, l)
			}
		}
	}
	if len(logs) == 0 {
		return nil, fmt.Errorf("no logs of %s in the files (they hold %s)", want, strings.Join(slices.Sorted(maps.Keys(seen)), "; "))
	}
	if want == "" {
		if len(seen) > 1 {
			return nil, usagef("the logs are of several games (%s): choose one with --game", strings.Join(slices.Sorted(maps.Keys(seen)), "; "))
		}
		want = logs[0].Game
	}
	figs := []*plots.Figure{plots.LengthFigure(want, plots.GameLengths(logs, by))}
	if name, _, _ := strings.Cut(want, ":"); name == "sequence" {
		pl, err := plots.SequencePlacements(logs, by)
		if err != nil {
			return nil, err
		}
		figs = append(figs, plots.PlacementFigure(want, pl))
	}
	return figs, nil
}
