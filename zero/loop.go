package zero

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/fleet"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/internal/atomicfile"
	"github.com/canopy-go/canopy/internal/rundir"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search/engine"
	"github.com/canopy-go/canopy/selfplay"
	"github.com/canopy-go/canopy/train"
)

// Layout of a run directory.
const (
	checkpointsDir = "checkpoints" // iter-NNNN.safetensors (+ .avg); iter-0000 is the start
	selfplayDir    = "selfplay"    // iter-NNNN/: the self-play run of iteration N
	itersDir       = "iterations"  // iter-NNNN.json: the finished iteration's record
	trainDir       = "train"       // iter-NNNN.json: the training result of iteration N
	MetricsName    = "metrics.jsonl"
	plotsDir       = "plots"
)

// Options are how a run reports and where.
type Options struct {
	// Log receives one line per event (phase starts and ends, results,
	// ETA). Nil discards.
	Log io.Writer
	// Status, when set, receives a short live status (progress within a
	// phase), often; it may overwrite the previous one.
	Status func(line string)
	// Fleet, when set, has `canopy worker` processes play the self-play
	// (see Fleet); nil plays it in this process.
	Fleet *Fleet
	// Agents carries the services the evaluation's agents are built with:
	// a search/engine Pool (the command's, so that its notices and
	// backend apply). Run makes a pool with the run's Backend when it
	// carries none.
	Agents agent.Env
	// SkipBad has training skip a shard of its replay window that it
	// cannot use (unreadable, truncated, inconsistent, or holding values
	// no position may have: train.DatasetOptions.SkipBad) with a warning,
	// recorded in the iteration's TrainRecord, instead of stopping the
	// run there, as every rerun would again.
	SkipBad bool
	// NetCache, when > 0, puts a nets.Cache of that many positions in
	// front of the network in in-process self-play (a fresh one each
	// iteration: the network changes). It changes no result (a cached
	// output is the network's own for the same input), only the speed,
	// so it is not a setting of the run: a resumed run may change it.
	NetCache int
	// Reference, when set, is the labelled positions on which evaluation
	// scores each network of a run of its game (Config.SolverPositions;
	// Connect Four's solver-labelled set, which the command passes in).
	// Nil scores none.
	Reference *Reference
	// OverlapEval evaluates each iteration while the next one plays and
	// trains (in-process self-play without a gate: nothing the next
	// iteration does depends on the evaluation), so that the cores the
	// loop's phases leave idle do the evaluation. It changes no result,
	// only the speed and the order of the log's lines, so it is not a
	// setting of the run. Log and Status are then written from two
	// goroutines (Run serialises them).
	OverlapEval bool
}

// Run continues (or starts) the AlphaZero run in dir until
// req.Iterations iterations are complete: self-play with the current
// network, training on the replay window, evaluation, metrics and plots.
// Every step writes its outputs atomically and is skipped when they are
// already there, so Run after any interruption (even kill -9) continues
// where it stopped with nothing lost but the work in flight; self-play
// resumes game by game. A stored configuration must match req except for
// Iterations.
func Run(ctx context.Context, dir string, req Config, opt Options) error {
	if strings.ContainsAny(dir, ",;:=") {
		return fmt.Errorf("run directory %q: the characters , ; : = cannot appear in it (it names networks inside agent specs)", dir)
	}
	if opt.Fleet != nil && req.TurnSearch != "" {
		return fmt.Errorf("turn search (%s) is not played by fleet workers yet; drop the fleet (--nats) to play it in this process", req.TurnSearch)
	}
	// One process at a time per run directory, until Run returns.
	rd, err := rundir.Open(dir)
	if err != nil {
		return err
	}
	defer rd.Close()
	// Under the lock no other process writes here: temporary files in the
	// run's own directories are those of writes a crash cut short (Open
	// removed the top directory's).
	if err := removeTemps(dir); err != nil {
		return fmt.Errorf("%s: removing temporary files of interrupted writes: %v", dir, err)
	}
	cfg, ok, err := LoadConfig(dir)
	if err != nil {
		return err
	}
	if ok && !ProducedAnything(dir) {
		// The run failed before its first self-play game (a --net that
		// does not play, say): its settings bind nothing, and the
		// corrected command replaces them and its starting network.
		raw, avg := train.CheckpointPaths(filepath.Join(dir, checkpointsDir), 0)
		for _, p := range []string{raw, avg} {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		ok = false
	}
	if ok {
		if err := sameRun(cfg, req); err != nil {
			return fmt.Errorf("%s: %w; use the original flags (only --iterations and --eval-policy-games may change) or another --out", dir, err)
		}
		cfg.Iterations = req.Iterations
		if req.EvalPolicyGames != cfg.EvalPolicyGames {
			// Evaluation only: the networks and self-play are the same
			// either way. Stored, so that later continuations keep it.
			cfg.EvalPolicyGames = req.EvalPolicyGames
			if err := cfg.Check(); err != nil {
				return err
			}
			if err := writeJSON(filepath.Join(dir, ConfigName), cfg); err != nil {
				return err
			}
		}
	} else {
		cfg = req
		if err := cfg.Check(); err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := writeJSON(filepath.Join(dir, ConfigName), cfg); err != nil {
			return err
		}
	}
	if cfg.Async && opt.Fleet == nil {
		return errors.New("--async needs a fleet (--nats): its self-play is played by workers while this process trains")
	}
	if _, ok := agent.Lookup[*engine.Pool](opt.Agents); !ok {
		opt.Agents = opt.Agents.With(engine.NewPool(engine.PoolOptions{Backend: cfg.Backend}))
	}
	r := &runner{dir: dir, cfg: cfg, opt: opt, g: games.MustNew(cfg.Game)}
	if r.opt.Log == nil {
		r.opt.Log = io.Discard
	}
	if r.opt.Status == nil {
		r.opt.Status = func(string) {}
	}
	if r.opt.Fleet != nil {
		stop, err := r.startFleet(ctx)
		if err != nil {
			return err
		}
		defer stop()
	}
	return r.run(ctx)
}

// removeTemps removes the temporary files of interrupted atomic writes
// from the run's own directories (dir itself may hold other things: only
// the directories the run makes are swept).
func removeTemps(dir string) error {
	dirs := []string{dir, filepath.Join(dir, checkpointsDir), filepath.Join(dir, itersDir), filepath.Join(dir, selfplayDir),
		filepath.Join(dir, trainDir), filepath.Join(dir, plotsDir), filepath.Join(dir, evalDir)}
	sp, _ := filepath.Glob(filepath.Join(dir, selfplayDir, "iter-*"))
	var errs []error
	for _, d := range append(dirs, sp...) {
		if _, err := atomicfile.RemoveTemps(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// ProducedAnything reports whether the run in dir has finished an
// iteration or saved a self-play game. A run that has not binds nothing:
// Run replaces its settings with the request's.
func ProducedAnything(dir string) bool {
	if m, _ := filepath.Glob(filepath.Join(dir, itersDir, "iter-*.json")); len(m) > 0 {
		return true
	}
	m, _ := filepath.Glob(filepath.Join(dir, selfplayDir, "iter-*", "shard-*.npz"))
	return len(m) > 0
}

type runner struct {
	dir string
	cfg Config
	opt Options
	g   games.Game

	// With Options.Fleet: the fleet's trainer and the run's fleet id.
	trainer  *fleet.Trainer
	fleetRun string
	// With Config.Async: the newest network (pipeline).
	newest *newestNet
}

func (r *runner) logf(format string, args ...any) {
	fmt.Fprintf(r.opt.Log, format+"\n", args...)
}

func (r *runner) path(parts ...string) string {
	return filepath.Join(append([]string{r.dir}, parts...)...)
}

func iterName(i int) string { return fmt.Sprintf("iter-%04d", i) }

// checkpoint returns iteration i's raw network file and the file
// self-play and evaluation use (the Polyak average when kept).
func (r *runner) checkpoint(i int) (raw, play string) {
	raw, avg := train.CheckpointPaths(r.path(checkpointsDir), i)
	if r.cfg.Train.Polyak > 0 {
		return raw, avg
	}
	return raw, raw
}

func (r *runner) run(ctx context.Context) error {
	if err := r.start(); err != nil {
		return err
	}
	recs, err := r.records()
	if err != nil {
		return err
	}
	var clock eta
	if r.cfg.Async {
		if recs, err = r.pipeline(ctx, recs, &clock); err != nil {
			return err
		}
	} else if r.overlapEval() {
		if recs, err = r.overlapped(ctx, recs, &clock); err != nil {
			return err
		}
	}
	for i := len(recs) + 1; i <= r.cfg.Iterations; i++ {
		t0 := time.Now()
		rec, err := r.iteration(ctx, i, recs)
		if err != nil {
			return fmt.Errorf("iteration %d: %w", i, err)
		}
		if recs, err = r.finish(recs, rec, t0, &clock); err != nil {
			return err
		}
	}
	r.logf("run complete: %d iterations in %s (metrics %s, plots in %s)", len(recs), r.dir, r.path(MetricsName), r.path(plotsDir))
	return nil
}

// eta estimates the time the iterations left take from the rate at
// which this session finished iterations: the time from the start of
// its first iteration to its latest record, over the records written.
// A rate, not a sum of the iterations' own durations, since with
// --overlap-eval or --async an iteration's duration overlaps the next
// ones' and a sum would count the overlap twice.
type eta struct {
	since time.Time // the start of the session's first iteration
	done  int       // records this session wrote
}

// finished counts the record of an iteration started at started and
// written at now, and returns the estimate for n more iterations.
func (c *eta) finished(started, now time.Time, n int) time.Duration {
	if c.done == 0 || started.Before(c.since) {
		c.since = started
	}
	c.done++
	return now.Sub(c.since) / time.Duration(c.done) * time.Duration(n)
}

// finish writes iteration rec's record (started at t0), last of its
// files, adds it to recs, rewrites the metrics and plots, and logs it.
func (r *runner) finish(recs []Record, rec Record, t0 time.Time, clock *eta) ([]Record, error) {
	i := rec.Iteration
	if err := writeJSON(r.path(itersDir, iterName(i)+".json"), rec); err != nil {
		return recs, err
	}
	recs = append(recs, rec)
	if err := r.publish(recs); err != nil {
		return recs, err
	}
	now := time.Now()
	took := now.Sub(t0)
	left := r.cfg.Iterations - i
	rest := clock.finished(t0, now, left)
	eta := ""
	if left > 0 {
		eta = fmt.Sprintf("; ETA %s for %d more", rest.Round(time.Second), left)
	}
	r.logf("iteration %d/%d done in %s: %s%s", i, r.cfg.Iterations, took.Round(time.Second), rec.summary(), eta)
	return recs, nil
}

// start writes iteration 0's checkpoint (the starting network) once.
func (r *runner) start() error {
	raw, _ := train.CheckpointPaths(r.path(checkpointsDir), 0)
	if _, err := os.Stat(raw); err == nil {
		return nil
	}
	net, src, err := nets.OpenNet(r.cfg.Net, r.g)
	if err != nil {
		return fmt.Errorf("--net: %v", err)
	}
	var avg *nets.Net
	if r.cfg.Train.Polyak > 0 {
		avg = net.Clone()
	}
	info := train.CheckpointInfo{Game: r.g.Spec(), Preset: net.Config().Preset, Iteration: 0, Parent: src.Ref}
	if _, _, err := train.SaveCheckpoint(r.path(checkpointsDir), net, avg, info); err != nil {
		return err
	}
	r.logf("start: %s saved as iteration 0", src.Desc)
	return nil
}

// records loads the finished iterations' records, in order; it stops at
// the first gap.
func (r *runner) records() ([]Record, error) {
	var out []Record
	for i := 1; ; i++ {
		var rec Record
		ok, err := readJSON(r.path(itersDir, iterName(i)+".json"), &rec)
		if err != nil {
			return nil, err
		}
		if !ok {
			return out, nil
		}
		out = append(out, rec)
	}
}

// best returns the iteration whose network self-play uses after recs:
// the last one that passed the gate (the last one without gating).
func best(recs []Record) int {
	b := 0
	for _, r := range recs {
		if r.Eval.Accepted {
			b = r.Iteration
		}
	}
	return b
}

// iteration runs (or finishes) iteration i.
func (r *runner) iteration(ctx context.Context, i int, recs []Record) (Record, error) {
	prev := best(recs)
	rec, err := r.playAndTrain(ctx, i, prev)
	if err != nil {
		return rec, err
	}
	ev, err := r.evaluate(ctx, i, prev)
	if err != nil {
		return rec, fmt.Errorf("evaluation: %w", err)
	}
	rec.Eval = ev
	rec.Finished = time.Now().UTC()
	return rec, nil
}

// playAndTrain runs (or finishes) iteration i's self-play with network
// prev and its training: the record without its evaluation.
func (r *runner) playAndTrain(ctx context.Context, i, prev int) (Record, error) {
	rec := Record{Iteration: i, Started: time.Now().UTC()}
	_, playNet := r.checkpoint(prev)
	r.logf("iteration %d/%d: self-play with %s", i, r.cfg.Iterations, iterName(prev))
	sp, err := r.selfPlay(ctx, i, playNet)
	if err != nil {
		return rec, fmt.Errorf("self-play: %w", err)
	}
	rec.SelfPlay = sp
	tr, err := r.train(ctx, i)
	if err != nil {
		return rec, fmt.Errorf("training: %w", err)
	}
	rec.Train = tr
	return rec, nil
}

// selfPlay plays iteration i's games with network file netPath (resuming
// a partial run).
func (r *runner) selfPlay(ctx context.Context, i int, netPath string) (SelfPlayRecord, error) {
	var out SelfPlayRecord
	dir := r.path(selfplayDir, iterName(i))
	net, src, err := nets.OpenNet(netPath, r.g)
	if err != nil {
		return out, err
	}
	st, leaves, ts := r.cfg.SelfPlay, r.cfg.SelfPlay.Leaves, ""
	if r.cfg.TurnSearch != "" {
		// A turn search holds its own options; the PUCT settings stay at
		// their defaults (Config.Check), and each leaf is one request.
		if ts, err = selfplay.TurnSearchSpec(r.g, r.cfg.TurnSearch); err != nil {
			return out, err
		}
		st, leaves = selfplay.DefaultSettings(), 1
	}
	m := selfplay.Manifest{Game: r.g.Spec(), ObsShape: r.g.ObservationShape(), Actions: r.g.NumActions(),
		Network: netPath, NetworkSHA256: src.SHA256, Settings: st, TurnSearch: ts,
		Seed: games.DeriveSeed(r.cfg.Seed, uint64(i)), Games: r.cfg.Games}
	if r.trainer != nil {
		return r.fleetSelfPlay(ctx, i, dir, netPath, m)
	}
	be, choice, err := nets.OpenBackendSpec(r.cfg.Backend, net, nets.BackendOptions{MaxBatch: selfPlayBatch})
	if err != nil {
		return out, fmt.Errorf("backend %s: %w", r.cfg.Backend, err)
	}
	if i == 1 {
		r.logf("backend: %s", choice)
	}
	m.Backend = be.Name()
	var cache *nets.Cache
	if r.opt.NetCache > 0 {
		cache = nets.NewCache(be, r.opt.NetCache)
		be = cache
	}
	o, err := selfplay.OpenOutput(dir, m, true)
	if err != nil {
		return out, err
	}
	for _, w := range o.Warnings() {
		r.logf("  warning: %s", w)
	}
	pending := len(o.Pending())
	e, err := engine.New(r.g, be, engine.Options{Leaves: leaves, Batch: min(selfPlayBatch, be.MaxBatch()),
		Slots: engine.SlotsFor(r.cfg.Trees, leaves)})
	if err != nil {
		return out, err
	}
	defer e.Close()
	t0 := time.Now()
	var done int
	err = selfplay.Generate(ctx, e, o, selfplay.Config{Settings: st, Seed: m.Seed, Trees: r.cfg.Trees, TurnSearch: ts}, func(*selfplay.GameRecord) {
		done++
		c := e.Counters()
		r.opt.Status(fmt.Sprintf("iteration %d self-play: %d/%d games, %.0f evals/s, batch %.1f", i, done, pending, float64(c.Evals)/time.Since(t0).Seconds(), c.Batch.Mean))
	})
	if err != nil {
		return out, err
	}
	mf := o.Manifest()
	c := e.Counters()
	el := time.Since(t0).Seconds()
	out = SelfPlayRecord{Games: mf.Totals.Games, Positions: mf.Totals.Positions, Seconds: el, NewGames: done}
	if el > 0 && done > 0 {
		out.EvalsPerSec = float64(c.Evals) / el
	}
	r.logf("  self-play: %d games, %d positions (%d games this session, %.0f evals/s)", out.Games, out.Positions, done, out.EvalsPerSec)
	if cache != nil {
		cs := cache.Stats()
		r.logf("  network cache: %.1f%% of %d lookups answered (%d entries)", 100*cs.HitRate(), cs.Hits+cs.Misses, cs.Entries)
	}
	return out, nil
}

// train trains iteration i's network from iteration i-1's on the replay
// window, unless its result is already recorded.
func (r *runner) train(ctx context.Context, i int) (TrainRecord, error) {
	var out TrainRecord
	resPath := r.path(trainDir, iterName(i)+".json")
	if ok, err := readJSON(resPath, &out); ok || err != nil {
		return out, err
	}
	lo := 1
	if r.cfg.WindowIters > 0 {
		lo = max(1, i-r.cfg.WindowIters+1)
	}
	var paths []string
	for k := lo; k <= i; k++ {
		paths = append(paths, r.path(selfplayDir, iterName(k)))
	}
	ds, err := train.LoadDataset(paths, r.g, train.DatasetOptions{Window: r.cfg.WindowPositions, SkipBad: r.opt.SkipBad, Log: r.opt.Log})
	if err != nil {
		return out, err
	}
	parent, _ := r.checkpoint(i - 1)
	net, info, err := train.LoadCheckpoint(parent)
	if err != nil {
		return out, err
	}
	o := r.cfg.Train
	if r.cfg.Async {
		o.Steps = asyncSteps(r.cfg.ReplayRatio, newPositions(ds, len(paths)), o.Batch)
	}
	o.OutDir, o.Iteration, o.Overwrite = r.path(checkpointsDir), i, true
	o.Parent, o.ParentInfo, o.Preset = parent, info, net.Config().Preset
	o.Seed = games.DeriveSeed(r.cfg.Train.Seed, uint64(i))
	o.CheckpointEvery = 0 // the checkpoint appears only when training is complete
	if o.Polyak > 0 {
		_, avgPath := train.CheckpointPaths(r.path(checkpointsDir), i-1)
		if avg, _, err := train.LoadCheckpoint(avgPath); err == nil {
			o.Average = avg
		}
	}
	// The newest iteration's rows come last (oldest first); the parent
	// never trained on them.
	fresh := newPositions(ds, len(paths))
	var heldOut *nets.Loss
	if fresh > 0 {
		l, err := train.HeldOutLoss(net, ds, ds.Len()-fresh, ds.Len(), HeldOutLimit)
		if err != nil {
			return out, fmt.Errorf("held-out loss: %w", err)
		}
		heldOut = &l
		r.logf("  held out (%d of this iteration's positions, network %s): policy %.5f, value %.5f", min(fresh, HeldOutLimit), iterName(i-1), l.Policy, l.Value)
	}
	obsBytes, _ := ds.ObsBytes()
	// The replay ratio: training samples per new position. Well above a
	// few, the value head learns the window's games by heart
	// (docs/RESULTS.md, section 8: Strands at 10.8).
	var ratio float64
	ratioText := ""
	if fresh > 0 {
		ratio = float64(o.Steps) * float64(o.Batch) / float64(fresh)
		ratioText = fmt.Sprintf(", %.1f samples per new position", ratio)
	}
	r.logf("  training on %d positions (%d iterations of self-play, observations %d MB), %d steps%s", ds.Len(), len(paths), obsBytes>>20, o.Steps, ratioText)
	res, err := train.Run(ctx, net, ds, o, func(m train.Metrics) {
		r.opt.Status(fmt.Sprintf("iteration %d training: step %d/%d, %s, %.0f samples/s", i, m.Step, m.Steps, m.Loss, m.SamplesPerSec))
	})
	if err != nil {
		var div *train.DivergedError
		if errors.As(err, &div) {
			return out, fmt.Errorf("%v (iteration %d's checkpoint was not written; the run can continue after a fix)", err, i)
		}
		return out, err
	}
	out = TrainRecord{Positions: ds.Len(), Steps: res.Steps, Samples: res.Samples, Epochs: res.Epochs,
		FirstLoss: res.FirstLoss, FinalLoss: res.FinalLoss, SamplesPerSec: res.SamplesPerSec, Seconds: res.Elapsed.Seconds(),
		HeldOut: heldOut, ReplayRatio: ratio, SkippedShards: ds.Warnings()}
	if heldOut != nil {
		out.HeldOutPositions = min(fresh, HeldOutLimit)
	}
	r.logf("  trained: %s (%.0f samples/s)", lossTrend(res, o.MetricsEvery), res.SamplesPerSec)
	return out, writeJSON(resPath, out)
}

// newPositions is the number of positions of the newest of the n
// self-play directories ds was loaded from.
func newPositions(ds *train.Dataset, n int) int {
	fresh := 0
	for _, s := range ds.Sources() {
		if s.Iteration == n-1 {
			fresh += s.Positions
		}
	}
	return fresh
}

// lossTrend describes a training run's mean losses: those of its first and
// last report windows of every steps (train.Result), or, when the run fits
// in one window, that window's alone (so that an unchanged figure is not
// read as training that learned nothing).
func lossTrend(res train.Result, every int) string {
	if every <= 0 || res.Steps <= every {
		return fmt.Sprintf("mean of all %d steps: %s", res.Steps, res.FirstLoss)
	}
	last := res.Steps % every
	if last == 0 {
		last = every
	}
	return fmt.Sprintf("mean of steps 1-%d: %s -> of steps %d-%d: %s", every, res.FirstLoss, res.Steps-last+1, res.Steps, res.FinalLoss)
}
