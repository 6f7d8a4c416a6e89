package main

import (
	"errors"
	"flag"
	"fmt"
	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/internal/rundir"
	"github.com/canopy-go/canopy/search/engine"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/plots"
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
var ppoSettings = []string{"game", "net", "preset", "opponent", "envs", "env-steps", "lr", "ent", "epochs", "minibatches", "seed", "checkpoint-every",
	"league", "greedy", "league-warmup", "legal-plane", "shaping", "ent-final", "ent-decay", "lr-anneal", "fresh-games", "wd"}

func init() {
	def := rl.DefaultOptions()
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
			var c rl.RunConfig
			c.Options = def
			fs.StringVar(&c.Game, "game", "connect4", "game spec (sequential games)")
			out := fs.String("out", "", "run directory (required; created when missing)")
			updates := fs.Int("updates", ppoDefaultUpdates, fmt.Sprintf("total PPO updates the run should reach, 1..%d", rl.MaxUpdate))
			fs.IntVar(&c.Envs, "envs", 16, fmt.Sprintf("environments (games) in lock-step, 1..%d", ppoMaxEnvs))
			fs.IntVar(&c.Options.Steps, "env-steps", def.Steps, fmt.Sprintf("learner moves per environment per update, 1..%d (envs x env-steps <= %d)", ppoMaxSteps, ppoMaxBatch))
			aliasFlag(fs, "steps", "env-steps") // train's and zero's --steps are SGD steps
			fs.Float64Var(&c.Options.LR, "lr", def.LR, "Adam learning rate, (0, 1]")
			fs.Float64Var(&c.Options.WeightDecay, "wd", def.WeightDecay, "Adam weight decay, torch.optim.Adam's coupled L2 (study 000: 1e-5), [0, 1]")
			fs.Float64Var(&c.Options.Loss.EntropyCoef, "ent", def.Loss.EntropyCoef, "entropy bonus coefficient, [0, 10]")
			fs.IntVar(&c.Options.Epochs, "epochs", def.Epochs, fmt.Sprintf("passes over each rollout, 1..%d", ppoMaxEpochs))
			fs.IntVar(&c.Options.Minibatches, "minibatches", def.Minibatches, "minibatches per epoch, 1..envs x env-steps")
			fs.StringVar(&c.Opponent, "opponent", "random", "agent spec of the opponent (random, onestep, policy:net=F, ...; list: canopy agents); with --league fixed, several separated by ';' are drawn uniformly per game")
			fs.Uint64Var(&c.Seed, "seed", 1, "random seed (fresh weights, environments, sampling, opponent)")
			fs.StringVar(&c.Net, "net", "", "network file to start from (default: a fresh --preset)")
			fs.StringVar(&c.Preset, "preset", "", "architecture of a fresh network: "+strings.Join(nets.Presets(), ", ")+", or the recurrent "+strings.Join(nets.RecurrentPresets(), ", ")+" (default "+ppoDefaultPreset+")")
			fs.IntVar(&c.Every, "checkpoint-every", 10, fmt.Sprintf("updates between checkpoints, 1..%d (the last update is always saved)", rl.MaxUpdate))
			fs.StringVar(&c.League, "league", "fixed", "opponents: fixed (--opponent in every game), fsp (study 002: 80% the latest weights, 20% one of the last 20 checkpoints), schedule (study 000: --greedy/random for 400 updates, then 70% one of the last 5 checkpoints, 15% --greedy, 15% random)")
			fs.StringVar(&c.Greedy, "greedy", "onestep", "agent spec of the greedy opponent of --league schedule")
			fs.IntVar(&c.Warmup, "league-warmup", 400, fmt.Sprintf("updates of --league schedule's warm-up against --greedy and random, 0..%d", rl.MaxUpdate))
			aliasFlag(fs, "warmup", "league-warmup") // train's --warmup is the learning rate's warm-up
			fs.BoolVar(&c.LegalPlane, "legal-plane", false, "give a fresh net study 002's third input plane, the legal moves")
			shaping := fs.Bool("shaping", false, "add the study's dense rewards for the game: on Sequence study 000's (+0.05 per unit of growth of the longest run, +0.1 for blocking an open four), elsewhere study 002's (+0.1 for blocking an immediate loss, +0.05 for creating an immediate win)")
			fs.Float64Var(&c.Options.EntropyFinal, "ent-final", 0, "entropy coefficient at the end of --ent-decay")
			entDecay := fs.Float64("ent-decay", 0, "fraction of --updates over which the entropy coefficient moves linearly from --ent to --ent-final (study 000: 0.4); 0 keeps --ent")
			lrAnneal := fs.Bool("lr-anneal", false, "anneal the learning rate linearly to 0 over --updates (the studies keep it constant)")
			fs.BoolVar(&c.Options.FreshGames, "fresh-games", true, "start new games at every update from streams of (seed, update), so that --resume continues exactly")
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
				if *shaping {
					g, err := newGame(c.Game)
					if err != nil {
						return err
					}
					c.Shaping = rl.StudyShaping(g)
				}
				if !(*entDecay >= 0 && *entDecay <= 1) {
					return usagef("--ent-decay = %g, want a fraction of --updates in [0, 1]", *entDecay)
				}
				if !(c.Options.EntropyFinal >= 0 && c.Options.EntropyFinal <= 10) {
					return usagef("--ent-final = %g, want [0, 10]", c.Options.EntropyFinal)
				}
				if *entDecay > 0 {
					c.Options.EntropyDecayUpdates = max(1, int(math.Round(*entDecay*float64(c.Updates))))
				} else if flagSet(fs, "ent-final") {
					return usagef("--ent-final needs --ent-decay, the fraction of the updates it takes to reach it")
				}
				if *lrAnneal {
					c.Options.AnnealUpdates = c.Updates
				}
				if c.Warmup < 0 || c.Warmup > rl.MaxUpdate {
					return usagef("--league-warmup = %d, want 0..%d", c.Warmup, rl.MaxUpdate)
				}
				switch c.League {
				case "fixed", "fsp", "schedule":
				default:
					return usagef("--league %q: want fixed, fsp or schedule", c.League)
				}
				if c.LegalPlane && c.Net != "" {
					return usagef("--legal-plane shapes a fresh net; a --net file brings its own input planes")
				}
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
		return usagef("--env-steps = %d, want 1..%d", o.Steps, ppoMaxSteps)
	case c.Envs*o.Steps > ppoMaxBatch:
		return usagef("--envs x --env-steps = %d samples per update, want at most %d", c.Envs*o.Steps, ppoMaxBatch)
	case !(o.LR > 0 && o.LR <= 1):
		return usagef("--lr = %g, want (0, 1]", o.LR)
	case !(o.WeightDecay >= 0 && o.WeightDecay <= 1):
		return usagef("--wd = %g, want [0, 1]", o.WeightDecay)
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
	if _, ok := nets.RecurrentPreset(c.Preset); ok {
		return runRecurrentPPOFresh(e, g, c, dir, asJSON, quiet)
	}
	var net *nets.Net
	if c.Net != "" {
		if net, err = nets.Load(c.Net); err != nil {
			return netUsage(fmt.Errorf("--net %s: %w", c.Net, unwrapPath(err)))
		}
		if err := nets.CheckGame(net, g, c.Net); err != nil {
			return usagef("--net: %v", err)
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
		cfg.ValuePlayers = 1 // PPO's critic is the mover's value: the scalar head for any player count
		if cfg, err = cfg.ForGame(g); err != nil {
			return usagef("--preset: %v", err)
		}
		if c.LegalPlane {
			enc := nets.Encoding{LegalPlane: true}
			if err := enc.Check(g); err != nil {
				return usagef("--legal-plane: %v", err)
			}
			cfg.InputPlanes++
			if err := cfg.Normalize(); err != nil {
				return usagef("--legal-plane: %v", err)
			}
		}
		if net, err = nets.New(cfg, c.Seed); err != nil {
			return err
		}
		c.Preset = cfg.Preset
	}
	rd, err := rundir.Open(dir)
	if err != nil {
		return err
	}
	defer rd.Close()
	// Check that the net and the opponent fit before the run is recorded.
	p, closeOpp, err := newPPO(g, net, c, dir, 0)
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
	if p.League != nil {
		if err := p.League.AddSnapshot(net); err != nil {
			return err
		}
	}
	if !quiet {
		fmt.Fprintf(e.Stderr, "ppo: %s against %s, %s, %d parameters; %d envs x %d steps = %d samples per update\n",
			g.Spec(), ppoOpponentName(c), describe(net.Config()), net.NumParams(), c.Envs, c.Options.Steps, c.Envs*c.Options.Steps)
	}
	return trainPPO(e, p, c, dir, info, asJSON, quiet)
}

// runPPOResume continues the run in dir.
func runPPOResume(e *env, fs *flag.FlagSet, c rl.RunConfig, dir string, asJSON, quiet bool) error {
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("--resume: %v", unwrapPath(err))
	}
	rd, err := rundir.Open(dir)
	if err != nil {
		return err
	}
	defer rd.Close()
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
		"envs":     {fmt.Sprint(c.Envs), fmt.Sprint(stored.Envs)}, "env-steps": {fmt.Sprint(c.Options.Steps), fmt.Sprint(stored.Options.Steps)},
		"lr": {fmt.Sprint(c.Options.LR), fmt.Sprint(stored.Options.LR)}, "ent": {fmt.Sprint(c.Options.Loss.EntropyCoef), fmt.Sprint(stored.Options.Loss.EntropyCoef)},
		"epochs": {fmt.Sprint(c.Options.Epochs), fmt.Sprint(stored.Options.Epochs)}, "minibatches": {fmt.Sprint(c.Options.Minibatches), fmt.Sprint(stored.Options.Minibatches)},
		"seed": {fmt.Sprint(c.Seed), fmt.Sprint(stored.Seed)}, "checkpoint-every": {fmt.Sprint(c.Every), fmt.Sprint(stored.Every)},
		"league": {c.League, leagueName(stored.League)}, "greedy": {c.Greedy, stored.Greedy}, "league-warmup": {fmt.Sprint(c.Warmup), fmt.Sprint(stored.Warmup)},
		"legal-plane": {fmt.Sprint(c.LegalPlane), fmt.Sprint(stored.LegalPlane)},
		"shaping":     {fmt.Sprint(c.Shaping != rl.Shaping{}), fmt.Sprint(stored.Shaping != rl.Shaping{})},
		"ent-final":   {fmt.Sprint(c.Options.EntropyFinal), fmt.Sprint(stored.Options.EntropyFinal)},
		"ent-decay":   {fmt.Sprint(c.Options.EntropyDecayUpdates), fmt.Sprint(stored.Options.EntropyDecayUpdates)},
		"lr-anneal":   {fmt.Sprint(c.Options.AnnealUpdates), fmt.Sprint(stored.Options.AnnealUpdates)},
		"fresh-games": {fmt.Sprint(c.Options.FreshGames), fmt.Sprint(stored.Options.FreshGames)},
		"wd":          {fmt.Sprint(c.Options.WeightDecay), fmt.Sprint(stored.Options.WeightDecay)},
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
	var p *rl.PPO
	var closeOpp func()
	if r.Rec != nil {
		p, closeOpp, err = newRecurrentPPO(g, r.Rec, stored, dir, r.Info.Updates)
	} else {
		p, closeOpp, err = newPPO(g, r.Net, stored, dir, r.Info.Updates)
	}
	if err != nil {
		return err
	}
	defer closeOpp()
	adam := "Adam restarts from zero moments (the checkpoint has no optimizer state)"
	if r.Adam != nil {
		if err := p.SetAdamState(*r.Adam); err != nil {
			return fmt.Errorf("%s: %v", rl.AdamPath(dir, r.Info.Updates), err)
		}
		adam = fmt.Sprintf("Adam restored at step %d", r.Adam.Step)
	}
	if !quiet {
		fmt.Fprintf(e.Stderr, "ppo: resuming %s at update %d (%d samples) from %s; %s\n",
			dir, r.Info.Updates, r.Info.Samples, r.Checkpoint, adam)
	}
	return trainPPO(e, p, stored, dir, r.Info, asJSON, quiet)
}

// runRecurrentPPOFresh starts a new run of study 000's recurrent PPO in
// dir: a fresh CNN-LSTM from a recurrent preset, the game's feature
// encoding, the opponents of --league.
func runRecurrentPPOFresh(e *env, g games.Game, c rl.RunConfig, dir string, asJSON, quiet bool) error {
	cfg, _ := nets.RecurrentPreset(c.Preset)
	cfg, err := cfg.ForGame(g)
	if err != nil {
		return usagef("--preset %s: %v", c.Preset, err)
	}
	if err := checkRecurrentFlags(c); err != nil {
		return err
	}
	net, err := nets.NewRecurrent(cfg, c.Seed)
	if err != nil {
		return err
	}
	rd, err := rundir.Open(dir)
	if err != nil {
		return err
	}
	defer rd.Close()
	p, closeAll, err := newRecurrentPPO(g, net, c, dir, 0)
	if err != nil {
		return err
	}
	defer closeAll()
	o := p.Opt
	if err := rl.Start(dir, c); err != nil {
		if errors.Is(err, rl.ErrRunExists) {
			return fmt.Errorf("%v; pass --resume to continue it, or choose another --out", err)
		}
		return err
	}
	info := rl.CheckpointInfo{Game: g.Spec(), Preset: c.Preset, Opponent: c.Opponent}
	if _, err := rl.SaveRecurrentCheckpoint(dir, net, info); err != nil {
		return err
	}
	if p.League != nil {
		if err := p.League.AddRecurrentSnapshot(net); err != nil {
			return err
		}
	}
	if !quiet {
		fmt.Fprintf(e.Stderr, "ppo: %s against %s, recurrent %s (CNN %v, LSTM %d, %d x %d factored policy), %d parameters; %d envs x %d steps = %d samples per update, BPTT over %d steps\n",
			g.Spec(), ppoOpponentName(c), c.Preset, cfg.ConvChannels, cfg.Hidden, cfg.Cards, cfg.Squares, net.NumParams(), c.Envs, o.Steps, c.Envs*o.Steps, o.Steps)
	}
	return trainPPO(e, p, c, dir, info, asJSON, quiet)
}

// checkRecurrentFlags reports the settings a recurrent run does not take.
func checkRecurrentFlags(c rl.RunConfig) error {
	switch {
	case c.LegalPlane:
		return usagef("--legal-plane: the recurrent preset %s reads the game's features, which have no legal-move plane", c.Preset)
	case c.Options.Minibatches > c.Envs:
		return usagef("--minibatches = %d: a recurrent learner's minibatches are groups of whole environments, want at most --envs (%d)", c.Options.Minibatches, c.Envs)
	}
	return nil
}

// newRecurrentPPO builds the environments (the game's feature encoding),
// the opponents and the recurrent learner of a session of the run in dir
// starting after update start; a league's pool of recurrent snapshots is
// refilled from the run's checkpoints. The returned function closes the
// opponents and the environments.
func newRecurrentPPO(g games.Game, net *nets.Recurrent, c rl.RunConfig, dir string, start int) (*rl.PPO, func(), error) {
	if err := checkRecurrentFlags(c); err != nil {
		return nil, nil, err
	}
	seed := sessionSeed(c, start)
	ops, err := newOpponents(g, c, seed, dir, start, ppoLearner{rec: net})
	if err != nil {
		return nil, nil, err
	}
	env, err := rl.NewEnv(g, rl.EnvOptions{N: c.Envs, Seat: rl.SeatAlternate, Seed: seed, Encoding: nets.Encoding{Features: true},
		Shaping: c.Shaping, Opponents: ops.opponents})
	if err != nil {
		ops.close()
		return nil, nil, err
	}
	closeAll := func() { env.Close(); ops.close() }
	o := c.Options
	o.Seed = seed
	p, err := rl.NewRecurrentPPO(net, env, o)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	p.Updates = start
	p.League = ops.league
	return p, closeAll, nil
}

// sessionSeed is the seed of a session of run c starting after update
// start.
func sessionSeed(c rl.RunConfig, start int) uint64 {
	if c.Options.FreshGames {
		return c.Seed // every update derives its own streams (rl.UpdateSeed)
	}
	return rl.SessionSeed(c.Seed, start)
}

// ppoOpponentName names run c's opponents: --opponent, or the league.
func ppoOpponentName(c rl.RunConfig) string {
	if l := leagueName(c.League); l != "fixed" {
		return "league " + l
	}
	return c.Opponent
}

// leagueName is a stored league setting ("" in runs from before leagues
// is "fixed").
func leagueName(l string) string {
	if l == "" {
		return "fixed"
	}
	return l
}

// ppoLearner is the net a session trains: exactly one of net (plain) and
// rec (study 000's recurrent CNN-LSTM) is set.
type ppoLearner struct {
	net *nets.Net
	rec *nets.Recurrent
}

// newLeague returns a league of snapshots shaped like the learner.
func (l ppoLearner) newLeague(g games.Game, lo rl.LeagueOptions) (*rl.League, error) {
	if l.rec != nil {
		return rl.NewRecurrentLeague(g, l.rec, lo)
	}
	return rl.NewLeague(g, l.net, lo)
}

// addSnapshot adds the checkpoint at path to the league's pool.
func (l ppoLearner) addSnapshot(league *rl.League, path string) error {
	if l.rec != nil {
		snap, _, err := rl.LoadRecurrentCheckpoint(path)
		if err != nil {
			return err
		}
		return league.AddRecurrentSnapshot(snap)
	}
	snap, _, err := rl.LoadCheckpoint(path)
	if err != nil {
		return err
	}
	return league.AddSnapshot(snap)
}

// ppoOpponents are a session's opponents: what the environments pick
// from, the league among them (nil for one fixed opponent), and what
// close releases.
type ppoOpponents struct {
	opponents rl.Opponents
	league    *rl.League
	closers   []io.Closer
}

func (o *ppoOpponents) close() {
	for _, cl := range o.closers {
		cl.Close()
	}
}

// newOpponents builds the opponents of run c (--league, --opponent,
// --greedy) for a session starting after update start, refilling a
// league's pool from the checkpoints in dir.
func newOpponents(g games.Game, c rl.RunConfig, seed uint64, dir string, start int, learner ppoLearner) (_ *ppoOpponents, err error) {
	ops := &ppoOpponents{}
	defer func() {
		if err != nil {
			ops.close() // the agents made before the error
		}
	}()
	// One engine pool (the auto backend) for every agent opponent of the
	// run, so that opponents on one network share its engine.
	aenv := engine.WithPool(agent.Env{})
	agentOpp := func(flag, spec string, seed uint64) (rl.Opponent, error) {
		if spec == "random" {
			return rl.RandomOpponent(), nil
		}
		o, err := rl.NewSpecOpponent(g, spec, aenv.WithSeed(seed))
		if err != nil {
			return nil, usagef("--%s: %v", flag, err)
		}
		ops.closers = append(ops.closers, o)
		return o, nil
	}
	var pool int
	switch leagueName(c.League) {
	case "fixed":
		specs := strings.Split(c.Opponent, ";")
		if len(specs) == 1 {
			opp, err := agentOpp("opponent", c.Opponent, seed+1)
			if err != nil {
				return nil, err
			}
			ops.opponents = rl.Fixed{Name: c.Opponent, Opponent: opp}
			return ops, nil
		}
		// Several agents: each game against one of them, uniformly.
		var mix rl.Mixture
		seen := map[string]bool{}
		for i, spec := range specs {
			spec = strings.TrimSpace(spec)
			if spec == "" || seen[spec] {
				return nil, usagef("--opponent %q: want distinct, non-empty agent specs separated by ';'", c.Opponent)
			}
			seen[spec] = true
			opp, err := agentOpp("opponent", spec, seed+1+uint64(i))
			if err != nil {
				return nil, err
			}
			mix.Fixed = append(mix.Fixed, rl.WeightedOpponent{Name: spec, Opponent: opp, Weight: 1})
		}
		if ops.league, err = learner.newLeague(g, rl.LeagueOptions{Main: mix}); err != nil {
			return nil, err
		}
	case "fsp", "schedule":
		lo := rl.Study002League()
		if c.League == "schedule" {
			greedy, err := agentOpp("greedy", c.Greedy, seed+1)
			if err != nil {
				return nil, err
			}
			lo = rl.Study000League(greedy, rl.RandomOpponent())
			lo.WarmupUpdates = c.Warmup
		}
		if ops.league, err = learner.newLeague(g, lo); err != nil {
			return nil, err
		}
		pool = lo.PoolSize
	default:
		return nil, fmt.Errorf("league %q: want fixed, fsp or schedule", c.League)
	}
	ops.opponents = ops.league
	if start > 0 && pool > 0 {
		paths, err := rl.PoolCheckpoints(dir, start, c.Every, pool)
		if err != nil {
			return nil, err
		}
		for _, path := range paths {
			if err := learner.addSnapshot(ops.league, path); err != nil {
				return nil, fmt.Errorf("league pool: %v", err)
			}
		}
	}
	return ops, nil
}

// newPPO builds the environments, the opponents and the learner of a
// session of the run in dir starting after update start; a league's pool
// is refilled from the run's checkpoints. The returned function closes
// the opponents.
func newPPO(g games.Game, net *nets.Net, c rl.RunConfig, dir string, start int) (*rl.PPO, func(), error) {
	seed := sessionSeed(c, start)
	enc, err := nets.EncodingFor(g, net.InputSize())
	if err != nil {
		if c.Net != "" {
			return nil, nil, usagef("--net %s: %v", c.Net, err) // a network of another game
		}
		return nil, nil, err
	}
	ops, err := newOpponents(g, c, seed, dir, start, ppoLearner{net: net})
	if err != nil {
		return nil, nil, err
	}
	env, err := rl.NewEnv(g, rl.EnvOptions{N: c.Envs, Seat: rl.SeatAlternate, Seed: seed, Encoding: enc, Shaping: c.Shaping,
		Opponents: ops.opponents})
	if err != nil {
		ops.close()
		return nil, nil, err
	}
	o := c.Options
	o.Seed = seed
	p, err := rl.NewPPO(net, env, o)
	if err != nil {
		ops.close()
		if c.Net != "" {
			return nil, nil, fmt.Errorf("--net %s: %v", c.Net, err)
		}
		return nil, nil, err
	}
	p.Updates = start
	p.League = ops.league
	return p, ops.close, nil
}

// trainPPO runs the updates and reports the result.
func trainPPO(e *env, p *rl.PPO, c rl.RunConfig, dir string, info rl.CheckpointInfo, asJSON, quiet bool) error {
	start := p.Updates
	if start >= c.Updates {
		fmt.Fprintf(e.Stdout, "%s has %d updates already (target %d); pass a larger --updates to continue\n", dir, start, c.Updates)
		return nil
	}
	ctx, stop := signalContext()
	defer stop()
	prog := newProgress(e.Stderr, "ppo", c.Updates-start, quiet)
	to := rl.TrainOptions{Dir: dir, Updates: c.Updates, Every: c.Every, Info: info,
		Progress: func(m rl.Metrics) {
			prog.update(m.Update-start, fmt.Sprintf("| update %d: win %.3f (%d games%s) loss %.4f kl %.4f clip %.3f entropy %.3f, %.0f samples/s",
				m.Update, m.WinRate, m.Episodes, kindRates(m), m.Loss, m.ApproxKL, m.ClipFrac, m.Entropy, m.SamplesPerSec))
		}}
	if p.League != nil {
		to.Snapshot, to.SnapshotRecurrent = p.League.AddSnapshot, p.League.AddRecurrentSnapshot
	}
	res, err := rl.Train(ctx, p, to)
	if perr := writePPOPlots(dir, c); perr != nil && !quiet {
		fmt.Fprintf(e.Stderr, "ppo: plots: %v\n", perr)
	}
	if err != nil {
		if !quiet {
			fmt.Fprintln(e.Stderr)
		}
		if ctx.Err() != nil {
			return interrupted(ctx, fmt.Sprintf("saved at update %d; run the same command with --resume to continue %s", p.Updates, dir))
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
		start+1, m.Update, c.Game, ppoOpponentName(c), res.Samples, res.SamplesPerSec(), m.WinRate, m.Episodes, m.Loss, m.Entropy)
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
	_, err = plots.WriteFiles(filepath.Clean(dir), plots.PPOFigures(c.Game, ppoOpponentName(c), ms))
	return err
}
