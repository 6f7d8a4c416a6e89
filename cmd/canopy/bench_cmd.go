package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"text/tabwriter"
	"time"

	"github.com/canopy-go/canopy/bench"
	"github.com/canopy-go/canopy/games"
)

// benchTargets maps "canopy bench WHAT" to its implementation. Other files
// add entries (search, nets) in their init functions.
var benchTargets = map[string]func(e *env, args []string) error{}

func init() {
	benchTargets["games"] = benchGames
	register(&command{
		Name:    "bench",
		Summary: "measure throughput: games (moves/s, playouts/s), search, networks",
		Usage:   "games|search|net [flags]   (canopy bench games --help)",
		Help: `Runs a throughput measurement with a progress line and optional pprof
profiles. Targets:
  games   random playouts/s and the cost of legal/apply/clone/hash per game
  search  nodes/s of batched MCTS (when built)
  net     network evaluations/s (when built)`,
		Setup: func(fs *flag.FlagSet) func(*env, []string) error {
			return func(e *env, args []string) error {
				if len(args) == 0 {
					return usagef("name what to measure: one of %v", benchNames())
				}
				f, ok := benchTargets[args[0]]
				if !ok {
					return usagef("unknown benchmark %q (one of %v)", args[0], benchNames())
				}
				return f(e, args[1:])
			}
		},
	})
}

func benchNames() []string {
	var out []string
	for _, n := range []string{"games", "search", "net"} {
		if _, ok := benchTargets[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// profiler starts the CPU profile and arranges the heap profile; stop
// writes them. Paths are created with their directories.
type profiler struct {
	cpu, mem string
	cpuFile  *os.File
}

func (p *profiler) flags(fs *flag.FlagSet) {
	fs.StringVar(&p.cpu, "cpuprofile", "", "write a pprof CPU profile to this file")
	fs.StringVar(&p.mem, "memprofile", "", "write a pprof heap (allocation) profile to this file")
}

// maxBenchSeconds bounds --seconds (one day).
const maxBenchSeconds = 86400

// check reports, before the measurement starts, a profile path that cannot
// be written (so a long run is not lost to a typo).
func (p *profiler) check() error {
	if p.cpu != "" {
		if err := checkOutputFile(p.cpu); err != nil {
			return fmt.Errorf("--cpuprofile: %v", err)
		}
	}
	if p.mem != "" {
		if err := checkOutputFile(p.mem); err != nil {
			return fmt.Errorf("--memprofile: %v", err)
		}
	}
	return nil
}

func (p *profiler) start() error {
	if p.cpu == "" {
		return nil
	}
	f, err := os.Create(p.cpu)
	if err != nil {
		return fmt.Errorf("--cpuprofile: %v", err)
	}
	p.cpuFile = f
	return pprof.StartCPUProfile(f)
}

func (p *profiler) stop() error {
	if p.cpuFile != nil {
		pprof.StopCPUProfile()
		if err := p.cpuFile.Close(); err != nil {
			return err
		}
	}
	if p.mem != "" {
		runtime.GC()
		f, err := os.Create(p.mem)
		if err != nil {
			return fmt.Errorf("--memprofile: %v", err)
		}
		defer f.Close()
		return pprof.Lookup("allocs").WriteTo(f, 0)
	}
	return nil
}

// parseBenchFlags parses a bench target's flags and checks what every
// target shares: no positional arguments and, when the target has one, a
// sane --seconds. help is true after --help (nothing more to do).
func parseBenchFlags(e *env, fs *flag.FlagSet, args []string) (help bool, err error) {
	if err := parseSubFlags(e, fs, args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return true, nil
		}
		return false, err
	}
	if fs.NArg() > 0 {
		return false, usagef("unexpected argument %q", fs.Arg(0))
	}
	if f := fs.Lookup("seconds"); f != nil {
		// NaN fails both tests; more than a day is surely a typo.
		if v := f.Value.(flag.Getter).Get().(float64); !(v > 0) || v > maxBenchSeconds {
			return false, usagef("--seconds %v: want a positive number of seconds up to %d", v, maxBenchSeconds)
		}
	}
	return false, nil
}

func benchGames(e *env, args []string) error {
	fs := flag.NewFlagSet("canopy bench games", flag.ContinueOnError)
	game := fs.String("game", "", "game spec (default: every registered game with default options)")
	seconds := fs.Float64("seconds", 2, "measurement time per game")
	seed := fs.Uint64("seed", 1, "random seed")
	asJSON := fs.Bool("json", false, "print as JSON")
	quiet := fs.Bool("quiet", false, "no progress line")
	var prof profiler
	prof.flags(fs)
	if help, err := parseBenchFlags(e, fs, args); help || err != nil {
		return err
	}
	if err := prof.check(); err != nil {
		return err
	}
	var specs []string
	if *game != "" {
		specs = []string{*game}
	} else {
		for _, r := range games.Registered() {
			specs = append(specs, r.Name)
		}
	}
	var gs []games.Game
	for _, sp := range specs {
		g, err := newGame(sp)
		if err != nil {
			return err
		}
		gs = append(gs, g)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := prof.start(); err != nil {
		return err
	}
	var results []bench.GameResult
	d := time.Duration(*seconds * float64(time.Second))
	for i, g := range gs {
		r := bench.Games(ctx, g, *seed, d, func(f float64) {
			if !*quiet {
				fmt.Fprintf(e.Stderr, "\rbench games: %s (%d/%d) %3.0f%%   ", g.Spec(), i+1, len(gs), 100*f)
			}
		})
		results = append(results, r)
	}
	if !*quiet {
		fmt.Fprintln(e.Stderr)
	}
	if err := prof.stop(); err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.Stdout, results)
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "game\tplayouts/s\tmoves/s\tlength\tlegal ns\tapply ns\tclone ns\thash ns\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%.0f\t%.0f\t%.1f\t%.1f\t%.1f\t%.1f\t%.1f\t\n", r.Game, r.PlayoutsSec, r.MovesSec, r.MeanLength, r.LegalNs, r.ApplyNs, r.CloneNs, r.HashNs)
	}
	fmt.Fprintf(tw, "(one goroutine, GOMAXPROCS=%d, %s)\n", runtime.GOMAXPROCS(0), runtime.GOARCH)
	return tw.Flush()
}
