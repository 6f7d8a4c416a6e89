package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/canopy-go/canopy/bench"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/spec"
)

// benchTargets maps "canopy bench WHAT" to its implementation. Other files
// add entries (search, nets) in their init functions.
var benchTargets = map[string]func(e *env, args []string) error{}

func init() {
	benchTargets["games"] = benchGames
	benchTargets["net"] = benchNet
	register(&command{
		Name:    "bench",
		Summary: "measure throughput: games (moves/s, playouts/s), search, networks",
		Usage:   "games|search|net [flags]   (canopy bench games --help)",
		Help: `Runs a throughput measurement with a progress line and optional pprof
profiles. Targets:
  games   random playouts/s and the cost of legal/apply/clone/hash per game
  search  nodes/s of batched MCTS (when built)
  net     raw backend evaluations/s by batch size (canopy bench net --help)`,
		Setup: func(fs *flag.FlagSet) func(*env, []string) error {
			return func(e *env, args []string) error {
				if len(args) == 0 {
					return usagef("name what to measure: one of %v", benchNames())
				}
				f, ok := benchTargets[args[0]]
				if !ok {
					return usagef("unknown benchmark %q%s (one of %v)", args[0], spec.Suggest(args[0], benchNames()), benchNames())
				}
				return subcommandFailed(args[0], f(e, args[1:]))
			}
		},
	})
}

// benchUsage gives fs, the flags of a bench target without a help of its
// own, a --help that says what the target measures and lists its flags.
func benchUsage(fs *flag.FlagSet) {
	fs.Usage = func() {
		what := strings.TrimPrefix(fs.Name(), "canopy bench ")
		fmt.Fprintf(fs.Output(), "Usage: %s [flags]\n\n%s\n\nFlags:\n", fs.Name(), benchSummaries[what])
		printFlags(fs)
	}
}

// benchSummaries say what each target measures, for its --help.
var benchSummaries = map[string]string{
	"games":  "Measures random playouts/s and the cost of legal/apply/clone/hash of each game (one goroutine).",
	"search": "Measures nodes/s of batched MCTS self-play: --trees games searched at once, on --net through --backend;\nwrites result.json and a CPU profile to the run directory (--out).",
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

// flags registers the profile flags (options) on fs.
func (p *profiler) flags(fs *flag.FlagSet) { p.options().Flags(fs) }

// maxBenchSeconds bounds --seconds (one day).
const maxBenchSeconds = 86400

// secondsOption declares a bench target's --seconds, the measuring time,
// up to a day (more is surely a typo; 0 is refused by parseBenchFlags).
func secondsOption(p *float64, def float64, help string) spec.Option {
	return spec.Float("seconds", p, def, 0, maxBenchSeconds, help+", seconds")
}

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
		if v, err := strconv.ParseFloat(f.Value.String(), 64); err != nil || v <= 0 {
			return false, usagef("--seconds %s: want a positive number of seconds up to %d", f.Value, maxBenchSeconds)
		}
	}
	return false, nil
}

func benchGames(e *env, args []string) error {
	fs := flag.NewFlagSet("canopy bench games", flag.ContinueOnError)
	benchUsage(fs)
	game, seconds, seed := new(string), new(float64), new(uint64)
	asJSON, quiet := new(bool), new(bool)
	var prof profiler
	append(spec.Table{
		gameOption(game, "", "default: every registered game with default options"),
		secondsOption(seconds, 2, "measurement time per game"),
		seedOption(seed, ""),
		jsonOption(asJSON, ""),
		quietOption(quiet),
	}, prof.options()...).Flags(fs)
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
	ctx, stop := signalContext()
	defer stop()
	if err := prof.start(); err != nil {
		return err
	}
	var results []bench.GameResult
	d := time.Duration(*seconds * float64(time.Second))
	st := newStatus(e.Stderr, *quiet)
	for i, g := range gs {
		r := bench.Games(ctx, g, *seed, d, func(f float64) {
			st.set(fmt.Sprintf("bench games: %s (%d/%d) %3.0f%%", g.Spec(), i+1, len(gs), 100*f))
		})
		results = append(results, r)
	}
	st.clear()
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

// maxNetBatch bounds --batches: larger batches only measure memory
// bandwidth and can reserve gigabytes.
const maxNetBatch = 4096

// benchNetOut is the JSON of `canopy bench net`.
type benchNetOut struct {
	Game   string `json:"game"`
	Net    string `json:"net"`
	Choice string `json:"choice"`
	// Compute is the backend's own account of how it computes (kernels,
	// threads, algorithm, number format), when it gives one.
	Compute string `json:"compute,omitempty"`
	bench.NetResult
}

func benchNet(e *env, args []string) error {
	fs := flag.NewFlagSet("canopy bench net", flag.ContinueOnError)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprint(w, `Usage: canopy bench net [--game G] [--net FILE|init] [--backend SPEC] [--batches 1,8,...] [--seconds S] [--json]

Times Backend.Evaluate on full batches of each size, back to back from one
goroutine (no search, no batcher): evaluations per second, milliseconds per
batch (p50 and p99 over the calls) and evaluations per CPU-second (the
process's CPU time, all kernel threads included). The first line says which
backend was opened and why.

`)
		io.WriteString(w, backendsHelp())
		fmt.Fprintln(w, "\nFlags:")
		printFlags(fs)
	}
	game, netFile, backend, batches := new(string), new(string), new(string), new(string)
	seconds, seed, asJSON, quiet, staged := new(float64), new(uint64), new(bool), new(bool), new(bool)
	var prof profiler
	append(spec.Table{
		gameOption(game, "", "the net's input shape and action count; default: the game --net was made for, else connect4"),
		spec.File("net", netFile, "init", "network: a weights file, or init (the built-in random-init net for --game)"),
		backendOption(backend, ""),
		spec.String("batches", batches, "1,8,16,32,64,128,256", "comma-separated batch sizes to measure, each 1.."+strconv.Itoa(maxNetBatch)),
		secondsOption(seconds, 1, "measurement time per batch size"),
		seedOption(seed, "for the inputs"),
		jsonOption(asJSON, ""),
		quietOption(quiet),
		spec.Bool("staged", staged, false, "do not register the input buffer with a backend that takes registered inputs (cuda page-locks it): time its staging copy of the rows too"),
	}, prof.options()...).Flags(fs)
	if help, err := parseBenchFlags(e, fs, args); help || err != nil {
		return err
	}
	if err := prof.check(); err != nil {
		return err
	}
	sizes, err := parseBatches(*batches)
	if err != nil {
		return err
	}
	g, err := newGame(netGameOr(*game, *netFile, "connect4"))
	if err != nil {
		return err
	}
	net, desc, err := loadBenchNet(g, *netFile)
	if err != nil {
		return err
	}
	be, choice, err := nets.OpenBackendSpec(*backend, net, nets.BackendOptions{MaxBatch: slices.Max(sizes)})
	if err != nil {
		return backendError(*backend, err)
	}
	if c, ok := be.(io.Closer); ok {
		defer c.Close()
	}
	if be.Name() == "ort" {
		// The ort backend runs its own ONNX model; the net gave the shapes.
		desc = "the ort backend's ONNX model (the game's shapes checked against " + desc + ")"
	}
	for _, b := range sizes {
		if b > be.MaxBatch() {
			return usagef("--batches: %d is above the %s backend's maximum batch %d", b, be.Name(), be.MaxBatch())
		}
	}
	ctx, stop := signalContext()
	defer stop()
	if !*quiet {
		fmt.Fprintf(e.Stderr, "bench net: %s\n", choice)
	}
	if err := prof.start(); err != nil {
		return err
	}
	st := newStatus(e.Stderr, *quiet)
	res, err := bench.Net(ctx, bench.NetConfig{Backend: be, Batches: sizes, Seed: *seed, Staged: *staged,
		Duration: time.Duration(*seconds * float64(time.Second)),
		Progress: func(done, total int) {
			st.set(fmt.Sprintf("bench net: %d/%d batch sizes", done, total))
		}})
	st.clear()
	if perr := prof.stop(); err == nil {
		err = perr
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.Stdout, benchNetOut{Game: g.Spec(), Net: desc, Choice: choice.String(), Compute: choice.Detail, NetResult: res})
	}
	w := e.Stdout
	fmt.Fprintf(w, "backend: %s\n", choice)
	if choice.Detail != "" {
		fmt.Fprintf(w, "compute: %s\n", choice.Detail)
	}
	fmt.Fprintf(w, "net: %s for %s (input %d, policy %d)\n", desc, g.Spec(), res.InputSize, res.PolicySize)
	if res.RegisteredInput {
		fmt.Fprintln(w, "input: registered with the backend (uploaded straight from it, no staging copy; --staged times that copy)")
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "batch\tevals/s\tms/batch p50\tms/batch p99\tevals/CPU-s\tcalls\t")
	for _, r := range res.Rows {
		perCPU := "-"
		if r.EvalsPerCPUSec > 0 {
			perCPU = fmt.Sprintf("%.0f", r.EvalsPerCPUSec)
		}
		fmt.Fprintf(tw, "%d\t%.0f\t%.3f\t%.3f\t%s\t%d\t\n", r.Batch, r.EvalsPerSec, r.P50ms, r.P99ms, perCPU, r.Calls)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "(one calling goroutine, GOMAXPROCS=%d, %s/%s)\n", res.GOMAXPROCS, runtime.GOOS, runtime.GOARCH)
	return nil
}

// parseBatches reads --batches: a non-empty comma-separated list of batch
// sizes in [1, maxNetBatch].
func parseBatches(s string) ([]int, error) {
	fields := splitList(s)
	if len(fields) == 0 {
		return nil, usagef("--batches: empty list (give batch sizes such as 1,8,64)")
	}
	out := make([]int, 0, len(fields))
	for _, f := range fields {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > maxNetBatch {
			return nil, usagef("--batches: %q is not a batch size in 1..%d", clip(f), maxNetBatch)
		}
		out = append(out, n)
	}
	return out, nil
}

// loadBenchNet returns the network of --net for g (any nets.OpenNet
// reference: a file, a shipped name, default, init) and a description.
func loadBenchNet(g games.Game, file string) (*nets.Net, string, error) {
	net, src, err := nets.OpenNet(file, g)
	if err != nil {
		return nil, "", netUsage(fmt.Errorf("--net: %w", err))
	}
	return net, fmt.Sprintf("%s, %.1f MFLOP/eval", src.Desc, float64(net.FLOPs())/1e6), nil
}
