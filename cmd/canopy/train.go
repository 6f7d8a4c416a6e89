package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/internal/rundir"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/spec"
	"github.com/canopy-go/canopy/train"
)

func init() {
	def := train.DefaultOptions()
	register(&command{
		Name:    "train",
		Summary: "train a policy-value network on self-play shards (AlphaZero loss) into checkpoints",
		Usage:   "--data DIR[,DIR...] [--net F | --preset P] [--out DIR] [--iter N] [--steps N] [--batch N] [--lr X] [--json]",
		Help: `Trains a network on the positions of one or more self-play runs (directories
written by canopy selfplay, their manifest.json, or single .npz shards; each
one is a self-play iteration, oldest first) with the AlphaZero loss: policy
cross-entropy against the visit distribution, value mean squared error against
the game outcome, and L2 on the weights. Minibatches are shuffled (seeded) and,
with --augment, each position is transformed by a random symmetry of the game
(Connect Four, Connect4d and Tetris Link: mirror; Hex: 180-degree rotation;
Strands: the hexagon's 12 rotations and reflections; tic-tac-toe: the square's
8; none for Sequence and Sushi Go).

The replay window keeps the last --window positions and the last
--window-iters iterations (0 = all). Every shard is checked against the game;
--skip-bad skips unreadable or inconsistent shards with a warning.

--held-out names positions the network does not train on (other self-play
runs or shards of the same game): the loss of the starting network, of the
trained one and of its Polyak average on up to --held-out-positions of them
(evenly spaced; batch norm's running statistics, no symmetries, value MSE
against the game outcome whatever --qmix says) is printed after training.
A held-out value loss above the training one, and above 1 (what a constant
0 scores on +-1 outcomes), means the value head memorises games.

Training starts from --net (a checkpoint or any canopy network file; the
Polyak average F.avg.safetensors beside it, when present, is continued) or
from a fresh network: --preset, or the built-in one for the game (the
"connect4" preset for connect4). It writes DIR/iter-NNNN.safetensors and,
with --polyak > 0, DIR/iter-NNNN.avg.safetensors, whose metadata records the
game, preset, iteration, positions and steps seen (cumulative) and the parent
checkpoint. Writes are atomic; a run whose loss becomes NaN or infinite stops
with an error and never replaces a good checkpoint.

Example:
  canopy selfplay --out runs/sp0 --games 200
  canopy train --data runs/sp0 --out runs/nets --steps 2000
  canopy train --data runs/sp0,runs/sp1 --net runs/nets/iter-0001.safetensors --out runs/nets`,
		Setup: func(fs *flag.FlagSet) func(*env, []string) error {
			opt := def
			data := fs.String("data", "", "self-play run directories, manifests or .npz shards, comma-separated, oldest first (required)")
			game := new(string)
			spec.Table{gameOption(game, "", "default: the data's manifest")}.Flags(fs)
			netFile := fs.String("net", "init", "network to start from: a checkpoint or any canopy network file, or init (a fresh network with random weights: --preset, or the game's built-in one)")
			preset := fs.String("preset", "", "architecture of a fresh network: "+strings.Join(nets.Presets(), ", ")+" (default: the game's built-in network)")
			out := fs.String("out", "runs/train", "run directory: the checkpoints (created when missing)")
			iter := new(int)
			spec.Table{spec.Int("iter", iter, 0, 0, 1<<30, "iteration number of the checkpoint (0: --net's iteration + 1, or 1)")}.Flags(fs)
			force := fs.Bool("force", false, "overwrite an existing checkpoint of the same iteration")
			opt.Table().Register(fs) // --steps, --batch, --lr, ... (train.Options: the names, ranges and help zero uses too)
			var dopt train.DatasetOptions
			dopt.Table().Register(fs) // --window, --window-iters
			skipBad := fs.Bool("skip-bad", false, "skip unreadable or inconsistent shards with a warning")
			heldOutData := fs.String("held-out", "", "self-play runs, manifests or shards the network does not train on, comma-separated: report its loss on them before and after training")
			var heldOutN int
			heldTable := spec.Table{spec.Int("held-out-positions", &heldOutN, 2048, 1, 1<<20, "positions of --held-out to score, evenly spaced")}
			heldTable.Reset()
			heldTable.Register(fs)
			asJSON, quiet := new(bool), new(bool)
			spec.Table{jsonOption(asJSON, "the result"), quietOption(quiet)}.Flags(fs)
			return func(e *env, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				if strings.TrimSpace(*out) == "" {
					return usagef("--out is empty: name the run directory")
				}
				paths := splitList(*data)
				if len(paths) == 0 {
					return usagef("--data is required: self-play run directories or .npz shards, comma-separated")
				}
				if flagSet(fs, "iter") && *iter < 1 {
					return usagef("--iter = %d, want 1..%d", *iter, train.MaxIteration)
				}
				opt.Iteration = max(*iter, 1) // checked again below once --net is read
				if err := opt.Check(); err != nil {
					return usagef("--%v", err)
				}
				dopt.SkipBad, dopt.Log = *skipBad, warnWriter{e}
				if err := dopt.Check(); err != nil {
					return usagef("--%v", err)
				}
				if *netFile == "" {
					*netFile = "init" // the spelling of earlier releases
				}
				if *netFile != "init" && *preset != "" {
					return usagef("--net and --preset exclude each other: --net starts from existing weights, --preset builds fresh ones")
				}
				var g games.Game
				if *game != "" {
					var err error
					if g, err = newGame(*game); err != nil {
						return err
					}
				}
				var cfg nets.Config
				if *preset != "" {
					var err error
					if cfg, err = nets.Preset(*preset); err != nil {
						return usagef("--preset: %v", err)
					}
				}

				// The starting network and the checkpoint it continues.
				var net *nets.Net
				if *netFile != "init" {
					n, info, err := train.LoadCheckpoint(*netFile)
					if err != nil {
						return netUsage(fmt.Errorf("--net %s: %w", *netFile, unwrapPath(err)))
					}
					net, opt.Parent, opt.ParentInfo = n, *netFile, info
					if !flagSet(fs, "iter") {
						opt.Iteration = info.Iteration + 1
					}
					opt.Preset = net.Config().Preset
					if opt.Polyak > 0 {
						if opt.Average, err = siblingAverage(*netFile); err != nil {
							return err
						}
					}
					if g == nil && net.Config().Game != "" {
						if g, err = games.New(net.Config().Game); err != nil {
							return fmt.Errorf("--net %s was made for game %q: %v (pass --game)", *netFile, net.Config().Game, err)
						}
					}
				}
				if opt.Iteration > train.MaxIteration {
					return usagef("--iter = %d, want 1..%d", opt.Iteration, train.MaxIteration)
				}
				// Output problems surface before the data is read (and
				// again under the lock, below).
				checkOut := func() error {
					if err := train.CheckOutput(*out, opt.Iteration, *force); err != nil {
						if errors.Is(err, train.ErrCheckpointExists) {
							p, _ := train.CheckpointPaths(*out, opt.Iteration)
							return fmt.Errorf("%s (or its .avg) already exists; pass --force to overwrite it, or another --iter or --out", p)
						}
						return fmt.Errorf("--out: %v", err)
					}
					return nil
				}
				if err := checkOut(); err != nil {
					return err
				}
				opt.OutDir, opt.Overwrite = *out, *force

				t0 := time.Now()
				ds, err := train.LoadDataset(paths, g, dopt)
				if err != nil {
					if errors.Is(err, train.ErrNoGame) {
						return usagef("%v with --game", err)
					}
					if errors.Is(err, train.ErrOtherGame) { // --game, or --net's game, is not the data's
						return usagef("--data: %v", err)
					}
					return inputUsage(fmt.Errorf("--data: %w", err))
				}
				g = ds.Game()
				loadTime := time.Since(t0)
				if net != nil {
					if err := nets.CheckGame(net, g, *netFile); err != nil {
						return usagef("--net: %v (the data is %s)", err, g.Spec())
					}
				}
				if net == nil {
					if *preset != "" {
						if cfg, err = cfg.ForGame(g); err != nil {
							return usagef("--preset: %v", err)
						}
					} else if cfg, err = nets.DefaultConfig(g); err != nil {
						return fmt.Errorf("no built-in network for %s: %v (pass --preset or --net)", g.Spec(), err)
					}
					if net, err = nets.New(cfg, opt.Seed); err != nil {
						return err
					}
					opt.Preset = cfg.Preset
				}
				if !*quiet {
					fmt.Fprintf(e.Stderr, "train: %d positions of %s from %d shards (%.1fs); %s, %d parameters; %d symmetries\n",
						ds.Len(), g.Spec(), len(ds.Sources()), loadTime.Seconds(), describe(net.Config()), net.NumParams(),
						len(games.SymmetriesOf(g))+1)
				}
				if err := checkTrainMemory(opt, net); err != nil {
					return err
				}
				var held *heldOut
				if *heldOutData != "" {
					if held, err = loadHeldOut(splitList(*heldOutData), g, heldOutN, warnWriter{e}, ds.Sources(), net); err != nil {
						return err
					}
				}

				// One trainer at a time per checkpoint directory; taken
				// only now so that a run failing on its input creates no
				// directory.
				rd, err := rundir.Open(*out)
				if err != nil {
					return err
				}
				defer rd.Close()
				if err := checkOut(); err != nil {
					return err
				}
				// Report (and average the loss over) about 1% of the run at a
				// time, at most 50 steps; the progress line throttles itself.
				opt.MetricsEvery = max(1, min(50, opt.Steps/100))
				// An interrupted run of the same command left an
				// intermediate save (--checkpoint-every): continue it.
				if n, avg, p, step, err := train.LatestStepCheckpoint(opt); err != nil {
					return err
				} else if n != nil {
					net, opt.StartStep = n, step
					if avg != nil {
						opt.Average = avg
					}
					if !*quiet {
						fmt.Fprintf(e.Stderr, "train: continuing from %s (step %d of %d)\n", p, step, opt.Steps)
					}
				}
				ctx, stop := signalContext()
				defer stop()
				prog := newProgress(e.Stderr, "train", opt.Steps, *quiet)
				prog.before = opt.StartStep
				res, err := train.Run(ctx, net, ds, opt, func(m train.Metrics) {
					prog.update(m.Step, fmt.Sprintf("| loss %.4f (policy %.4f, value %.4f) lr %.3g, %.0f samples/s",
						m.Loss.Total, m.Loss.Policy, m.Loss.Value, m.LR, m.SamplesPerSec))
				})
				if err != nil {
					if !*quiet {
						fmt.Fprintln(e.Stderr)
					}
					if ctx.Err() != nil {
						at := strings.TrimPrefix(strings.TrimSuffix(err.Error(), ": "+context.Canceled.Error()), "interrupted ")
						if opt.CheckpointEvery > 0 {
							return fmt.Errorf("interrupted (%s) %s; run the same command to continue from the last --checkpoint-every save in %s", signalName(ctx), at, *out)
						}
						return fmt.Errorf("interrupted (%s) %s; nothing was saved (--checkpoint-every N saves every N steps)", signalName(ctx), at)
					}
					return err
				}
				if held != nil {
					if err := held.score(net, res.Average); err != nil {
						return err
					}
				}
				if *asJSON {
					out := map[string]any{
						"game": g.Spec(), "positions": ds.Len(), "sources": ds.Sources(), "warnings": ds.Warnings(),
						"result": res, "config": net.Config(),
					}
					if held != nil {
						out["held_out"] = held
					}
					return writeJSON(e.Stdout, out)
				}
				fmt.Fprintf(e.Stdout, "trained %d steps on %d positions of %s (%.2f epochs, %.0f samples/s): loss %.4f -> %.4f (policy %.4f, value %.4f)\n",
					res.Steps, ds.Len(), g.Spec(), res.Epochs, res.SamplesPerSec, res.FirstLoss.Total, res.FinalLoss.Total,
					res.FinalLoss.Policy, res.FinalLoss.Value)
				fmt.Fprintf(e.Stdout, "wrote %s (iteration %d, %d positions and %d steps in all)\n", res.Checkpoint, res.Info.Iteration,
					res.Info.Positions, res.Info.Steps)
				if res.Average != "" {
					fmt.Fprintf(e.Stdout, "wrote %s (Polyak average, tau %g)\n", res.Average, opt.Polyak)
				}
				if held != nil {
					held.print(e.Stdout)
				}
				return nil
			}
		},
	})
}

// heldOut is the loss of the network on positions it does not train on
// (train.HeldOutLoss: value MSE against the outcome), before training,
// after it, and of the Polyak average when one is written.
type heldOut struct {
	ds        *train.Dataset
	Positions int            `json:"positions"`
	Sources   []train.Source `json:"sources"`
	Before    nets.Loss      `json:"before"`
	After     nets.Loss      `json:"after"`
	Average   *nets.Loss     `json:"average,omitempty"`
}

// loadHeldOut reads the held-out positions of game g, refuses a shard
// that is also among the training sources, and scores net on them before
// training.
func loadHeldOut(paths []string, g games.Game, limit int, log warnWriter, training []train.Source, net *nets.Net) (*heldOut, error) {
	ds, err := train.LoadDataset(paths, g, train.DatasetOptions{Log: log})
	if err != nil {
		return nil, inputUsage(fmt.Errorf("--held-out: %w", err))
	}
	if p, ok := sharedSource(training, ds.Sources()); ok {
		return nil, usagef("--held-out: %s is also in --data's window; held-out positions must be ones the network does not train on", p)
	}
	h := &heldOut{ds: ds, Positions: min(ds.Len(), limit), Sources: ds.Sources()}
	if h.Before, err = train.HeldOutLoss(net, ds, 0, ds.Len(), limit); err != nil {
		return nil, fmt.Errorf("--held-out: %v", err)
	}
	return h, nil
}

// score adds the trained net's loss and that of the average saved at
// avgPath ("" when none).
func (h *heldOut) score(net *nets.Net, avgPath string) error {
	var err error
	if h.After, err = train.HeldOutLoss(net, h.ds, 0, h.ds.Len(), h.Positions); err != nil {
		return err
	}
	if avgPath == "" {
		return nil
	}
	avg, _, err := train.LoadCheckpoint(avgPath)
	if err != nil {
		return err
	}
	l, err := train.HeldOutLoss(avg, h.ds, 0, h.ds.Len(), h.Positions)
	h.Average = &l
	return err
}

// sharedSource returns a shard path that both lists hold.
func sharedSource(a, b []train.Source) (string, bool) {
	seen := make(map[string]bool, len(a))
	for _, s := range a {
		if abs, err := filepath.Abs(s.Path); err == nil {
			seen[abs] = true
		}
	}
	for _, s := range b {
		if abs, err := filepath.Abs(s.Path); err == nil && seen[abs] {
			return s.Path, true
		}
	}
	return "", false
}

func (h *heldOut) print(w io.Writer) {
	fmt.Fprintf(w, "held out (%d positions): before policy %.4f, value %.4f; after policy %.4f, value %.4f", h.Positions,
		h.Before.Policy, h.Before.Value, h.After.Policy, h.After.Value)
	if h.Average != nil {
		fmt.Fprintf(w, "; Polyak average policy %.4f, value %.4f", h.Average.Policy, h.Average.Value)
	}
	fmt.Fprintln(w)
}

// warnWriter prints dataset warnings on stderr, one line each.
type warnWriter struct{ e *env }

func (w warnWriter) Write(p []byte) (int, error) {
	fmt.Fprintf(w.e.Stderr, "canopy train: %s", p)
	return len(p), nil
}

// siblingAverage loads the Polyak average saved beside checkpoint path
// (iter-NNNN.avg.safetensors beside iter-NNNN.safetensors), or returns nil
// when there is none.
func siblingAverage(path string) (*nets.Net, error) {
	base, ok := strings.CutSuffix(path, ".safetensors")
	if !ok || strings.HasSuffix(base, ".avg") {
		return nil, nil
	}
	avgPath := base + ".avg.safetensors"
	if _, err := os.Stat(avgPath); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	avg, _, err := train.LoadCheckpoint(avgPath)
	if err != nil {
		return nil, fmt.Errorf("the Polyak average beside --net: %v (remove it or pass --polyak 0)", err)
	}
	return avg, nil
}
