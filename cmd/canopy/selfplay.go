package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/internal/rundir"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search/engine"
	"github.com/canopy-go/canopy/selfplay"
	"github.com/canopy-go/canopy/spec"
)

func init() {
	register(&command{
		Name:    "selfplay",
		Summary: "generate AlphaZero training data: batched MCTS self-play into .npz shards",
		Usage:   "[--game G] [--net F] [--games N] [--trees T] [--sims S | --turn-search SPEC] [--out DIR] [--resume] [--backend B] [--seed S] [--json]",
		Help: `Plays --games games of PUCT self-play, --trees at a time, every leaf of every
tree evaluated by one batched network (Dirichlet noise at the root, moves
sampled from the visits for the first --tempplies plies, then the most
visited). The search options (--sims, --c, --fpu, --dir, --dirfrac,
--tempplies, --temp, --det, --leaves, --blend, --turns, --reuse) are the az
agent's, with the same names, ranges and meaning; four defaults are
self-play's declared overrides, since self-play explores where az plays its
best: --dir 1, --tempplies 8, --det 1 and --reuse (az: 0, 0, 8 and off;
each flag's help says why). --noreuse is the old spelling of --reuse=false. Each move is recorded as (observation from the mover's view,
visit distribution, final outcome for the mover) in sharded .npz files
(arrays obs, policy, legal, value, game_id, ply, root_q, and for games of 3 or more players
values: every player's return, mover first; numpy.load reads them) listed in
DIR/manifest.json.

Without --net the network is the built-in randomly initialised one: the
nets preset "connect4" for connect4 (64 channels, 5 residual blocks), and
for other games a small AlphaZero net (32 channels, 2 blocks) shaped from
the game's observation and action count; its weights come from seed 1, so
the manifest's sha256 identifies it. --backend random skips the network
altogether (uniform priors, value 0) to time the search alone.

Game i always uses seeds derived from (--seed, i): --resume continues an
interrupted run (same flags; --games may grow) and regenerates exactly the
games that are not in a shard yet. It first checks every shard the manifest
lists; a missing or damaged one is dropped (its file renamed NAME.bad) with
a warning naming the games it regenerates. Finished games are saved at least
every 64 games or 2 seconds; Ctrl-C, SIGTERM and SIGHUP stop after saving
them. One process at a time may use a directory (DIR/.lock).

Multi-action games (connect4d, strands): --turn-search SPEC searches whole
turns as study 004 (MegaZero, Algorithm 1) does, one search per turn with
mcts-v, mcts-bb or emcts (their agent options in SPEC; see canopy agents
--game connect4d), every leaf evaluated by --net through the same batched
engine, --trees games at a time. Each atomic action is recorded with the
search's policy history row as its target (Eq. 1: visit shares of the node
it was chosen from; Eq. 2 for emcts: visits of the mutations per position).
mcts-v and mcts-bb default to the study's sel=puct and draw every action
from the visits (tempplies = the game's length); the study adds no root
noise. The budget is per turn (the study: sims=250 for connect4d, 500 for
strands); the PUCT flags (--sims, --c, --dir, --tempplies, ...) and
--workers have no meaning with it. The manifest records the search.

Examples (under a minute each on 2 cores):
  canopy selfplay --out runs/selfplay-demo --resume
  canopy selfplay --game connect4d:d=5 --turn-search mcts-bb:sims=250 --games 16 --out runs/sp-c4d`,
		Setup: func(fs *flag.FlagSet) func(*env, []string) error {
			game, backend, asJSON, quiet := new(string), new(string), new(bool), new(bool)
			spec.Table{gameOption(game, "", "default: the game --net was made for, else connect4"), backendOption(backend, ""), jsonOption(asJSON, "the final manifest"), quietOption(quiet)}.Flags(fs)
			netFile := fs.String("net", "init", "network: a weights file (.safetensors), a shipped name, or init (the built-in net with random weights, seed 1)")
			var run selfplay.Config // --games, --trees, --seed, --turn-search
			runTable := run.Table()
			runTable.Reset()
			runTable.Register(fs)
			var st selfplay.Settings
			table := st.Table()
			table.Reset()
			table.Register(fs) // --sims, --c, --fpu, --dir, --dirfrac, --tempplies, ... (the az agent's names)
			// The flag names of earlier releases, kept as aliases.
			for old, key := range selfPlayAliases {
				aliasFlag(fs, old, key)
			}
			negAliasFlag(fs, "noreuse", "reuse")
			batch, workers := new(int), new(int)
			spec.Table{
				spec.Int("net-batch", batch, 0, 0, 1<<16, "largest network batch (0: the backend's preferred)"),
				spec.Int("workers", workers, 0, 0, 1<<12, "search goroutines (0: GOMAXPROCS)"),
			}.Flags(fs)
			aliasFlag(fs, "batch", "net-batch") // train's and zero's --batch is the training batch
			netCache := netCacheFlag(fs)
			out := fs.String("out", "runs/selfplay", "run directory (created when missing)")
			resume := fs.Bool("resume", false, "continue the run in --out (same flags; --games may grow)")
			var prof profiler
			prof.flags(fs)
			return func(e *env, args []string) error {
				if len(args) > 0 {
					return usagef("unexpected argument %q", args[0])
				}
				if *batch < 0 || *workers < 0 {
					return usagef("--net-batch and --workers must not be negative")
				}
				if err := st.Check(); err != nil {
					return usagef("--%v", err)
				}
				if strings.TrimSpace(*out) == "" {
					return usagef("--out is empty: name the run directory")
				}
				if err := prof.check(); err != nil {
					return usagef("%v", err)
				}
				g, err := newGame(netGameOr(*game, *netFile, "connect4"))
				if err != nil {
					return err
				}
				ts := ""
				if run.TurnSearch != "" {
					if err := turnSearchFlags(fs, append(table.Keys(), "workers")); err != nil {
						return err
					}
					if ts, err = selfplay.TurnSearchSpec(g, run.TurnSearch); err != nil {
						return usagef("--turn-search: %v", err)
					}
				}
				ref := *netFile
				if !flagSet(fs, "net") {
					ref = "" // init, or no network at all with --backend random
				}
				if err := checkSelfPlayMemory(g, ref, *backend, selfplay.Config{Settings: st, Trees: run.Trees, NumGames: run.NumGames, TurnSearch: ts}, *batch); err != nil {
					return err
				}
				nb, err := openNetwork(g, ref, *backend, *batch, e.Stderr)
				if err != nil {
					return err
				}
				if err := nb.cache(g, *netCache); err != nil {
					return err
				}
				// Every way a terminal or a job manager stops a process
				// lets the finished games be saved first.
				ctx, stop := signalContext()
				defer stop()
				rd, err := rundir.Open(*out)
				if err != nil {
					return err
				}
				defer rd.Close()
				if len(rd.Removed) > 0 {
					fmt.Fprintf(e.Stderr, "canopy selfplay: warning: %s: removed %d temporary files left by an interrupted write: %s\n", *out, len(rd.Removed), strings.Join(rd.Removed, ", "))
				}
				m := selfplay.Manifest{Game: g.Spec(), ObsShape: g.ObservationShape(), Actions: g.NumActions(),
					Network: nb.desc, NetworkSHA256: nb.sha, Backend: nb.be.Name(), Settings: st, TurnSearch: ts, Seed: run.Seed, Games: run.NumGames}
				o, err := selfplay.OpenOutput(*out, m, *resume)
				if err != nil {
					return err
				}
				for _, w := range o.Warnings() {
					fmt.Fprintf(e.Stderr, "canopy selfplay: warning: %s: %s\n", *out, w)
				}
				pending := len(o.Pending())
				eng, err := engine.New(g, nb.be, engine.Options{Workers: *workers, Leaves: st.Leaves, Batch: *batch,
					Slots: engine.SlotsFor(run.Trees, st.Leaves)})
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
					if ts != "" { // turn searchers evaluate through the engine but back up in their own trees
						return fmt.Sprintf("| %d positions, %.0f evals/s, batch fill %.0f%%", positions.Load(), float64(c.Evals)/el, 100*c.Batch.Fill)
					}
					return fmt.Sprintf("| %d positions, %.0f nodes/s, %.0f evals/s, batch fill %.0f%%",
						positions.Load(), float64(c.Nodes)/el, float64(c.Evals)/el, 100*c.Batch.Fill)
				}
				if err := prof.start(); err != nil {
					return err
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
				err = selfplay.Generate(ctx, eng, o, selfplay.Config{Settings: st, Seed: run.Seed, Trees: run.Trees, TurnSearch: ts}, func(r *selfplay.GameRecord) {
					done.Add(1)
					positions.Add(int64(r.Positions()))
				})
				if perr := prof.stop(); perr != nil && err == nil {
					err = fmt.Errorf("writing the profiles: %v", perr)
				}
				tick.Stop()
				close(stopTick)
				if pending > 0 && err == nil {
					prog.update(pending, line())
				}
				if err != nil {
					if ctx.Err() != nil {
						fmt.Fprintln(e.Stderr)
						return fmt.Errorf("interrupted (%s) after %d new games (saved in %s); rerun with --resume to finish", signalName(ctx), done.Load(), *out)
					}
					return err
				}
				mf := o.Manifest()
				if *asJSON {
					return writeJSON(e.Stdout, mf)
				}
				el := time.Since(t0).Seconds()
				c := eng.Counters()
				nodes := c.Nodes
				if ts != "" {
					nodes = mf.Totals.Nodes // every session's; a turn searcher counts its own
				}
				fmt.Fprintf(e.Stdout, "%s: %d games, %d positions in %d shards (%d new games this run; %.0f nodes/s, %.0f evals/s, mean batch %.1f)\n",
					*out, mf.Totals.Games, mf.Totals.Positions, len(mf.Shards), done.Load(), float64(nodes)/el, float64(c.Evals)/el, c.Batch.Mean)
				if mf.Totals.ResignOffGames > 0 {
					fmt.Fprintf(e.Stdout, "resignation: %d resigned, %d false positives in %d no-resign games\n",
						mf.Totals.Resigned, mf.Totals.FalseResigns, mf.Totals.ResignOffGames)
				}
				return nil
			}
		},
	})
}

// maxNetCache bounds --net-cache (2^26 positions: 2 GiB of Connect Four
// outputs).
const maxNetCache = 1 << 26

// netCacheFlag declares --net-cache (selfplay, zero, bench search).
func netCacheFlag(fs *flag.FlagSet) *int {
	n := new(int)
	spec.Table{spec.Int("net-cache", n, 0, 0, maxNetCache, "keep the network's outputs for up to N positions (rounded up to a power of two; 0 = none; memory N x (actions+1) x 4 bytes), so that a position reached again is not evaluated again")}.Flags(fs)
	return n
}

// cache puts a nets.Cache of n positions of g (--net-cache; 0 = none) in
// front of nb's backend, refusing a size out of range or one that would
// not fit in memory.
func (nb *netBackend) cache(g games.Game, n int) error {
	if err := checkNetCache(g, n); err != nil || n == 0 {
		return err
	}
	nb.be = nets.NewCache(nb.be, n)
	return nil
}

// checkNetCache refuses a --net-cache of n positions of g out of range or
// one that would not fit in memory.
func checkNetCache(g games.Game, n int) error {
	if n < 0 || n > maxNetCache {
		return usagef("--net-cache %d: want 0..%d positions", n, maxNetCache)
	}
	if n == 0 {
		return nil
	}
	var m memEstimate
	m.add("network cache", float64(nets.CacheBytes(g.NumActions(), n)))
	return m.check(fmt.Sprintf("--net-cache %d", n))
}

// selfPlayAliases maps the self-play flag names of earlier releases to the
// settings' keys they are kept as aliases of.
var selfPlayAliases = map[string]string{"dirichlet": "dir", "dirichlet-frac": "dirfrac", "temp-plies": "tempplies",
	"determinize": "det", "resign-off": "resignoff"}

// netBackend is the network a command evaluates with.
type netBackend struct {
	be   nets.Backend
	desc string // file or built-in description
	sha  string // sha256 of the weights, or "random"
}

// openNetwork opens --net (a weights file, a shipped name, "" or "init"
// for the built-in random-init net, "random" for no net: the random
// backend) on the --backend spec, and prints the backend choice to
// stderr when it was automatic.
func openNetwork(g games.Game, ref, backend string, batch int, stderr io.Writer) (netBackend, error) {
	obs := 1
	for _, d := range g.ObservationShape() {
		obs *= d
	}
	opts := nets.BackendOptions{MaxBatch: max(batch, 0)}
	if ref == "random" || (backend == "random" && ref == "") {
		return netBackend{be: nets.NewRandomBackend(obs, g.NumActions(), 0, opts), desc: "random backend (no network)", sha: "random"}, nil
	}
	net, src, err := nets.OpenNet(ref, g)
	if err != nil {
		return netBackend{}, netUsage(fmt.Errorf("--net: %w", err))
	}
	nb := netBackend{desc: src.Desc, sha: src.SHA256}
	var choice nets.Choice
	if nb.be, choice, err = nets.OpenBackendSpec(backend, net, opts); err != nil {
		return nb, backendError(backend, err)
	}
	if sp, _ := nets.ParseBackendSpec(backend); (sp.Name == "" || sp.Name == "auto") && stderr != nil {
		fmt.Fprintln(stderr, choice.String())
	}
	return nb, nil
}

// turnSearchFlags refuses the flags among names that were given on the
// command line, which have no meaning with --turn-search (the turn
// searcher's spec holds its search options).
func turnSearchFlags(fs *flag.FlagSet, names []string) error {
	var given []string
	fs.Visit(func(f *flag.Flag) {
		for _, n := range names {
			if to, _ := aliasOf(f); f.Name == n || to == n {
				given = append(given, "--"+f.Name)
				return
			}
		}
	})
	if len(given) > 0 {
		return usagef("%s: no meaning with --turn-search, whose spec sets the search (e.g. --turn-search mcts-bb:sims=250,c=2)", strings.Join(given, ", "))
	}
	return nil
}
