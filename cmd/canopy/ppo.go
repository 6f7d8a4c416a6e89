package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/internal/runlock"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/rl"
)

// Limits of the ppo command's numeric flags.
const (
	ppoMaxEnvs        = 4096
	ppoMaxSteps       = 1 << 16
	ppoMaxBatch       = 1 << 20 // envs x steps: the rollout's samples
	ppoMaxEpochs      = 100
	ppoDefaultPreset  = "connect4-ppo"
	ppoDefaultUpdates = 100
)

// ppoSettings are the flags that make a run's RunConfig; a resumed run
// must not be given different values.
var ppoSettings = []string{"game", "net", "preset", "opponent", "envs", "steps", "lr", "ent", "epochs", "minibatches", "seed", "checkpoint-every"}

func init() {
	def := rl.DefaultOptions()
	register(&command{
		Name:    "ppo",
		Summary: "train a policy network without search by PPO against an opponent, in one resumable run directory",
		Usage:   "[--game G] --out DIR [--updates N] [--envs N] [--steps N] [--lr X] [--ent X] [--opponent SPEC] [--seed S] [--net F | --preset P] [--resume] [--json] [--quiet]",
		Help: `Trains a network by Proximal Policy Optimization (package rl): --envs games
in lock-step, the learner alternating seats game by game and seeing the board
from its own side, every other seat played by --opponent (any agent spec,
default random). Each update collects --steps learner moves per environment
with the net's masked policy, computes GAE advantages, and trains --epochs
passes of --minibatches shuffled minibatches (clipped objective, value loss,
entropy bonus --ent, gradient clipping, Adam at --lr).

The net is --net (any canopy network file with the game's shapes), a fresh
--preset, or by default a fresh "connect4-ppo" CNN shaped for the game.

The run directory --out holds ppo.json (the settings), metrics.jsonl (one
line per update: losses, approximate KL, clip fraction, entropy, the win
rate against the opponent over the games that ended in that update, and
samples/s) and checkpoints update-NNNNNN.safetensors every --checkpoint-every
updates and at the end (written atomically; metadata: game, preset, opponent,
updates, samples). Each checkpoint plays as the policy agent:
  canopy arena --game connect4 --agents 'policy:net=DIR/update-000010.safetensors;random'

--resume continues a run from its last checkpoint: it restores the weights,
the update and sample counts, the settings in ppo.json and the metrics up to
that checkpoint (lines of later, lost updates are dropped and redone). It
does not restore Adam's moments (the optimizer restarts from zero moments and
its bias correction), the random streams or the games in progress, so a
resumed run is not bit-identical to an uninterrupted one. --updates is the
total the run should reach (default on --resume: the target it was started
with); flags that change the settings are refused. Ctrl-C saves a checkpoint
of the updates done.

Example (connect4 against random: 8,192 samples per update, about 450
samples/s with the default net on a loaded 2-core machine, so 30 minutes):
  canopy ppo --out runs/ppo-c4 --updates 100
  canopy arena --game connect4 --games 100 --agents 'policy:net=runs/ppo-c4/update-000100.safetensors;random'`,
		Setup: func(fs *flag.FlagSet) func(*env, []string) error {
			var c rl.RunConfig
			c.Options = def
			fs.StringVar(&c.Game, "game", "connect4", "game spec (sequential games)")
			out := fs.String("out", "", "run directory (required; created when missing)")
			updates := fs.Int("updates", ppoDefaultUpdates, fmt.Sprintf("total PPO updates the run should reach, 1..%d", rl.MaxUpdate))
			fs.IntVar(&c.Envs, "envs", 16, fmt.Sprintf("environments (games) in lock-step, 1..%d", ppoMaxEnvs))
			fs.IntVar(&c.Options.Steps, "steps", def.Steps, fmt.Sprintf("learner moves per environment per update, 1..%d (envs x steps <= %d)", ppoMaxSteps, ppoMaxBatch))
			fs.Float64Var(&c.Options.LR, "lr", def.LR, "Adam learning rate, (0, 1]")
			fs.Float64Var(&c.Options.Loss.EntropyCoef, "ent", def.Loss.EntropyCoef, "entropy bonus coefficient, [0, 10]")
			fs.IntVar(&c.Options.Epochs, "epochs", def.Epochs, fmt.Sprintf("passes over each rollout, 1..%d", ppoMaxEpochs))
			fs.IntVar(&c.Options.Minibatches, "minibatches", def.Minibatches, "minibatches per epoch, 1..envs x steps")
			fs.StringVar(&c.Opponent, "opponent", "random", "agent spec of the opponent (random, onestep, policy:net=F, ...; list: canopy agents)")
			fs.Uint64Var(&c.Seed, "seed", 1, "random seed (fresh weights, environments, sampling, opponent)")
			fs.StringVar(&c.Net, "net", "", "network file to start from (default: a fresh --preset)")
			fs.StringVar(&c.Preset, "preset", "", "architecture of a fresh network: "+strings.Join(nets.Presets(), ", ")+" (default "+ppoDefaultPreset+")")
			fs.IntVar(&c.Every, "checkpoint-every", 10, fmt.Sprintf("updates between checkpoints, 1..%d (the last update is always saved)", rl.MaxUpdate))
			resume := fs.Bool("resume", false, "continue the run in --out from its last checkpoint")
			asJSON := fs.Bool("json", false, "print the result as JSON")
			quiet := fs.Bool("quiet", false, "no progress line")
			return func(e *env, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				if strings.TrimSpace(*out) == "" {
					return usagef("--out is required: name the run directory")
				}
				if err := checkPPOFlags(c, *updates); err != nil {
					return err
				}
				if c.Net != "" && c.Preset != "" {
					return usagef("--net and --preset exclude each other: --net starts from existing weights, --preset builds fresh ones")
				}
				c.Updates = *updates
				if *resume {
					return runPPOResume(e, fs, c, *out, *asJSON, *quiet)
				}
				return runPPOFresh(e, c, *out, *asJSON, *quiet)
			}
		},
	})
}

// checkPPOFlags validates the numeric flags, naming the flag and its range.
func checkPPOFlags(c rl.RunConfig, updates int) error {
	o := c.Options
	switch {
	case updates < 1 || updates > rl.MaxUpdate:
		return usagef("--updates = %d, want 1..%d", updates, rl.MaxUpdate)
	case c.Envs < 1 || c.Envs > ppoMaxEnvs:
		return usagef("--envs = %d, want 1..%d", c.Envs, ppoMaxEnvs)
	case o.Steps < 1 || o.Steps > ppoMaxSteps:
		return usagef("--steps = %d, want 1..%d", o.Steps, ppoMaxSteps)
	case c.Envs*o.Steps > ppoMaxBatch:
		return usagef("--envs x --steps = %d samples per update, want at most %d", c.Envs*o.Steps, ppoMaxBatch)
	case !(o.LR > 0 && o.LR <= 1):
		return usagef("--lr = %g, want (0, 1]", o.LR)
	case !(o.Loss.EntropyCoef >= 0 && o.Loss.EntropyCoef <= 10):
		return usagef("--ent = %g, want [0, 10]", o.Loss.EntropyCoef)
	case o.Epochs < 1 || o.Epochs > ppoMaxEpochs:
		return usagef("--epochs = %d, want 1..%d", o.Epochs, ppoMaxEpochs)
	case o.Minibatches < 1 || o.Minibatches > c.Envs*o.Steps:
		return usagef("--minibatches = %d, want 1..%d (envs x steps)", o.Minibatches, c.Envs*o.Steps)
	case c.Every < 1 || c.Every > rl.MaxUpdate:
		return usagef("--checkpoint-every = %d, want 1..%d", c.Every, rl.MaxUpdate)
	case strings.TrimSpace(c.Opponent) == "":
		return usagef("--opponent is empty: give an agent spec such as random")
	}
	if err := o.Validate(); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// runPPOFresh starts a new run in dir.
func runPPOFresh(e *env, c rl.RunConfig, dir string, asJSON, quiet bool) error {
	g, err := newGame(c.Game)
	if err != nil {
		return err
	}
	var net *nets.Net
	if c.Net != "" {
		if net, err = nets.Load(c.Net); err != nil {
			return fmt.Errorf("--net: %v", unwrapPath(err))
		}
		c.Preset = net.Config().Preset
	} else {
		name := c.Preset
		if name == "" {
			name = ppoDefaultPreset
		}
		cfg, err := nets.Preset(name)
		if err != nil {
			return usagef("--preset: %v", err)
		}
		if cfg, err = cfg.ForGame(g); err != nil {
			return usagef("--preset: %v", err)
		}
		if net, err = nets.New(cfg, c.Seed); err != nil {
			return err
		}
		c.Preset = cfg.Preset
	}
	lock, err := runlock.Acquire(dir)
	if err != nil {
		return err
	}
	defer lock.Release()
	// Check that the net and the opponent fit before the run is recorded.
	p, closeOpp, err := newPPO(g, net, c, 0)
	if err != nil {
		return err
	}
	defer closeOpp()
	if err := rl.Start(dir, c); err != nil {
		if errors.Is(err, rl.ErrRunExists) {
			return fmt.Errorf("%v; pass --resume to continue it, or choose another --out", err)
		}
		return err
	}
	// Update 0: the starting weights, so that a run interrupted before its
	// first checkpoint can still be resumed.
	info := rl.CheckpointInfo{Game: g.Spec(), Preset: c.Preset, Opponent: c.Opponent}
	if _, err := rl.SaveCheckpoint(dir, net, info); err != nil {
		return err
	}
	if !quiet {
		fmt.Fprintf(e.Stderr, "ppo: %s against %s, %s, %d parameters; %d envs x %d steps = %d samples per update\n",
			g.Spec(), c.Opponent, describe(net.Config()), net.NumParams(), c.Envs, c.Options.Steps, c.Envs*c.Options.Steps)
	}
	return trainPPO(e, p, c, dir, info, asJSON, quiet)
}

// runPPOResume continues the run in dir.
func runPPOResume(e *env, fs *flag.FlagSet, c rl.RunConfig, dir string, asJSON, quiet bool) error {
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("--resume: %v", unwrapPath(err))
	}
	lock, err := runlock.Acquire(dir)
	if err != nil {
		return err
	}
	defer lock.Release()
	r, err := rl.Resume(dir)
	if err != nil {
		if errors.Is(err, rl.ErrNoRun) {
			return fmt.Errorf("%v; start the run without --resume", err)
		}
		return err
	}
	// A run keeps its settings: the flags given again must agree.
	stored := r.Config
	now := map[string][2]string{
		"game": {c.Game, stored.Game}, "net": {c.Net, stored.Net}, "preset": {c.Preset, stored.Preset},
		"opponent": {c.Opponent, stored.Opponent},
		"envs":     {fmt.Sprint(c.Envs), fmt.Sprint(stored.Envs)}, "steps": {fmt.Sprint(c.Options.Steps), fmt.Sprint(stored.Options.Steps)},
		"lr": {fmt.Sprint(c.Options.LR), fmt.Sprint(stored.Options.LR)}, "ent": {fmt.Sprint(c.Options.Loss.EntropyCoef), fmt.Sprint(stored.Options.Loss.EntropyCoef)},
		"epochs": {fmt.Sprint(c.Options.Epochs), fmt.Sprint(stored.Options.Epochs)}, "minibatches": {fmt.Sprint(c.Options.Minibatches), fmt.Sprint(stored.Options.Minibatches)},
		"seed": {fmt.Sprint(c.Seed), fmt.Sprint(stored.Seed)}, "checkpoint-every": {fmt.Sprint(c.Every), fmt.Sprint(stored.Every)},
	}
	for _, name := range ppoSettings {
		if v := now[name]; flagSet(fs, name) && v[0] != v[1] {
			return usagef("--%s %s differs from the run's %q: a resumed run keeps its settings (see %s/%s)", name, v[0], v[1], dir, rl.ConfigFile)
		}
	}
	if flagSet(fs, "updates") && c.Updates != stored.Updates {
		stored.Updates = c.Updates
		if err := rl.SaveRunConfig(dir, stored); err != nil {
			return err
		}
	}
	if stored.Updates < 1 || stored.Updates > rl.MaxUpdate {
		return fmt.Errorf("%s/%s: updates = %d, want 1..%d", dir, rl.ConfigFile, stored.Updates, rl.MaxUpdate)
	}
	if err := checkPPOFlags(stored, stored.Updates); err != nil {
		return fmt.Errorf("%s/%s: %v", dir, rl.ConfigFile, err)
	}
	g, err := newGame(stored.Game)
	if err != nil {
		return err
	}
	p, closeOpp, err := newPPO(g, r.Net, stored, r.Info.Updates)
	if err != nil {
		return err
	}
	defer closeOpp()
	if !quiet {
		fmt.Fprintf(e.Stderr, "ppo: resuming %s at update %d (%d samples) from %s; Adam restarts from zero moments\n",
			dir, r.Info.Updates, r.Info.Samples, r.Checkpoint)
	}
	return trainPPO(e, p, stored, dir, r.Info, asJSON, quiet)
}

// newPPO builds the environments, the opponent and the learner of a
// session starting after update start. The returned function closes the
// opponent.
func newPPO(g games.Game, net *nets.Net, c rl.RunConfig, start int) (*rl.PPO, func(), error) {
	seed := rl.SessionSeed(c.Seed, start)
	opp, closeOpp := rl.RandomOpponent(), func() {}
	if c.Opponent != "random" {
		a, err := agent.New(g, c.Opponent, seed+1)
		if err != nil {
			return nil, nil, usagef("--opponent: %v", err)
		}
		opp = rl.AgentOpponent(a)
		if cl, ok := a.(io.Closer); ok {
			closeOpp = func() { cl.Close() }
		}
	}
	env, err := rl.NewEnv(g, rl.EnvOptions{N: c.Envs, Opponent: opp, Seat: rl.SeatAlternate, Seed: seed})
	if err != nil {
		closeOpp()
		return nil, nil, err
	}
	o := c.Options
	o.Seed = seed
	p, err := rl.NewPPO(net, env, o)
	if err != nil {
		closeOpp()
		if c.Net != "" {
			return nil, nil, fmt.Errorf("--net %s: %v", c.Net, err)
		}
		return nil, nil, err
	}
	p.Updates = start
	return p, closeOpp, nil
}

// trainPPO runs the updates and reports the result.
func trainPPO(e *env, p *rl.PPO, c rl.RunConfig, dir string, info rl.CheckpointInfo, asJSON, quiet bool) error {
	start := p.Updates
	if start >= c.Updates {
		fmt.Fprintf(e.Stdout, "%s has %d updates already (target %d); pass a larger --updates to continue\n", dir, start, c.Updates)
		return nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	prog := newProgress(e.Stderr, "ppo", c.Updates-start, quiet)
	res, err := rl.Train(ctx, p, rl.TrainOptions{Dir: dir, Updates: c.Updates, Every: c.Every, Info: info,
		Progress: func(m rl.Metrics) {
			prog.update(m.Update-start, fmt.Sprintf("| update %d: win %.3f (%d games) loss %.4f kl %.4f clip %.3f entropy %.3f, %.0f samples/s",
				m.Update, m.WinRate, m.Episodes, m.Loss, m.ApproxKL, m.ClipFrac, m.Entropy, m.SamplesPerSec))
		}})
	if err != nil {
		if !quiet {
			fmt.Fprintln(e.Stderr)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted at update %d; run the same command with --resume to continue %s", p.Updates, dir)
		}
		return err
	}
	if asJSON {
		return writeJSON(e.Stdout, map[string]any{
			"dir": dir, "game": c.Game, "opponent": c.Opponent, "from_update": start, "checkpoint": res.Checkpoint,
			"info": res.Info, "last": res.Last, "samples": res.Samples, "seconds": res.Seconds, "samples_per_s": res.SamplesPerSec(),
		})
	}
	m := res.Last
	fmt.Fprintf(e.Stdout, "trained updates %d..%d of %s against %s (%d samples, %.0f samples/s): last update win rate %.3f over %d games, loss %.4f, entropy %.3f\n",
		start+1, m.Update, c.Game, c.Opponent, res.Samples, res.SamplesPerSec(), m.WinRate, m.Episodes, m.Loss, m.Entropy)
	fmt.Fprintf(e.Stdout, "wrote %s (%d updates, %d samples in all)\n", res.Checkpoint, res.Info.Updates, res.Info.Samples)
	return nil
}
