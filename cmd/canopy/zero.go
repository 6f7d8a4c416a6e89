package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/connect4/solver"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search/engine"
	"github.com/canopy-go/canopy/spec"
	"github.com/canopy-go/canopy/zero"
)

// zeroFlags binds the run configuration's flags to c (zero.Config.Table:
// self-play's and training's options by their names, with the loop's
// declared defaults), and the old spellings of self-play's flags.
func zeroFlags(fs *flag.FlagSet, c *zero.Config) {
	c.Table().Register(fs)
	for old, key := range selfPlayAliases {
		aliasFlag(fs, old, key)
	}
	negAliasFlag(fs, "noreuse", "reuse")
}

func init() {
	register(&command{
		Name:    "zero",
		Summary: "AlphaZero loop: self-play, train, evaluate, repeat, in one resumable run directory with metrics and plots",
		Usage:   "[--game G] [--out DIR] [--iterations N | --more K] [--games N] [--sims S | --turn-search SPEC] [--steps N] [...]",
		Help: `Runs the AlphaZero loop in --out: each iteration plays --games self-play
games with the current network (PUCT, root noise, the az agent's search
options: --sims, --c, --dir, --tempplies, ...), trains the network for
--steps steps on the last --window-iters iterations' positions (AlphaZero
loss, SGD with momentum, symmetry augmentation, a Polyak average with tau
--polyak that self-play and evaluation use), then evaluates it: games
against the previous network and the --baselines (in a game of P > 2
players, against P-1 copies of each, scored by the share of copies it
finishes ahead of), a rolling Elo over every evaluation game, and for connect4 the share of optimal moves on
solver-labelled positions (network alone and with search). Results go to
DIR/metrics.jsonl and DIR/plots/*.svg|png after every iteration.

Every step writes atomically and is skipped when done: after an interruption
(Ctrl-C, a crash, kill -9) the same command continues where it stopped.
A run keeps the settings it started with (DIR/zero.json); flags given again
must agree, except --iterations and --more, which extend it, and
--eval-policy-games, which changes only what later evaluations play.
A self-play shard training cannot read (damaged on disk, or written with
NaN by an older version) stops the run, naming it; --skip-bad trains
without it instead, and the iteration's metrics name what was skipped.

With --nats, self-play is played by ` + "`canopy worker`" + ` processes (any number, on
any machines) through NATS JetStream; --nats embedded starts the server in
this process (store in DIR/nats, listening on --nats-listen; beyond
loopback only with credentials and TLS; --nats-worker-user gives the
workers a user confined to their work). One trainer per --nats-name: a
second run's trainer is refused, naming the first. --async runs the
pipeline asynchronously: iteration i+1's games are played (by networks
i-1 and i, each game recording its own) while iteration i trains, on
--replay-ratio samples per new position instead of --steps, and is
evaluated, its evaluation games played by the workers too (--ahead K
lets self-play run K iterations ahead of training); the workers rarely
wait, but which network plays which game
depends on timing (the default, synchronous loop is reproducible game
for game). See docs/DISTRIBUTED.md.

Multi-action games (connect4d, strands): --turn-search SPEC plays self-play
as study 004's MegaZero does (Algorithm 1): one whole-turn search per turn
(mcts-v, mcts-bb or emcts with their agent options; the budget is per turn,
the study's 250 for connect4d and 500 for strands), every leaf evaluated by
the current network, each atomic action recorded with the search's policy
history as its target (see canopy selfplay --help). The PUCT flags (--sims,
--c, --dir, ...) have no meaning with it, and it is not played by fleet
workers (--nats). --qmix works with mcts-v and mcts-bb, which record the
value of the node each action was chosen from (the mean Q of its
children for the mover); emcts records none. A turn search's blend=W
(Canopy's, default 1) values each leaf W x the network's value + (1-W) x a
random rollout of turns=T player turns (default 0: to the end), study
000's leaf value, for games whose outcome the young network cannot read
yet (Strands, docs/RESULTS.md section 8). Evaluation is unchanged (az agents with --eval-sims
per action).

Examples (a few minutes an iteration on 2 cores; run them again to continue):
  canopy zero --out runs/zero-demo --more 1
  canopy zero --game connect4d:d=5 --turn-search emcts:sims=250 --games 64 --trees 16 \
    --eval-games 10 --baselines 'random;onestep' --out runs/c4d-emcts --more 1`,
		Setup: func(fs *flag.FlagSet) func(*env, []string) error {
			cfg := zero.DefaultConfig("connect4")
			zeroFlags(fs, &cfg)
			out := fs.String("out", "runs/zero", "run directory")
			iters, more := new(int), new(int)
			spec.Table{
				spec.Int("iterations", iters, 0, 0, 1<<20, "iterations the run should have when this command ends (0: 3 for a new run)"),
				spec.Int("more", more, 0, 0, 1<<20, "run this many iterations beyond those finished"),
			}.Flags(fs)
			quiet := fs.Bool("quiet", false, "no progress line (the live status line)")
			netCache := netCacheFlag(fs)
			overlapEval := new(bool)
			spec.Table{spec.Bool("overlap-eval", overlapEval, true, "evaluate each iteration while the next one plays and trains (in-process self-play, no --gate): the same results, sooner on a machine whose cores the loop's phases leave idle (--overlap-eval=false: one phase after the other)")}.Flags(fs)
			skipBad := fs.Bool("skip-bad", false, "skip unreadable or inconsistent shards with a warning (in training's window; named in the iteration's metrics) instead of stopping the run")
			var nf zeroFleetFlags
			nf.register(fs)
			score := fs.String("score-net", "", "only score this Connect Four network on the solver-labelled set (--solver-positions, --solver-sims) and exit, with the shares by ply range and by the positions' value (won, drawn)")
			aliasFlag(fs, "score", "score-net") // sequence-greedy's score= is a scoring rule
			var prof profiler
			prof.flags(fs)
			return func(e *env, args []string) (err error) {
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				if strings.TrimSpace(*out) == "" {
					return usagef("--out is empty: name the run directory")
				}
				if err := prof.check(); err != nil {
					return usagef("%v", err)
				}
				// The profiles cover the whole command (a loop's self-play,
				// training and evaluation, or --score-net's scoring).
				if err := prof.start(); err != nil {
					return err
				}
				defer func() {
					if perr := prof.stop(); perr != nil && err == nil {
						err = fmt.Errorf("writing the profiles: %v", perr)
					}
				}()
				if *score != "" {
					aenv, err := agentEnv(cfg.Backend, e.Stderr)
					if err != nil {
						return err
					}
					pool, _ := agent.Lookup[*engine.Pool](aenv)
					t0 := time.Now()
					rep, err := zero.SolverScore(context.Background(), pool, solverReference(), *score, cfg.SolverPositions, cfg.SolverSims)
					if err != nil {
						return netUsage(err)
					}
					fmt.Fprintf(e.Stdout, "%s on %d solver-labelled positions: network alone %.1f%% optimal, with %d simulations %.1f%% (random moves %.1f%%; %.0f s)\n",
						*score, rep.Positions, 100*rep.Policy, rep.Sims, 100*rep.Search, 100*rep.Random, time.Since(t0).Seconds())
					tw := tabwriter.NewWriter(e.Stdout, 0, 0, 2, ' ', 0)
					fmt.Fprintf(tw, "group\tpositions\tnetwork alone\twith search\trandom moves\n")
					for _, gr := range rep.Groups {
						fmt.Fprintf(tw, "%s\t%d\t%.1f%%\t%.1f%%\t%.1f%%\n", gr.Name, gr.Positions, 100*gr.Policy, 100*gr.Search, 100*gr.Random)
					}
					return stdoutError(tw.Flush())
				}
				if *iters < 0 || *more < 0 || (*iters > 0 && *more > 0) {
					return usagef("--iterations and --more take a positive count, and only one of them")
				}
				set := map[string]bool{}
				fs.Visit(func(f *flag.Flag) {
					if to, ok := aliasOf(f); ok {
						set[to] = true // an old spelling sets its flag
					} else {
						set[f.Name] = true
					}
				})
				// A run that exists keeps its settings: start from them and
				// apply only the flags given now (zero.Run rejects changes).
				stored, ok, err := zero.LoadConfig(*out)
				if err != nil {
					return err
				}
				// A run that failed before producing anything keeps no
				// settings: the corrected command starts afresh in it.
				ok = ok && zero.ProducedAnything(*out)
				req := cfg
				if ok {
					req = stored
					fs2 := flag.NewFlagSet("zero", flag.ContinueOnError)
					zeroFlags(fs2, &req)
					for name := range set {
						if f := fs2.Lookup(name); f != nil {
							if err := fs2.Set(name, fs.Lookup(name).Value.String()); err != nil {
								return usagef("--%s: %v", name, err)
							}
						}
					}
				}
				fl, err := nf.fleet()
				if err != nil {
					return err
				}
				done, err := zero.Finished(*out)
				if err != nil {
					return err
				}
				switch {
				case *more > 0:
					req.Iterations = done + *more
				case *iters > 0:
					req.Iterations = *iters
				case ok:
					req.Iterations = max(stored.Iterations, done)
				}
				if !ok && req.Async && req.ReplayRatio == 0 {
					req.ReplayRatio = zero.DefaultReplayRatio
				}
				if req.Async && fl == nil {
					return usagef("--async needs --nats: the asynchronous pipeline has workers play while this process trains")
				}
				if req.TurnSearch != "" {
					var keys []string
					for _, o := range req.SelfPlay.Table() {
						keys = append(keys, o.Key)
					}
					if err := turnSearchFlags(fs, keys); err != nil {
						return err
					}
				}
				if !ok {
					if err := req.Check(); err != nil {
						return usagef("%v", err)
					}
					// A --net that names no network, or one of another
					// game, is refused before the run starts.
					if g, err := games.New(req.Game); err == nil {
						if _, _, err := nets.OpenNet(req.Net, g); err != nil {
							return netUsage(fmt.Errorf("--net: %w", err))
						}
					}
				}
				if err := checkZeroMemory(req); err != nil {
					return err
				}
				if *netCache != 0 {
					if fl != nil {
						return usagef("--net-cache %d with --nats: fleet workers play the self-play, and they keep no cache; drop one of the two", *netCache)
					}
					g, err := games.New(req.Game)
					if err != nil {
						return usagef("%v", err)
					}
					if err := checkNetCache(g, *netCache); err != nil {
						return err
					}
				}
				aenv, err := agentEnv(req.Backend, nil)
				if err != nil {
					return err
				}
				ctx, stop := signalContext()
				defer stop()
				st := newStatus(e.Stderr, *quiet)
				err = zero.Run(ctx, *out, req, zero.Options{Log: st.lines(), Status: st.set, Fleet: fl, Agents: aenv, SkipBad: *skipBad, NetCache: *netCache, Reference: solverReference(), OverlapEval: *overlapEval})
				st.clear()
				if err != nil && ctx.Err() != nil {
					return interrupted(ctx, "run the same command to continue "+*out)
				}
				return err
			}
		},
	})
}

// solverReference is zero's reference set for Connect Four: the
// solver-labelled positions of games/connect4/solver, scored each
// iteration (--solver-positions) and by --score-net.
func solverReference() *zero.Reference {
	return &zero.Reference{Game: solver.LabelsGame, Positions: func() ([]zero.Labelled, error) {
		labels, err := solver.Labels()
		if err != nil {
			return nil, err
		}
		out := make([]zero.Labelled, len(labels))
		for i, l := range labels {
			out[i] = l
		}
		return out, nil
	}}
}
