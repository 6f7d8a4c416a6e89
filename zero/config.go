package zero

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/internal/rundir"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search"
	"github.com/canopy-go/canopy/search/engine"
	"github.com/canopy-go/canopy/selfplay"
	"github.com/canopy-go/canopy/spec"
	"github.com/canopy-go/canopy/train"
)

// ConfigFormat tags zero.json files.
const ConfigFormat = "canopy-zero/1"

// ConfigName is the run configuration's file name in a run directory.
const ConfigName = "zero.json"

// Config is one AlphaZero run: what to learn, how each iteration's
// self-play, training and evaluation go. It is written to the run
// directory when the run starts; a resumed run uses the stored copy, and
// only Iterations may change.
type Config struct {
	Format string `json:"format"`
	Game   string `json:"game"`
	// Net is the starting network: "init" (the game's built-in net with
	// random weights), a shipped name or a weights file.
	Net string `json:"net"`
	// Iterations is the number of iterations to complete (the run can
	// be continued with a larger number).
	Iterations int `json:"iterations"`

	// Self-play: Games games per iteration, Trees at a time, with the
	// Polyak-averaged net of the previous iteration (or the raw net when
	// training keeps no average).
	Games    int               `json:"games"`
	Trees    int               `json:"trees"`
	SelfPlay selfplay.Settings `json:"selfplay"`
	// TurnSearch, when set, plays self-play with whole-turn searches
	// (selfplay.Config.TurnSearch: mcts-v, mcts-bb or emcts on the
	// network, study 004's MegaZero loop) instead of PUCT per atomic
	// action; SelfPlay then stays at its defaults (its options have no
	// meaning). Train.QMix needs a turn search that values positions
	// (mcts-v, mcts-bb: selfplay.TurnSearchValues).
	// Multi-action games only; not with a fleet.
	TurnSearch string `json:"turn_search,omitempty"`

	// Training: Train.Steps steps per iteration on the replay window of
	// the last WindowIters iterations' self-play (0 = all), at most
	// WindowPositions positions (0 = no limit). Train.OutDir, Iteration,
	// Parent and Overwrite are set by the loop.
	Train           train.Options `json:"train"`
	WindowIters     int           `json:"window_iters"`
	WindowPositions int           `json:"window_positions"`

	// Evaluation each iteration: EvalGames games (seats alternating) of
	// the new net against the previous one and against each of
	// Baselines, every network agent searching EvalSims simulations (as
	// self-play searches otherwise: c, fpu, det, blend, turns, cut);
	// for connect4, the share of optimal moves on SolverPositions
	// solver-labelled positions (0 = none), for the network alone and
	// with SolverSims simulations of search.
	EvalGames int `json:"eval_games"`
	EvalSims  int `json:"eval_sims"`
	// EvalTempPlies: network agents sample their first moves by visit
	// counts for this many plies of each evaluation game (without it two
	// networks would replay the same two games).
	EvalTempPlies int `json:"eval_tempplies"`
	// EvalPolicyGames, when > 0, also plays the network alone (the
	// policy agent: its most probable legal move, no search) against each
	// of Baselines for this many games: a cheap curve of what the network
	// itself has learned, apart from search.
	EvalPolicyGames int      `json:"eval_policy_games,omitempty"`
	Baselines       []string `json:"baselines"`
	SolverPositions int      `json:"solver_positions"`
	SolverSims      int      `json:"solver_sims"`
	// Gate, when > 0, keeps the previous network for self-play unless the
	// new one scores at least Gate against it (AlphaGo Zero used 0.55).
	Gate float64 `json:"gate"`

	Backend string `json:"backend"` // backend spec for self-play and evaluation
	Seed    uint64 `json:"seed"`

	// Async runs the pipeline asynchronously (a fleet only; see the
	// package doc): iteration i+1's games are played while iteration i
	// trains, with the newest network published, and training takes
	// ReplayRatio samples per new position instead of Train.Steps steps.
	// Which network plays which game then depends on timing: the run is
	// not reproducible game for game, as the synchronous default is.
	Async bool `json:"async,omitempty"`
	// ReplayRatio is, with Async, the training samples (steps x batch)
	// per position of the iteration's new self-play (DefaultReplayRatio
	// when unset by the command).
	ReplayRatio float64 `json:"replay_ratio,omitempty"`
	// Ahead is, with Async, how many iterations self-play may run ahead
	// of training: iteration i's games are queued once network
	// i-1-Ahead is trained (and played by the newest network). 0 means
	// 1, the pipeline's first form; more keeps the workers busy when
	// training and evaluation of an iteration take longer than its
	// self-play, at the price of games played by older networks.
	Ahead int `json:"ahead,omitempty"`
}

// MaxAhead bounds Config.Ahead.
const MaxAhead = 16

// ahead is the number of iterations self-play runs ahead of training.
func (c *Config) ahead() int { return max(1, c.Ahead) }

// DefaultReplayRatio is the ReplayRatio `canopy zero --async` uses
// unless told: a few samples per new position, well below the ratio of
// about 10 at which docs/RESULTS.md section 8 saw the value head learn
// the window's games by heart (Strands at 10.8).
const DefaultReplayRatio = 4

// DefaultConfig is a small run for game: a few minutes an iteration on
// 2 cores for Connect Four (the defaults of Config.Table, 3 iterations).
func DefaultConfig(game string) Config {
	c := Config{Format: ConfigFormat, Iterations: 3, SelfPlay: selfplay.DefaultSettings(), Train: train.DefaultOptions()}
	c.Train.MetricsEvery = 20
	c.Table().Reset()
	c.Game = game
	return c
}

// SelfPlayRole is the loop's use of self-play's settings: all of
// selfplay.Settings.Table (the az agent's search options with
// selfplay.Role's defaults), with fewer simulations.
var SelfPlayRole = spec.Role{Name: "zero", Of: "self-play", Overrides: []spec.Override{
	{Key: "sims", Default: "64", Why: "many short iterations: a few minutes each for Connect Four on 2 cores"},
}}

// TrainRole is the loop's use of training's options: those of
// train.Options.Table named in trainKeys, and the replay window
// (train.WindowTable), for one iteration's training on a recent window.
var TrainRole = spec.Role{Name: "zero", Of: "train", Overrides: []spec.Override{
	{Key: "steps", Default: "200", Why: "steps per iteration, each on a window of recent self-play"},
	{Key: "batch", Default: "128", Why: "a small run: a few minutes an iteration on 2 cores"},
	{Key: "window-iters", Default: "4", Why: "an iteration trains on recent self-play; train on all the data it is given"},
}}

// trainKeys are the options of train.Options.Table the loop takes as
// flags (the others keep train's defaults, stored in zero.json).
var trainKeys = []string{"steps", "batch", "lr", "momentum", "optimizer", "l2", "polyak", "augment", "qmix", "value-weight", "precision"}

// Table declares the run's options bound to c: the flags of `canopy
// zero` and (by path) the settings of zero.json. Self-play's and
// training's options are theirs, through SelfPlayRole and TrainRole;
// Check adds what a range cannot say.
func (c *Config) Table() spec.Table {
	t := spec.Table{
		spec.String("game", &c.Game, "connect4", "game spec, e.g. connect4 or hex:size=7 (see canopy games)"),
		spec.File("net", &c.Net, "init", "network to start from: init (the game's built-in net, random weights), a shipped name or a weights file"),
		spec.Int("games", &c.Games, 64, 1, 1<<24, "self-play games: per iteration"),
		selfplay.TreesOption(&c.Trees),
	}
	t = append(t, SelfPlayRole.Apply(c.SelfPlay.Table())...)
	t = append(t, spec.String("turn-search", &c.TurnSearch, "", "multi-action games: self-play searches whole turns with this agent spec (mcts-v, mcts-bb or emcts, e.g. mcts-bb:sims=250; study 004) instead of PUCT per action"))
	t = append(t, TrainRole.Apply(append(c.Train.Table().Only(trainKeys...), train.WindowTable(&c.WindowPositions, &c.WindowIters)...))...)
	return append(t,
		spec.Int("eval-games", &c.EvalGames, 20, 0, 1<<20, "evaluation games against each opponent per iteration (0 = none)"),
		spec.Int("eval-sims", &c.EvalSims, 64, 1, 1<<24, "simulations per move of the networks in evaluation games (they search as self-play does otherwise: --c, --fpu, and in hidden-information games --det, --blend, --turns, --cut)"),
		spec.Int("eval-tempplies", &c.EvalTempPlies, 4, 0, 1<<20, "plies the networks sample by visits in evaluation games (diverse openings; the az option tempplies of the evaluation's agents)"),
		spec.Int("eval-policy-games", &c.EvalPolicyGames, 0, 0, 1<<20, "also play the network alone (its most probable legal move, no search) against each baseline for this many games per iteration (0 = not)"),
		spec.List("baselines", &c.Baselines, []string{"random", "onestep", "mcts:sims=200"}, ";", spec.SplitSpecs, "fixed opponents in evaluation, agent specs separated by ';'"),
		spec.Int("solver-positions", &c.SolverPositions, 100, 0, 1<<20, "connect4: solver-labelled positions scored each iteration (the set has 400)"),
		spec.Int("solver-sims", &c.SolverSims, 64, 1, 1<<24, "connect4: simulations per move when scoring with search"),
		spec.Float("gate", &c.Gate, 0, 0, 1, "keep the previous network for self-play unless the new one scores at least this against it (0 = off)"),
		spec.String("backend", &c.Backend, "auto", "backend spec: auto, cpu[:threads=N], cuda[:device=0,precision=fp16], ort:model=FILE.onnx, random (see canopy backends); of self-play and evaluation"),
		spec.Uint64("seed", &c.Seed, 1, 0, math.MaxUint64, "random seed"),
		spec.Bool("async", &c.Async, false, "with --nats: the asynchronous pipeline (workers play the next iteration with the newest network while this one trains; not reproducible game for game)"),
		spec.Float("replay-ratio", &c.ReplayRatio, 0, 0, 1000, fmt.Sprintf("with --async: training samples per new self-play position, instead of --steps (0: %d with --async)", DefaultReplayRatio)),
		spec.Int("ahead", &c.Ahead, 0, 0, MaxAhead, "with --async: iterations self-play may run ahead of training (0: 1; more keeps workers busy while training and evaluation lag, with older networks)"),
	)
}

// Check reports the first bad setting, named as its flag: the table's
// ranges (Table.Check), then what depends on several settings.
func (c *Config) Check() error {
	switch {
	case c.Format != ConfigFormat:
		return fmt.Errorf("format %q, want %q", c.Format, ConfigFormat)
	case c.Game == "":
		return errors.New("game: empty")
	case c.Iterations < 1 || c.Iterations > train.MaxIteration:
		return fmt.Errorf("iterations=%d is out of range (want 1..%d)", c.Iterations, train.MaxIteration)
	}
	cc := *c // Table.Check stores what it re-validates: keep c untouched
	if err := cc.Table().Check(); err != nil {
		return err
	}
	switch {
	case !c.Async && c.ReplayRatio != 0:
		return fmt.Errorf("replay-ratio = %g: only with --async (a synchronous run trains --steps steps per iteration)", c.ReplayRatio)
	case c.Async && !(c.ReplayRatio > 0):
		return fmt.Errorf("replay-ratio = %g, want training samples per new position in (0, 1000] (default %d)", c.ReplayRatio, DefaultReplayRatio)
	case c.Ahead < 0 || c.Ahead > MaxAhead || (!c.Async && c.Ahead > 1):
		return fmt.Errorf("ahead = %d, want 1..%d iterations of self-play ahead of training, with --async only", c.Ahead, MaxAhead)
	case c.Async && c.Gate > 0:
		return fmt.Errorf("gate = %g: not with --async, where self-play always takes the newest network", c.Gate)
	case c.Async && c.TurnSearch != "":
		return fmt.Errorf("turn-search: not with --async (fleet workers do not play turn searches yet)")
	}
	if err := c.SelfPlay.Check(); err != nil {
		return err
	}
	if c.TurnSearch != "" {
		def := DefaultConfig(c.Game).SelfPlay
		if keys := c.SelfPlay.Changed(&def); len(keys) > 0 {
			return fmt.Errorf("%s: no meaning with turn-search %q, whose spec sets the self-play search (e.g. mcts-bb:sims=250,c=2)", strings.Join(keys, ", "), c.TurnSearch)
		}
	}
	t := c.Train
	t.Iteration = 1
	if err := t.Check(); err != nil {
		return err
	}
	g, err := games.New(c.Game)
	if err != nil {
		return err
	}
	if c.TurnSearch != "" {
		if _, err := selfplay.TurnSearchSpec(g, c.TurnSearch); err != nil {
			return fmt.Errorf("turn-search: %w", err)
		}
		if c.Train.QMix != 0 {
			values, err := selfplay.TurnSearchValues(g, c.TurnSearch)
			if err != nil {
				return fmt.Errorf("turn-search: %w", err)
			}
			if !values {
				return fmt.Errorf("qmix = %g: turn search %q records no value per position to mix into the value target (mcts-v and mcts-bb do); use qmix 0 with it", c.Train.QMix, c.TurnSearch)
			}
		}
	}
	if g.Type().Information == games.ImperfectInformation && c.EvalSims < c.SelfPlay.Det {
		return fmt.Errorf("eval-sims = %d: evaluation searches det = %d sampled deals as self-play does, each needs a simulation; use --eval-sims %d or more", c.EvalSims, c.SelfPlay.Det, c.SelfPlay.Det)
	}
	if _, err := engine.BlendRollout(g, c.SelfPlay.SearchOptions()); err != nil {
		return err
	}
	return search.CheckObjective(g, c.SelfPlay.Objective)
}

// configFlags names Config's settings by the flags of `canopy zero`
// (selfplay's keys are their flags; train's settings that zero sets no
// flag for are named by their path in zero.json).
var configFlags = rundir.Flags{Renamed: map[string]string{
	"format": "", "window_positions": "window",
	"train.lr_schedule": "", "train.warmup": "", "train.lr_step_every": "", "train.lr_step_gamma": "",
	"train.lr_final": "", "train.seed": "", "train.metrics_every": "", "train.iteration": "", "train.checkpoint_every": "",
}}

// sameRun reports how a requested configuration differs from the stored
// one, named by flag (rundir.Compare), in anything but Iterations and
// EvalPolicyGames (which changes what later evaluations play, not the
// networks).
func sameRun(old, c Config) error {
	c.Iterations, c.EvalPolicyGames = old.Iterations, old.EvalPolicyGames
	cs, err := rundir.Compare(old, c, configFlags)
	if err != nil {
		return err
	}
	return cs.Err()
}

// LoadConfig reads the configuration stored in run directory dir; ok is
// false when there is none.
func LoadConfig(dir string) (c Config, ok bool, err error) {
	path := filepath.Join(dir, ConfigName)
	found, err := rundir.ReadJSON(path, &c)
	if err != nil {
		if found { // the file does not parse
			return c, false, fmt.Errorf("%v (fix or remove it)", err)
		}
		return c, false, err
	}
	if !found {
		return c, false, nil
	}
	c.SelfPlay.Upgrade()
	if err := c.Check(); err != nil {
		return c, false, fmt.Errorf("%s: %v", path, err)
	}
	return c, true, nil
}

// Finished returns the number of iterations of the run in dir that are
// complete (0 for a directory without a run).
func Finished(dir string) (int, error) {
	n := 0
	for {
		_, err := os.Stat(filepath.Join(dir, itersDir, iterName(n+1)+".json"))
		if errors.Is(err, fs.ErrNotExist) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
	}
}

func writeJSON(path string, v any) error { return rundir.WriteJSON(path, v) }

func readJSON(path string, v any) (bool, error) {
	ok, err := rundir.ReadJSON(path, v)
	if err != nil && ok { // the file does not parse
		return ok, fmt.Errorf("%v (remove it to redo that step)", err)
	}
	return ok, nil
}

// selfPlayBatch is the largest network batch of the loop's self-play
// engine (and the backend's MaxBatch).
const selfPlayBatch = 256

// MemoryBytes estimates the memory, in bytes, of one iteration of c on
// g with network net: self-play's trees and game records
// (selfplay.Config.MemoryBytes), its engine's batcher ring
// (engine.Options.MemoryBytes) and the CPU backend's scratch, and the
// training minibatches (train.Options.MemoryBytes). The replay window and
// evaluation are not counted. The result is a float64 (absurd settings
// overflow int64); errors are the settings'.
func (c Config) MemoryBytes(g games.Game, net *nets.Net) (float64, error) {
	sp := selfplay.Config{Settings: c.SelfPlay, Trees: c.Trees, NumGames: c.Games, TurnSearch: c.TurnSearch}
	total, err := sp.MemoryBytes(g)
	if err != nil {
		return 0, err
	}
	trees := max(min(c.Trees, c.Games), 1)
	leaves := max(c.SelfPlay.Leaves, 1)
	if c.TurnSearch != "" {
		leaves = 1
	}
	if float64(trees)*float64(leaves) < 1<<31 {
		eo := engine.Options{Leaves: leaves, Batch: selfPlayBatch, Slots: engine.SlotsFor(trees, leaves)}
		total += float64(eo.MemoryBytes(g, net.InputSize(), selfPlayBatch))
	}
	total += nets.CPUScratchBytes(net, selfPlayBatch)
	total += float64(c.Train.MemoryBytes(net))
	return total, nil
}
