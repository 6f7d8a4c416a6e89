package rl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/internal/rundir"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/spec"
)

// Limits of a run's settings (RunConfig.Check).
const (
	MaxEnvs   = 4096    // environments in lock-step
	MaxSteps  = 1 << 16 // learner moves per environment per update
	MaxBatch  = 1 << 20 // envs x steps: the rollout's samples
	MaxEpochs = 100
	// DefaultPreset is the architecture of a fresh net when the run names
	// neither a net nor a preset.
	DefaultPreset = "connect4-ppo"
)

// SettingError is a setting of a run that cannot work (out of range, a
// net of another game, an opponent spec that names no agent): the
// request is wrong, not the run. Flag is the `canopy ppo` flag that sets
// it, without dashes; the message names it.
type SettingError struct {
	Flag string
	Err  error
}

func (e *SettingError) Error() string { return e.Err.Error() }
func (e *SettingError) Unwrap() error { return e.Err }

func settingf(flag, format string, args ...any) error {
	return &SettingError{Flag: flag, Err: fmt.Errorf(format, args...)}
}

// DefaultConfig is a run of `canopy ppo` as its flags' defaults set it
// (RunConfig.Table): Connect Four against random, 100 updates of 16
// environments x 512 moves, DefaultOptions' PPO.
func DefaultConfig() RunConfig {
	c := RunConfig{Options: DefaultOptions()}
	c.Table().Reset()
	return c
}

// Table declares the settings of a run that `canopy ppo` sets by flag,
// bound to c: key, default, range, help (PPO's own coefficients from
// DefaultOptions, the run's settings). Check adds what a range cannot
// say. Net's "init" (the default) is a fresh net, stored as "".
func (c *RunConfig) Table() spec.Table {
	o := &c.Options
	def := DefaultOptions()
	return spec.Table{
		spec.String("game", &c.Game, "connect4", "game spec, e.g. connect4 or hex:size=7 (see canopy games); sequential games"),
		spec.Int("updates", &c.Updates, 100, 1, MaxUpdate, "total PPO updates the run should reach"),
		spec.Int("envs", &c.Envs, 16, 1, MaxEnvs, "environments (games) in lock-step"),
		spec.Int("env-steps", &o.Steps, def.Steps, 1, MaxSteps, fmt.Sprintf("learner moves per environment per update (envs x env-steps <= %d)", MaxBatch)),
		spec.Interval("lr", &o.LR, def.LR, "(0, 1]", "Adam learning rate"),
		spec.Float("wd", &o.WeightDecay, def.WeightDecay, 0, 1, "Adam weight decay, torch.optim.Adam's coupled L2 (study 000: 1e-5)"),
		spec.Float("ent", &o.Loss.EntropyCoef, def.Loss.EntropyCoef, 0, 10, "entropy bonus coefficient"),
		spec.Int("epochs", &o.Epochs, def.Epochs, 1, MaxEpochs, "passes over each rollout"),
		spec.Int("minibatches", &o.Minibatches, def.Minibatches, 1, MaxBatch, "minibatches per epoch, at most envs x env-steps"),
		spec.String("opponent", &c.Opponent, "random", "agent spec of the opponent (random, onestep, policy:net=F, ...; list: canopy agents); with --league fixed, several separated by ';' are drawn uniformly per game"),
		spec.Uint64("seed", &c.Seed, 1, 0, math.MaxUint64, "random seed (fresh weights, environments, sampling, opponent)"),
		spec.File("net", &c.Net, "init", "network to start from: any canopy network file, or init (a fresh --preset with random weights)"),
		spec.String("preset", &c.Preset, "", "architecture of a fresh network: "+strings.Join(nets.Presets(), ", ")+", or the recurrent "+strings.Join(nets.RecurrentPresets(), ", ")+" (default "+DefaultPreset+")"),
		spec.Int("checkpoint-every", &c.Every, 10, 1, MaxUpdate, "updates between checkpoints: the league's snapshots (the last update is always saved)"),
		spec.Choice("league", &c.League, "fixed", []string{"fixed", "fsp", "schedule"}, "opponents: fixed (--opponent in every game), fsp (study 002: 80% the latest weights, 20% one of the last 20 checkpoints), schedule (study 000: --greedy/random for 400 updates, then 70% one of the last 5 checkpoints, 15% --greedy, 15% random)"),
		spec.String("greedy", &c.Greedy, "onestep", "agent spec of the greedy opponent of --league schedule"),
		spec.Int("league-warmup", &c.Warmup, 400, 0, MaxUpdate, "updates of --league schedule's warm-up against --greedy and random"),
		spec.Bool("legal-plane", &c.LegalPlane, false, "give a fresh net study 002's third input plane, the legal moves"),
		spec.Float("ent-final", &o.EntropyFinal, 0, 0, 10, "entropy coefficient at the end of --ent-decay"),
		spec.Bool("fresh-games", &o.FreshGames, true, "start new games at every update from streams of (seed, update), so that --resume continues exactly"),
	}
}

// Check reports the first setting of c out of its range, as a
// *SettingError naming its flag: the table's ranges, then the bounds
// that depend on other settings.
func (c RunConfig) Check() error {
	o := c.Options
	if c.League == "" {
		c.League = "fixed" // runs from before leagues
	}
	t := c.Table() // c is a copy: Table.Check may store what it re-validates
	for _, opt := range t {
		if err := (spec.Table{opt}).Check(); err != nil {
			return settingf(opt.Key, "--%v", err)
		}
	}
	switch {
	case c.Envs*o.Steps > MaxBatch:
		return settingf("env-steps", "--envs x --env-steps = %d samples per update, want at most %d", c.Envs*o.Steps, MaxBatch)
	case o.Minibatches > c.Envs*o.Steps:
		return settingf("minibatches", "--minibatches=%d is out of range (want 1..%d, envs x env-steps)", o.Minibatches, c.Envs*o.Steps)
	case strings.TrimSpace(c.Opponent) == "":
		return settingf("opponent", "--opponent is empty: give an agent spec such as random")
	}
	if err := o.Validate(); err != nil {
		return &SettingError{Err: err}
	}
	return nil
}

// checkLeague reports a league or warm-up setting that cannot work.
func (c RunConfig) checkLeague() error {
	if c.Warmup < 0 || c.Warmup > MaxUpdate {
		return settingf("league-warmup", "--league-warmup = %d, want 0..%d", c.Warmup, MaxUpdate)
	}
	switch c.League {
	case "", "fixed", "fsp", "schedule":
		return nil
	}
	return settingf("league", "--league %q: want fixed, fsp or schedule", c.League)
}

// checkRecurrent reports the settings a recurrent run does not take.
func (c RunConfig) checkRecurrent() error {
	switch {
	case c.LegalPlane:
		return settingf("legal-plane", "--legal-plane: the recurrent preset %s reads the game's features, which have no legal-move plane", c.Preset)
	case c.Options.Minibatches > c.Envs:
		return settingf("minibatches", "--minibatches = %d: a recurrent learner's minibatches are groups of whole environments, want at most --envs (%d)", c.Options.Minibatches, c.Envs)
	}
	return nil
}

// LeagueName is the league of run c: "fixed", "fsp" or "schedule" (""
// in runs from before leagues is "fixed").
func (c RunConfig) LeagueName() string {
	if c.League == "" {
		return "fixed"
	}
	return c.League
}

// OpponentName names run c's opponents: the opponent spec, or the
// league.
func (c RunConfig) OpponentName() string {
	if l := c.LeagueName(); l != "fixed" {
		return "league " + l
	}
	return c.Opponent
}

// sessionSeed is the seed of a session of run c starting after update
// start.
func (c RunConfig) sessionSeed(start int) uint64 {
	if c.Options.FreshGames {
		return c.Seed // every update derives its own streams (UpdateSeed)
	}
	return SessionSeed(c.Seed, start)
}

// configFlags names the settings of RunConfig.flagView by the flags of
// `canopy ppo` (settings without a flag keep their path).
var configFlags = rundir.Flags{Renamed: map[string]string{
	"warmup":                      "league-warmup",
	"options":                     "",
	"options.Steps":               "env-steps",
	"options.LR":                  "lr",
	"options.WeightDecay":         "wd",
	"options.Loss.EntropyCoef":    "ent",
	"options.Epochs":              "epochs",
	"options.Minibatches":         "minibatches",
	"options.EntropyFinal":        "ent-final",
	"options.EntropyDecayUpdates": "ent-decay",
	"options.AnnealUpdates":       "lr-anneal",
	"options.FreshGames":          "fresh-games",
}}

// flagView is c as `canopy ppo`'s flags set it, for comparing a resumed
// run's settings: the league by name ("" is "fixed"), shaping as the
// flag's on or off (its weights are the game's study's), the target
// (which a resumed run may change) left out.
func (c RunConfig) flagView() any {
	c.League, c.Updates = c.LeagueName(), 0
	return struct {
		RunConfig
		Shaping bool `json:"shaping"` // hides RunConfig.Shaping
	}{c, c.Shaping != Shaping{}}
}

// RunOptions are the services and callbacks of Run, passed in by its
// caller.
type RunOptions struct {
	// Resume continues the run in the directory from its last checkpoint
	// instead of starting one: its stored settings hold, and the
	// requested ones whose flag Given reports are compared with them
	// (differences are rundir.Changes naming the flags); a given
	// "updates" replaces the stored target.
	Resume bool
	// Given reports whether a flag (without dashes) was given; nil means
	// every one was (a caller with a whole RunConfig: every setting is
	// compared, as zero.Run does, and Updates is the new target).
	Given func(flag string) bool
	// Agents is the environment opponent agents are built with (an
	// engine pool, for network agents: search/engine.WithPool).
	Agents agent.Env
	// Started, when set, is called once the session is set up, before
	// its first update.
	Started func(Session)
	// Progress, when set, is called after every update.
	Progress func(Metrics)
}

// Session describes a session of a run as Run set it up.
type Session struct {
	Dir    string
	Game   games.Game
	Config RunConfig // the run's settings (the stored ones on resume)
	// Net is the learner (nil for a recurrent run), Rec the recurrent
	// learner.
	Net *nets.Net
	Rec *nets.Recurrent
	// Start is the updates done before this session and Samples their
	// samples; Checkpoint the checkpoint a resumed session starts from.
	Start      int
	Samples    int64
	Checkpoint string
	// Resumed is true for a resumed session; AdamStep is the restored
	// optimizer's step count, -1 when it restarts from zero moments (a
	// checkpoint saved without Adam's state).
	Resumed  bool
	AdamStep int
}

// RunResult is what Run did.
type RunResult struct {
	TrainResult
	Config RunConfig // the run's settings
	// Start is the update the session started from and Updates the
	// updates done when Run returned (saved in a checkpoint unless Run
	// failed); Done reports that the run had reached its target already
	// (nothing was trained).
	Start, Updates int
	Done           bool
}

// Run starts a PPO run in dir (or with o.Resume continues it) and trains
// it to c.Updates updates, mirroring zero.Run: it validates c, builds the
// starting net (c.Net's file, or a fresh c.Preset, DefaultPreset by
// default), takes the directory (internal/rundir: one process at a
// time), records the settings (ppo.json) and update 0, then runs Train
// with the league's snapshots, the opponents built from o.Agents. When
// ctx is cancelled it saves a checkpoint of the updates done and returns
// ctx's error with the result so far. Bad settings are *SettingError
// (or rundir.Changes on resume); a directory that holds a run already is
// ErrRunExists, one without a run to resume ErrNoRun.
func Run(ctx context.Context, dir string, c RunConfig, o RunOptions) (RunResult, error) {
	if o.Given == nil {
		o.Given = func(string) bool { return true }
	}
	if c.Net == "init" {
		c.Net = "" // a fresh net, as ppo.json has always stored it
	}
	if err := c.Check(); err != nil {
		return RunResult{}, err
	}
	if err := c.checkLeague(); err != nil {
		return RunResult{}, err
	}
	if o.Resume {
		return resumeRun(ctx, dir, c, o)
	}
	g, err := games.New(c.Game)
	if err != nil {
		return RunResult{}, &SettingError{Flag: "game", Err: err}
	}
	l, err := c.freshLearner(g)
	if err != nil {
		return RunResult{}, err
	}
	if l.net != nil {
		c.Preset = l.net.Config().Preset
	}
	rd, err := rundir.Open(dir)
	if err != nil {
		return RunResult{}, err
	}
	defer rd.Close()
	// Check that the net and the opponents fit before the run is recorded.
	p, closeAll, err := newSession(g, l, c, dir, 0, o.Agents)
	if err != nil {
		return RunResult{}, err
	}
	defer closeAll()
	if err := Start(dir, c); err != nil {
		return RunResult{}, err
	}
	// Update 0: the starting weights, so that a run interrupted before its
	// first checkpoint can still be resumed.
	info := CheckpointInfo{Game: g.Spec(), Preset: c.Preset, Opponent: c.Opponent}
	if l.rec != nil {
		_, err = SaveRecurrentCheckpoint(dir, l.rec, info)
	} else {
		_, err = SaveCheckpoint(dir, l.net, info)
	}
	if err != nil {
		return RunResult{}, err
	}
	if p.League != nil {
		if l.rec != nil {
			err = p.League.AddRecurrentSnapshot(l.rec)
		} else {
			err = p.League.AddSnapshot(l.net)
		}
		if err != nil {
			return RunResult{}, err
		}
	}
	if o.Started != nil {
		o.Started(Session{Dir: dir, Game: g, Config: c, Net: l.net, Rec: l.rec, AdamStep: -1})
	}
	return trainRun(ctx, p, c, dir, info, o)
}

// freshLearner builds the starting net of a new run of c on g: c.Net's
// file, a recurrent preset's CNN-LSTM, or a fresh c.Preset (with study
// 002's legal-move plane when c.LegalPlane).
func (c RunConfig) freshLearner(g games.Game) (learner, error) {
	if c.Net != "" && c.Preset != "" {
		return learner{}, settingf("net", "--net and --preset exclude each other: --net starts from existing weights, --preset builds fresh ones")
	}
	if c.LegalPlane && c.Net != "" {
		return learner{}, settingf("legal-plane", "--legal-plane shapes a fresh net; a --net file brings its own input planes")
	}
	if cfg, ok := nets.RecurrentPreset(c.Preset); ok {
		cfg, err := cfg.ForGame(g)
		if err != nil {
			return learner{}, settingf("preset", "--preset %s: %v", c.Preset, err)
		}
		if err := c.checkRecurrent(); err != nil {
			return learner{}, err
		}
		rec, err := nets.NewRecurrent(cfg, c.Seed)
		return learner{rec: rec}, err
	}
	if c.Net != "" {
		net, err := nets.Load(c.Net)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return learner{}, &SettingError{Flag: "net", Err: fmt.Errorf("--net %s: %w", c.Net, err)}
		}
		if err := nets.CheckGame(net, g, c.Net); err != nil {
			return learner{}, &SettingError{Flag: "net", Err: fmt.Errorf("--net: %w", err)}
		}
		return learner{net: net}, nil
	}
	name := c.Preset
	if name == "" {
		name = DefaultPreset
	}
	cfg, err := nets.Preset(name)
	if err != nil {
		return learner{}, settingf("preset", "--preset: %v", err)
	}
	cfg.ValuePlayers = 1 // PPO's critic is the mover's value: the scalar head for any player count
	if cfg, err = cfg.ForGame(g); err != nil {
		return learner{}, settingf("preset", "--preset: %v", err)
	}
	if c.LegalPlane {
		enc := nets.Encoding{LegalPlane: true}
		if err := enc.Check(g); err != nil {
			return learner{}, settingf("legal-plane", "--legal-plane: %v", err)
		}
		cfg.InputPlanes++
		if err := cfg.Normalize(); err != nil {
			return learner{}, settingf("legal-plane", "--legal-plane: %v", err)
		}
	}
	net, err := nets.New(cfg, c.Seed)
	return learner{net: net}, err
}

// resumeRun continues the run in dir (Run with o.Resume).
func resumeRun(ctx context.Context, dir string, c RunConfig, o RunOptions) (RunResult, error) {
	if _, err := os.Stat(dir); err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return RunResult{}, fmt.Errorf("--resume: %w", err)
	}
	rd, err := rundir.Open(dir)
	if err != nil {
		return RunResult{}, err
	}
	defer rd.Close()
	r, err := Resume(dir)
	if err != nil {
		return RunResult{}, err
	}
	// A run keeps its settings: the flags given again must agree.
	stored := r.Config
	cs, err := rundir.Compare(stored.flagView(), c.flagView(), configFlags)
	if err != nil {
		return RunResult{}, err
	}
	if err := cs.Only(func(name string) bool { return o.Given(strings.TrimPrefix(name, "--")) }).Err(); err != nil {
		return RunResult{}, fmt.Errorf("%w (see %s/%s)", err, dir, ConfigFile)
	}
	if o.Given("updates") && c.Updates != stored.Updates {
		stored.Updates = c.Updates
		if err := SaveRunConfig(dir, stored); err != nil {
			return RunResult{}, err
		}
	}
	if stored.Updates < 1 || stored.Updates > MaxUpdate {
		return RunResult{}, fmt.Errorf("%s/%s: updates = %d, want 1..%d", dir, ConfigFile, stored.Updates, MaxUpdate)
	}
	if err := stored.Check(); err != nil {
		return RunResult{}, fmt.Errorf("%s/%s: %v", dir, ConfigFile, err)
	}
	g, err := games.New(stored.Game)
	if err != nil {
		return RunResult{}, err
	}
	l := learner{net: r.Net, rec: r.Rec}
	if l.rec != nil {
		if err := stored.checkRecurrent(); err != nil {
			return RunResult{}, err
		}
	}
	p, closeAll, err := newSession(g, l, stored, dir, r.Info.Updates, o.Agents)
	if err != nil {
		return RunResult{}, err
	}
	defer closeAll()
	s := Session{Dir: dir, Game: g, Config: stored, Net: r.Net, Rec: r.Rec, Start: r.Info.Updates, Samples: r.Info.Samples,
		Checkpoint: r.Checkpoint, Resumed: true, AdamStep: -1}
	if r.Adam != nil {
		if err := p.SetAdamState(*r.Adam); err != nil {
			return RunResult{}, fmt.Errorf("%s: %v", AdamPath(dir, r.Info.Updates), err)
		}
		s.AdamStep = r.Adam.Step
	}
	if o.Started != nil {
		o.Started(s)
	}
	return trainRun(ctx, p, stored, dir, r.Info, o)
}

// trainRun runs the session's updates to c.Updates.
func trainRun(ctx context.Context, p *PPO, c RunConfig, dir string, info CheckpointInfo, o RunOptions) (RunResult, error) {
	res := RunResult{Config: c, Start: p.Updates, Updates: p.Updates}
	if p.Updates >= c.Updates {
		res.Done = true
		return res, nil
	}
	to := TrainOptions{Dir: dir, Updates: c.Updates, Every: c.Every, Info: info, Progress: o.Progress}
	if p.League != nil {
		to.Snapshot, to.SnapshotRecurrent = p.League.AddSnapshot, p.League.AddRecurrentSnapshot
	}
	tr, err := Train(ctx, p, to)
	res.TrainResult, res.Updates = tr, p.Updates
	return res, err
}

// learner is the net a session trains: exactly one of net (plain) and
// rec (study 000's recurrent CNN-LSTM) is set.
type learner struct {
	net *nets.Net
	rec *nets.Recurrent
}

// newLeague returns a league of snapshots shaped like the learner.
func (l learner) newLeague(g games.Game, lo LeagueOptions) (*League, error) {
	if l.rec != nil {
		return NewRecurrentLeague(g, l.rec, lo)
	}
	return NewLeague(g, l.net, lo)
}

// addSnapshot adds the checkpoint at path to the league's pool.
func (l learner) addSnapshot(league *League, path string) error {
	if l.rec != nil {
		snap, _, err := LoadRecurrentCheckpoint(path)
		if err != nil {
			return err
		}
		return league.AddRecurrentSnapshot(snap)
	}
	snap, _, err := LoadCheckpoint(path)
	if err != nil {
		return err
	}
	return league.AddSnapshot(snap)
}

// newSession builds the environments (the net's encoding, or the game's
// features for a recurrent learner), the opponents and the learner of a
// session of run c in dir starting after update start; a league's pool
// is refilled from the run's checkpoints. The returned function closes
// the environments and the opponents.
func newSession(g games.Game, l learner, c RunConfig, dir string, start int, aenv agent.Env) (*PPO, func(), error) {
	seed := c.sessionSeed(start)
	enc := nets.Encoding{Features: true}
	if l.net != nil {
		var err error
		if enc, err = nets.EncodingFor(g, l.net.InputSize()); err != nil {
			if c.Net != "" {
				return nil, nil, &SettingError{Flag: "net", Err: fmt.Errorf("--net %s: %w", c.Net, err)} // a network of another game
			}
			return nil, nil, err
		}
	}
	ops, err := newOpponents(g, c, seed, dir, start, l, aenv)
	if err != nil {
		return nil, nil, err
	}
	env, err := NewEnv(g, EnvOptions{N: c.Envs, Seat: SeatAlternate, Seed: seed, Encoding: enc, Shaping: c.Shaping,
		Opponents: ops.opponents})
	if err != nil {
		ops.close()
		return nil, nil, err
	}
	closeAll := func() { env.Close(); ops.close() }
	opt := c.Options
	opt.Seed = seed
	var p *PPO
	if l.rec != nil {
		p, err = NewRecurrentPPO(l.rec, env, opt)
	} else {
		p, err = NewPPO(l.net, env, opt)
	}
	if err != nil {
		closeAll()
		if c.Net != "" {
			return nil, nil, fmt.Errorf("--net %s: %v", c.Net, err)
		}
		return nil, nil, err
	}
	p.Updates = start
	p.League = ops.league
	return p, closeAll, nil
}

// opponents are a session's opponents: what the environments pick from,
// the league among them (nil for one fixed opponent), and what close
// releases.
type opponents struct {
	opponents Opponents
	league    *League
	closers   []io.Closer
}

func (o *opponents) close() {
	for _, cl := range o.closers {
		cl.Close()
	}
}

// newOpponents builds the opponents of run c (league, opponent, greedy)
// for a session starting after update start, refilling a league's pool
// from the checkpoints in dir; agents are made in aenv.
func newOpponents(g games.Game, c RunConfig, seed uint64, dir string, start int, l learner, aenv agent.Env) (_ *opponents, err error) {
	ops := &opponents{}
	defer func() {
		if err != nil {
			ops.close() // the agents made before the error
		}
	}()
	agentOpp := func(flag, spec string, seed uint64) (Opponent, error) {
		if spec == "random" {
			return RandomOpponent(), nil
		}
		o, err := NewSpecOpponent(g, spec, aenv.WithSeed(seed))
		if err != nil {
			return nil, settingf(flag, "--%s: %v", flag, err)
		}
		ops.closers = append(ops.closers, o)
		return o, nil
	}
	var pool int
	switch c.LeagueName() {
	case "fixed":
		specs := strings.Split(c.Opponent, ";")
		if len(specs) == 1 {
			opp, err := agentOpp("opponent", c.Opponent, seed+1)
			if err != nil {
				return nil, err
			}
			ops.opponents = Fixed{Name: c.Opponent, Opponent: opp}
			return ops, nil
		}
		// Several agents: each game against one of them, uniformly.
		var mix Mixture
		seen := map[string]bool{}
		for i, spec := range specs {
			spec = strings.TrimSpace(spec)
			if spec == "" || seen[spec] {
				return nil, settingf("opponent", "--opponent %q: want distinct, non-empty agent specs separated by ';'", c.Opponent)
			}
			seen[spec] = true
			opp, err := agentOpp("opponent", spec, seed+1+uint64(i))
			if err != nil {
				return nil, err
			}
			mix.Fixed = append(mix.Fixed, WeightedOpponent{Name: spec, Opponent: opp, Weight: 1})
		}
		if ops.league, err = l.newLeague(g, LeagueOptions{Main: mix}); err != nil {
			return nil, err
		}
	case "fsp", "schedule":
		lo := Study002League()
		if c.League == "schedule" {
			greedy, err := agentOpp("greedy", c.Greedy, seed+1)
			if err != nil {
				return nil, err
			}
			lo = Study000League(greedy, RandomOpponent())
			lo.WarmupUpdates = c.Warmup
		}
		if ops.league, err = l.newLeague(g, lo); err != nil {
			return nil, err
		}
		pool = lo.PoolSize
	default:
		return nil, fmt.Errorf("league %q: want fixed, fsp or schedule", c.League)
	}
	ops.opponents = ops.league
	if start > 0 && pool > 0 {
		paths, err := PoolCheckpoints(dir, start, c.Every, pool)
		if err != nil {
			return nil, err
		}
		for _, path := range paths {
			if err := l.addSnapshot(ops.league, path); err != nil {
				return nil, fmt.Errorf("league pool: %v", err)
			}
		}
	}
	return ops, nil
}
