package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"time"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/selfplay"
)

func init() {
	register(&command{
		Name:    "selfplay",
		Summary: "generate AlphaZero training data: batched MCTS self-play into .npz shards",
		Usage:   "[--game G] [--net F] [--games N] [--trees T] [--sims S] [--out DIR] [--resume] [--backend B] [--seed S] [--json]",
		Help: `Plays --games games of PUCT self-play, --trees at a time, every leaf of every
tree evaluated by one batched network (Dirichlet noise at the root, moves
sampled from the visits for the first --temp-plies plies, then the most
visited). Each move is recorded as (observation from the mover's view,
visit distribution, final outcome for the mover) in sharded .npz files
(arrays obs, policy, value, game_id, ply; numpy.load reads them) listed in
DIR/manifest.json.

Without --net the network is the built-in randomly initialised one: the
nets preset "connect4" for connect4 (64 channels, 5 residual blocks), and
for other games a small AlphaZero net (32 channels, 2 blocks) shaped from
the game's observation and action count; its weights come from seed 1, so
the manifest's sha256 identifies it. --backend random skips the network
altogether (uniform priors, value 0) to time the search alone.

Game i always uses seeds derived from (--seed, i): --resume continues an
interrupted run (same flags; --games may grow) and regenerates exactly the
games that are not in a shard yet. Ctrl-C stops after flushing finished games.

Example (about a minute on 2 cores):
  canopy selfplay --out runs/selfplay-demo --resume`,
		Setup: func(fs *flag.FlagSet) func(*env, []string) error {
			game := fs.String("game", "connect4", "game spec")
			netFile := fs.String("net", "", "network weights (.safetensors); default: the built-in random-init net")
			backend := fs.String("backend", "auto", "network backend: auto, cpu, random, or another registered name")
			nGames := fs.Int("games", 64, "number of games")
			trees := fs.Int("trees", 32, "games played at once (trees searched concurrently)")
			st := selfplay.DefaultSettings()
			st.Sims, st.TempPlies = 48, 8
			fs.IntVar(&st.Sims, "sims", st.Sims, "simulations per move")
			fs.Float64Var(&st.C, "c", st.C, "PUCT exploration constant")
			fs.Float64Var(&st.DirichletA, "dirichlet", st.DirichletA, "root Dirichlet noise alpha (0 = none)")
			fs.Float64Var(&st.DirichletEps, "dirichlet-frac", st.DirichletEps, "fraction of noise in the root priors")
			fs.IntVar(&st.TempPlies, "temp-plies", st.TempPlies, "sample moves from visit counts for this many plies, then play the most visited")
			fs.Float64Var(&st.Resign, "resign", st.Resign, "resign when the best move's value is below -R (0 = never; 2-player games)")
			fs.Float64Var(&st.ResignOff, "resign-off", st.ResignOff, "fraction of games that never resign (measures false positives)")
			fs.IntVar(&st.Determinize, "determinize", st.Determinize, "sampled deals (trees) per move in hidden-information games")
			fs.IntVar(&st.Leaves, "leaves", st.Leaves, "leaves in flight per tree (virtual loss)")
			batch := fs.Int("batch", 0, "largest network batch (default: the backend's preferred)")
			workers := fs.Int("workers", 0, "search goroutines (default GOMAXPROCS)")
			out := fs.String("out", "runs/selfplay", "output directory")
			resume := fs.Bool("resume", false, "continue the run in --out")
			seed := fs.Uint64("seed", 1, "random seed")
			asJSON := fs.Bool("json", false, "print the final manifest totals as JSON")
			quiet := fs.Bool("quiet", false, "no progress line")
			return func(e *env, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				if *nGames < 1 || *trees < 1 || st.Sims < 1 {
					return usagef("--games, --trees and --sims must be at least 1")
				}
				if *batch < 0 || *workers < 0 {
					return usagef("--batch and --workers must not be negative")
				}
				if err := st.Check(); err != nil {
					return usagef("--%v", err)
				}
				g, err := newGame(*game)
				if err != nil {
					return err
				}
				nb, err := openNetwork(g, *netFile, *backend, *batch)
				if err != nil {
					return err
				}
				ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
				defer stop()
				m := selfplay.Manifest{Game: g.Spec(), ObsShape: g.ObservationShape(), Actions: g.NumActions(),
					Network: nb.desc, NetworkSHA256: nb.sha, Backend: nb.be.Name(), Settings: st, Seed: *seed, Games: *nGames}
				o, err := selfplay.OpenOutput(*out, m, *resume)
				if err != nil {
					return err
				}
				pending := len(o.Pending())
				eng, err := selfplay.NewEngine(g, nb.be, selfplay.EngineOptions{Workers: *workers, Leaves: st.Leaves, Batch: *batch,
					Slots: selfplay.SlotsFor(*trees, st.Leaves)})
				if err != nil {
					return err
				}
				defer eng.Close()
				var done, positions atomic.Int64
				prog := newProgress(e.Stderr, "selfplay", max(pending, 1), *quiet || pending == 0)
				t0 := time.Now()
				line := func() string {
					c := eng.Counters()
					el := time.Since(t0).Seconds()
					return fmt.Sprintf("| %d positions, %.0f nodes/s, %.0f evals/s, batch fill %.0f%%",
						positions.Load(), float64(c.Nodes)/el, float64(c.Evals)/el, 100*c.Batch.Fill)
				}
				tick := time.NewTicker(500 * time.Millisecond)
				stopTick := make(chan struct{})
				go func() {
					for {
						select {
						case <-tick.C:
							prog.update(int(done.Load()), line())
						case <-stopTick:
							return
						}
					}
				}()
				err = selfplay.Generate(ctx, eng, o, selfplay.Config{Settings: st, Seed: *seed, Trees: *trees}, func(r *selfplay.GameRecord) {
					done.Add(1)
					positions.Add(int64(r.Positions()))
				})
				tick.Stop()
				close(stopTick)
				if pending > 0 && err == nil {
					prog.update(pending, line())
				}
				if err != nil {
					if ctx.Err() != nil {
						fmt.Fprintln(e.Stderr)
						return fmt.Errorf("interrupted after %d new games (saved in %s); rerun with --resume to finish", done.Load(), *out)
					}
					return err
				}
				mf := o.Manifest()
				if *asJSON {
					return writeJSON(e.Stdout, mf)
				}
				el := time.Since(t0).Seconds()
				c := eng.Counters()
				fmt.Fprintf(e.Stdout, "%s: %d games, %d positions in %d shards (%d new games this run; %.0f nodes/s, %.0f evals/s, mean batch %.1f)\n",
					*out, mf.Totals.Games, mf.Totals.Positions, len(mf.Shards), done.Load(), float64(c.Nodes)/el, float64(c.Evals)/el, c.Batch.Mean)
				if mf.Totals.ResignOffGames > 0 {
					fmt.Fprintf(e.Stdout, "resignation: %d resigned, %d false positives in %d no-resign games\n",
						mf.Totals.Resigned, mf.Totals.FalseResigns, mf.Totals.ResignOffGames)
				}
				return nil
			}
		},
	})
}

// netBackend is the network a command evaluates with.
type netBackend struct {
	be   nets.Backend
	desc string // file or built-in description
	sha  string // sha256 of the weights, or "random"
}

// builtinConfig is the built-in network for g: the connect4 preset for
// connect4, else a small AlphaZero net shaped from the game.
func builtinConfig(g games.Game) (nets.Config, error) {
	if g.Spec() == "connect4" {
		c, err := nets.Preset(nets.DefaultPreset)
		if err != nil {
			return c, err
		}
		return c.ForGame(g)
	}
	c := nets.Config{Preset: "small", Head: nets.HeadAlphaZero, Channels: 32, Blocks: 2, ValueHidden: 32}
	return c.ForGame(g)
}

// openNetwork opens --net (a weights file; "" or "init" the built-in
// random-init net; "random" no net: the random backend) on --backend.
func openNetwork(g games.Game, file, backend string, batch int) (netBackend, error) {
	obs := 1
	for _, d := range g.ObservationShape() {
		obs *= d
	}
	opts := nets.BackendOptions{MaxBatch: max(batch, 0)}
	if file == "random" || (backend == "random" && file == "") {
		return netBackend{be: nets.NewRandomBackend(obs, g.NumActions(), 0, opts), desc: "random backend (no network)", sha: "random"}, nil
	}
	var net *nets.Net
	var nb netBackend
	if file == "" || file == "init" {
		cfg, err := builtinConfig(g)
		if err != nil {
			return nb, fmt.Errorf("no built-in network for %s: %v (pass --net FILE)", g.Spec(), err)
		}
		if net, err = nets.New(cfg, 1); err != nil {
			return nb, err
		}
		buf, err := net.Encode()
		if err != nil {
			return nb, err
		}
		sum := sha256.Sum256(buf)
		nb.desc, nb.sha = fmt.Sprintf("built-in %s net for %s, random init (seed 1)", cfg.Preset, g.Spec()), hex.EncodeToString(sum[:])
	} else {
		buf, err := os.ReadFile(file)
		if err != nil {
			return nb, fmt.Errorf("--net: %v", err)
		}
		if net, err = nets.Decode(buf); err != nil {
			return nb, fmt.Errorf("--net %s: %v (is it a canopy .safetensors file?)", file, err)
		}
		sum := sha256.Sum256(buf)
		nb.desc, nb.sha = file, hex.EncodeToString(sum[:])
	}
	if net.InputSize() != obs || net.PolicySize() != g.NumActions() {
		return nb, fmt.Errorf("--net %s takes %d inputs and %d actions; %s needs %d and %d (make one with `canopy net init --game %s`)",
			nb.desc, net.InputSize(), net.PolicySize(), g.Spec(), obs, g.NumActions(), g.Spec())
	}
	var err error
	if backend == "random" {
		nb.be = nets.NewRandomBackend(obs, g.NumActions(), 0, opts)
	} else if nb.be, err = nets.OpenBackend(backend, net, opts); err != nil {
		if strings.Contains(err.Error(), "unknown backend") {
			return nb, usageError{"--backend: " + err.Error()}
		}
		return nb, fmt.Errorf("--backend %s: %v", backend, err)
	}
	return nb, nil
}
