package main

import (
	"flag"
	"fmt"
	"github.com/canopy-go/canopy/spec"
	"os"
	"path/filepath"
	"runtime/trace"
	"sort"
	"time"

	"github.com/google/pprof/profile"

	"github.com/canopy-go/canopy/bench"
	"github.com/canopy-go/canopy/search/engine"
	"github.com/canopy-go/canopy/selfplay"
)

func init() { benchTargets["search"] = benchSearch }

// topFunc is one line of the CPU profile summary.
type topFunc struct {
	Name    string  `json:"name"`
	FlatPct float64 `json:"flat_pct"`
	CumPct  float64 `json:"cum_pct"`
}

type benchSearchOut struct {
	bench.SearchResult
	RunDir string    `json:"run_dir"`
	Top    []topFunc `json:"top,omitempty"`
}

func benchSearch(e *env, args []string) error {
	fs := flag.NewFlagSet("canopy bench search", flag.ContinueOnError)
	benchUsage(fs)
	fs.SetOutput(e.Stderr)
	var cfg bench.SearchConfig
	game, netFile, backend, out, traceFile := new(string), new(string), new(string), new(string), new(string)
	seconds, seed, asJSON, quiet := new(float64), new(uint64), new(bool), new(bool)
	var prof profiler
	cpu := prof.options()
	cpu[0].Help = "write the pprof CPU profile to this file (default: cpu.pprof in the run directory)"
	append(spec.Table{
		gameOption(game, "", "default: the game --net was made for, else connect4"),
		spec.File("net", netFile, "random", "network: a weights file, init (built-in random-init net) or random (no network)"),
		backendOption(backend, "for --net"),
		secondsOption(seconds, 5, "measurement time"),
		seedOption(seed, ""),
		spec.String("out", out, "", "run directory for profiles and result.json (default runs/bench-<time>)"),
		spec.String("trace", traceFile, "", "write a runtime execution trace to this file"),
		jsonOption(asJSON, ""),
		quietOption(quiet),
	}, append(cfg.Table(), cpu...)...).Flags(fs) // --trees, --net-batch, --sims, --leaves, --workers, --wait: bench.SearchConfig's
	aliasFlag(fs, "batch", "net-batch")
	netCache := netCacheFlag(fs)
	if help, err := parseBenchFlags(e, fs, args); help || err != nil {
		return err
	}
	if flagSet(fs, "out") && *out == "" {
		return usagef("--out is empty: give a run directory, or leave --out out for runs/bench-<time>")
	}
	if *netFile == "random" && flagSet(fs, "backend") && *backend != "random" {
		return usagef("--backend %s has no effect with --net random (no network, no backend): give --net init or a weights file to measure a backend", *backend)
	}
	if err := prof.check(); err != nil {
		return err
	}
	g, err := newGame(netGameOr(*game, *netFile, "connect4"))
	if err != nil {
		return err
	}
	st := selfplay.DefaultSettings()
	st.Sims, st.Leaves = cfg.Sims, cfg.Leaves
	if err := checkSelfPlayMemory(g, *netFile, *backend, selfplay.Config{Settings: st, Trees: cfg.Trees, NumGames: cfg.Trees}, cfg.Batch); err != nil {
		return err
	}
	nb, err := openNetwork(g, *netFile, *backend, cfg.Batch, nil)
	if err != nil {
		return err
	}
	if err := nb.cache(g, *netCache); err != nil {
		return err
	}
	dir := *out
	if dir == "" {
		dir = filepath.Join("runs", "bench-"+time.Now().Format("20060102-150405"))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("--out %s: %v", dir, unwrapPath(err))
	}
	if prof.cpu == "" {
		prof.cpu = filepath.Join(dir, "cpu.pprof")
	}
	ctx, stop := signalContext()
	defer stop()
	if *traceFile != "" {
		f, err := os.Create(*traceFile)
		if err != nil {
			return fmt.Errorf("--trace: %v", err)
		}
		defer f.Close()
		if err := trace.Start(f); err != nil {
			return fmt.Errorf("--trace: %v", err)
		}
		defer trace.Stop()
	}
	if err := prof.start(); err != nil {
		return err
	}
	live := newStatus(e.Stderr, *quiet)
	cfg.Game, cfg.Backend, cfg.Seed = g, nb.be, *seed
	cfg.Duration = time.Duration(*seconds * float64(time.Second))
	res, err := bench.Search(ctx, cfg,
		func(f float64, c engine.Counters) {
			live.set(fmt.Sprintf("bench search: %3.0f%% %d nodes, %d evals", 100*f, c.Nodes, c.Evals))
		})
	live.clear()
	if perr := prof.stop(); err == nil {
		err = perr
	}
	if err != nil {
		return err
	}
	o := benchSearchOut{SearchResult: res, RunDir: dir}
	if top, err := topFunctions(prof.cpu, 8); err == nil {
		o.Top = top
	}
	if err := writeJSONFile(filepath.Join(dir, "result.json"), o); err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.Stdout, o)
	}
	w := e.Stdout
	fmt.Fprintf(w, "%s on %s: %d trees, batch %d, %d sims/move, %d leaves/tree, %d workers (GOMAXPROCS %d), %.1f s\n",
		res.Game, res.Backend, res.Trees, res.Batch, res.Sims, res.Leaves, res.Workers, res.GOMAXPROCS, res.Seconds)
	fmt.Fprintf(w, "nodes/s %.0f (per CPU-second %.0f; CPU %.1f s)   evals/s %.0f   games %d, positions %d\n",
		res.NodesPerSec, res.NodesPerCPUSec, res.CPUSeconds, res.EvalsPerSec, res.Games, res.Positions)
	fmt.Fprintf(w, "batch: mean %.1f rows, fill %.0f%%; backend busy %.0f%% of wall time\n", res.MeanBatch, 100*res.Fill, 100*res.BusyFraction)
	fmt.Fprintf(w, "latency: queue p50 %.0f µs p99 %.0f µs; compute p50 %.0f µs p99 %.0f µs\n", res.QueueP50us, res.QueueP99us, res.ComputeP50us, res.ComputeP99us)
	if len(o.Top) > 0 {
		fmt.Fprintln(w, "top functions (CPU profile):   flat%   cum%")
		for _, t := range o.Top {
			fmt.Fprintf(w, "  %-60.60s %5.1f %6.1f\n", t.Name, t.FlatPct, t.CumPct)
		}
	}
	fmt.Fprintf(w, "result.json in %s; CPU profile %s", dir, prof.cpu)
	if prof.mem != "" {
		fmt.Fprintf(w, "; heap profile %s", prof.mem)
	}
	_, err = fmt.Fprintln(w)
	return err
}

func writeJSONFile(path string, v any) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := writeJSON(f, v); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// topFunctions reads a CPU profile and returns the n functions with the
// most flat samples, with their flat and cumulative shares.
func topFunctions(path string, n int) ([]topFunc, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, err
	}
	vi := len(p.SampleType) - 1 // "cpu/nanoseconds" is the last type
	flat, cum := map[string]int64{}, map[string]int64{}
	var total int64
	for _, s := range p.Sample {
		v := s.Value[vi]
		total += v
		seen := map[string]bool{}
		for li, loc := range s.Location {
			for k, ln := range loc.Line {
				if ln.Function == nil {
					continue
				}
				name := ln.Function.Name
				if li == 0 && k == 0 {
					flat[name] += v
				}
				if !seen[name] {
					seen[name] = true
					cum[name] += v
				}
			}
		}
	}
	if total == 0 {
		return nil, nil
	}
	names := make([]string, 0, len(flat))
	for k := range flat {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return flat[names[i]] > flat[names[j]] })
	var out []topFunc
	for _, k := range names[:min(n, len(names))] {
		out = append(out, topFunc{k, 100 * float64(flat[k]) / float64(total), 100 * float64(cum[k]) / float64(total)})
	}
	return out, nil
}
