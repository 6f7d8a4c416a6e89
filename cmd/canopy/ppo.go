package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/plots"
	"github.com/canopy-go/canopy/rl"
	"github.com/canopy-go/canopy/search/engine"
	"github.com/canopy-go/canopy/spec"
)

func init() {
	register(&command{
		Name:    "ppo",
		Summary: "train a policy network without search by PPO against an opponent, in one resumable run directory",
		Usage:   "[--game G] --out DIR [--updates N] [--envs N] [--env-steps N] [--lr X] [--wd X] [--ent X] [--league fixed|fsp|schedule] [--opponent SPEC] [--seed S] [--net F | --preset P [--legal-plane]] [--shaping] [--resume] [--json] [--quiet]",
		Help: `Trains a network by Proximal Policy Optimization (package rl): --envs games
in lock-step, the learner alternating seats game by game and seeing the board
from its own side, every other seat played by an opponent chosen per game.
Each update collects --env-steps learner moves per environment with the net's
masked policy, computes GAE advantages, and trains --epochs passes of
--minibatches shuffled minibatches (clipped objective, value loss, entropy
bonus --ent, gradient clipping, Adam at --lr with L2 weight decay --wd in
PyTorch's torch.optim.Adam form: wd x weight added to every gradient, after
clipping; default 0).

Opponents (--league):
  fixed     --opponent (any agent spec, default random) in every game; with
            several specs separated by ';' ('onestep;random'), one of them
            drawn uniformly per game
  fsp       study 002's fictitious self-play: 80% the learner's latest
            weights, 20% a checkpoint drawn uniformly from the last 20
  schedule  study 000's: --greedy (default onestep) or random, 50% each, for
            the first --league-warmup updates (default 400); then 70% one of the
            last 5 checkpoints, 15% --greedy, 15% random. The study's 400
            warm-up updates are about 1M frames (its Figure 1 puts 1000
            updates at about 2.5M frames), so with --envs 16 --env-steps 1024
            (16,384 frames an update) its warm-up is --league-warmup 61
The pool's snapshots are the checkpoints taken every --checkpoint-every
updates (update 0 included).

Schedules: --ent-decay F moves the entropy coefficient linearly from --ent to
--ent-final over the first F x --updates updates (study 000: --ent 0.01
--ent-final 0.001 --ent-decay 0.4); --lr-anneal anneals the learning rate to
0 (the studies keep it constant). --shaping adds the dense rewards the
game's study defines (off by default): on Sequence study 000's (+0.05 per
unit by which the learner's move lengthens its longest run of chips,
corners counted; +0.1 for a chip on the gap of an opponent's open four),
on other two-player games study 002's (+0.1 for blocking an immediate
opponent win, +0.05 for creating an immediate win of one's own). They are
not potential-based: against a weak opponent a Connect Four learner learns
to leave a win standing and make new threats for the bonus (docs/RESULTS.md,
section 6). --legal-plane gives a fresh net study
002's third input plane, the legal moves broadcast over the board; nets
without it keep working.

The net is --net (any canopy network file with the game's shapes), a fresh
--preset, or by default a fresh "connect4-ppo" CNN shaped for the game.

Study 000's recurrent CNN-LSTM: --preset sequence-lstm on Sequence
(--game sequence:jacks=false is the study's variant) reads the game's
feature encoding (chip and face planes, hand one-hot, rank counts), keeps
each environment's LSTM state through its game (zeroed when a game starts),
and trains by backpropagation through time over each rollout of --env-steps
moves; its minibatches are groups of whole environments (--minibatches at
most --envs). Every league works with it: the latest weights and the
pool's snapshots play as recurrent opponents, each with an LSTM state of
its own per environment (zeroed at its game's start), their moves batched
across the environments. The study's settings (its schedule league, the
greedy agent as --greedy):
  canopy ppo --game sequence:jacks=false --preset sequence-lstm --league schedule --greedy sequence-greedy \
    --envs 16 --env-steps 1024 --epochs 5 --minibatches 8 --lr 3e-4 \
    --wd 1e-5 --ent 0.01 --ent-final 0.001 --ent-decay 0.4 --league-warmup 61 --updates 140 --out runs/ppo-seq

The run directory --out holds ppo.json (the settings), metrics.jsonl (one
line per update: losses, approximate KL, clip fraction, entropy and its
coefficient, learning rate, the win rate over the games that ended in that
update, in all and per opponent kind, and samples/s), checkpoints
update-NNNNNN.safetensors every --checkpoint-every updates and at the end
(written atomically; metadata: game, preset, opponent, updates, samples) with
Adam's state beside them (update-NNNNNN.adam.safetensors), and the charts
(loss terms, win rate) as SVG and PNG. Each checkpoint plays as the policy
agent:
  canopy arena --game connect4 --agents 'policy:net=DIR/update-000010.safetensors;random'

--resume continues a run from its last checkpoint: it restores the weights,
Adam's moments and step count, the update and sample counts, the settings in
ppo.json, the league's pool and the metrics up to that checkpoint (lines of
later, lost updates are dropped and redone). With --fresh-games (the
default) every update starts new games from random streams of its own (the
opponent agents made anew with seeds of that update), so a resumed run
computes the same weights, bit for bit, as an uninterrupted one. --updates
is the total the run should reach (default on --resume: the target it was
started with); flags that change the settings are refused. Ctrl-C saves a
checkpoint of the updates done.

Example (connect4 against random: 100 updates of 8,192 samples; the
progress line shows samples/s, docs/BENCHMARKS.md measured speeds):
  canopy ppo --out runs/ppo-c4 --updates 100
  canopy arena --game connect4 --games 100 --agents 'policy:net=runs/ppo-c4/update-000100.safetensors;random'`,
		Setup: func(fs *flag.FlagSet) func(*env, []string) error {
			c := rl.DefaultConfig()
			c.Table().Register(fs)                   // --updates, --envs, --env-steps, --lr, ... (rl.RunConfig.Table)
			aliasFlag(fs, "steps", "env-steps")      // train's and zero's --steps are SGD steps
			aliasFlag(fs, "warmup", "league-warmup") // train's --warmup is the learning rate's warm-up
			out := fs.String("out", "", "run directory (required; created when missing)")
			// Switches that set derived settings (the study's shaping
			// weights, decay and annealing spans in updates).
			var (
				shaping, lrAnneal bool
				entDecay          float64
			)
			switches := spec.Table{
				spec.Bool("shaping", &shaping, false, "add the study's dense rewards for the game: on Sequence study 000's (+0.05 per unit of growth of the longest run, +0.1 for blocking an open four), elsewhere study 002's (+0.1 for blocking an immediate loss, +0.05 for creating an immediate win)"),
				spec.Float("ent-decay", &entDecay, 0, 0, 1, "fraction of --updates over which the entropy coefficient moves linearly from --ent to --ent-final (study 000: 0.4); 0 keeps --ent"),
				spec.Bool("lr-anneal", &lrAnneal, false, "anneal the learning rate linearly to 0 over --updates (the studies keep it constant)"),
			}
			switches.Reset()
			switches.Register(fs)
			resume := fs.Bool("resume", false, "continue the run in --out (from its last checkpoint)")
			asJSON, quiet := new(bool), new(bool)
			spec.Table{jsonOption(asJSON, "the result"), quietOption(quiet)}.Flags(fs)
			return func(e *env, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				if strings.TrimSpace(*out) == "" {
					return usagef("--out is required: name the run directory")
				}
				if err := c.Check(); err != nil {
					return usagef("%v", err)
				}
				if shaping || !*resume {
					g, err := newGame(c.Game)
					if err != nil {
						return err
					}
					if shaping {
						c.Shaping = rl.StudyShaping(g)
					}
				}
				if entDecay > 0 {
					c.Options.EntropyDecayUpdates = max(1, int(math.Round(entDecay*float64(c.Updates))))
				} else if flagSet(fs, "ent-final") {
					return usagef("--ent-final needs --ent-decay, the fraction of the updates it takes to reach it")
				}
				if lrAnneal {
					c.Options.AnnealUpdates = c.Updates
				}
				ctx, stop := signalContext()
				defer stop()
				var (
					prog  *progress
					start int
				)
				res, err := rl.Run(ctx, *out, c, rl.RunOptions{
					Resume: *resume,
					Given:  func(name string) bool { return flagSet(fs, name) },
					// One engine pool (the auto backend) for every agent
					// opponent of the run, so that opponents on one
					// network share its engine.
					Agents: engine.WithPool(agent.Env{}),
					Started: func(s rl.Session) {
						if !*quiet {
							fmt.Fprintln(e.Stderr, ppoStarted(s))
						}
						start = s.Start
						prog = newProgress(e.Stderr, "ppo", s.Config.Updates-s.Start, *quiet)
					},
					Progress: func(m rl.Metrics) {
						prog.update(m.Update-start, fmt.Sprintf("| update %d: win %.3f (%d games%s) loss %.4f kl %.4f clip %.3f entropy %.3f, %.0f samples/s",
							m.Update, m.WinRate, m.Episodes, kindRates(m), m.Loss, m.ApproxKL, m.ClipFrac, m.Entropy, m.SamplesPerSec))
					},
				})
				return ppoReport(e, ctx, *out, res, err, *asJSON, *quiet)
			}
		},
	})
}

// ppoStarted is the line that says what a session of a run trains.
func ppoStarted(s rl.Session) string {
	c := s.Config
	switch {
	case s.Resumed:
		adam := "Adam restarts from zero moments (the checkpoint has no optimizer state)"
		if s.AdamStep >= 0 {
			adam = fmt.Sprintf("Adam restored at step %d", s.AdamStep)
		}
		return fmt.Sprintf("ppo: resuming %s at update %d (%d samples) from %s; %s", s.Dir, s.Start, s.Samples, s.Checkpoint, adam)
	case s.Rec != nil:
		cfg := s.Rec.Config()
		return fmt.Sprintf("ppo: %s against %s, recurrent %s (CNN %v, LSTM %d, %d x %d factored policy), %d parameters; %d envs x %d steps = %d samples per update, BPTT over %d steps",
			s.Game.Spec(), c.OpponentName(), c.Preset, cfg.ConvChannels, cfg.Hidden, cfg.Cards, cfg.Squares, s.Rec.NumParams(), c.Envs, c.Options.Steps, c.Envs*c.Options.Steps, c.Options.Steps)
	}
	return fmt.Sprintf("ppo: %s against %s, %s, %d parameters; %d envs x %d steps = %d samples per update",
		s.Game.Spec(), c.OpponentName(), describe(s.Net.Config()), s.Net.NumParams(), c.Envs, c.Options.Steps, c.Envs*c.Options.Steps)
}

// ppoReport turns rl.Run's result into the command's output and error:
// settings errors are usage errors, an interrupted run says how to
// continue, a finished one prints what it trained.
func ppoReport(e *env, ctx context.Context, dir string, res rl.RunResult, err error, asJSON, quiet bool) error {
	c := res.Config
	if res.Done {
		fmt.Fprintf(e.Stdout, "%s has %d updates already (target %d); pass a larger --updates to continue\n", dir, res.Start, c.Updates)
		return nil
	}
	if c.Game != "" { // training began: the charts of the metrics so far
		if perr := writePPOPlots(dir, c); perr != nil && !quiet {
			fmt.Fprintf(e.Stderr, "ppo: plots: %v\n", perr)
		}
	}
	if err != nil {
		if c.Game != "" && !quiet {
			fmt.Fprintln(e.Stderr)
		}
		var se *rl.SettingError
		switch {
		case c.Game != "" && ctx.Err() != nil:
			return interrupted(ctx, fmt.Sprintf("saved at update %d; run the same command with --resume to continue %s", res.Updates, dir))
		case errors.As(err, &se) && se.Flag == "net":
			return netUsage(err)
		case errors.As(err, &se):
			return usageError{err.Error()}
		case errors.Is(err, rl.ErrRunExists):
			return fmt.Errorf("%v; pass --resume to continue it, or choose another --out", err)
		case errors.Is(err, rl.ErrNoRun):
			return fmt.Errorf("%v; start the run without --resume", err)
		}
		return err
	}
	if asJSON {
		return writeJSON(e.Stdout, map[string]any{
			"dir": dir, "game": c.Game, "opponent": c.Opponent, "from_update": res.Start, "checkpoint": res.Checkpoint,
			"info": res.Info, "last": res.Last, "samples": res.Samples, "seconds": res.Seconds, "samples_per_s": res.SamplesPerSec(),
		})
	}
	m := res.Last
	fmt.Fprintf(e.Stdout, "trained updates %d..%d of %s against %s (%d samples, %.0f samples/s): last update win rate %.3f over %d games, loss %.4f, entropy %.3f\n",
		res.Start+1, m.Update, c.Game, c.OpponentName(), res.Samples, res.SamplesPerSec(), m.WinRate, m.Episodes, m.Loss, m.Entropy)
	fmt.Fprintf(e.Stdout, "wrote %s (%d updates, %d samples in all)\n", res.Checkpoint, res.Info.Updates, res.Info.Samples)
	return nil
}

// kindRates is ", KIND WINRATE ..." for the opponent kinds of a league
// update ("" for one kind).
func kindRates(m rl.Metrics) string {
	if len(m.Opponents) < 2 {
		return ""
	}
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(m.Opponents)) {
		fmt.Fprintf(&b, ", %s %.2f", k, m.Opponents[k].WinRate)
	}
	return b.String()
}

// writePPOPlots draws the run's charts (loss terms, win rate) into dir.
func writePPOPlots(dir string, c rl.RunConfig) error {
	ms, err := rl.ReadMetrics(dir)
	if err != nil || len(ms) == 0 {
		return err
	}
	_, err = plots.WriteFiles(filepath.Clean(dir), plots.PPOFigures(c.Game, c.OpponentName(), ms))
	return err
}
