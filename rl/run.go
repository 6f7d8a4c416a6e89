package rl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/canopy-go/canopy/internal/atomicfile"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/nets/safetensors"
	"github.com/canopy-go/canopy/train"
)

// A PPO run directory holds everything one training run writes:
//
//	ppo.json                     the RunConfig (written once, when the run starts)
//	update-NNNNNN.safetensors    checkpoints: the net after NNNNNN updates, with CheckpointInfo metadata
//	update-NNNNNN.adam.safetensors  Adam's step count and moments at that checkpoint (written first)
//	metrics.jsonl                one Metrics line per update, in order
//
// Checkpoints and ppo.json are written atomically. metrics.jsonl is
// appended to after every update; a line cut short by a crash, and lines
// of updates after the last checkpoint, are dropped by Resume. The
// directory is meant to be held by one process at a time
// (internal/runlock); these functions do not take the lock themselves.
const (
	ConfigFile  = "ppo.json"
	MetricsFile = "metrics.jsonl"
)

// Metadata keys of a PPO checkpoint beside the network config. The game
// and preset keys are those of train's checkpoints, so tools that show
// them read both kinds.
const (
	MetaGame     = train.MetaGame   // spec of the game trained on
	MetaPreset   = train.MetaPreset // architecture preset, when known
	MetaUpdates  = "canopy.rl.updates"
	MetaSamples  = "canopy.rl.samples"
	MetaOpponent = "canopy.rl.opponent"
)

// MaxUpdate is the largest update number a checkpoint name can hold.
const MaxUpdate = 999999

// ErrRunExists is wrapped by Start's error for a directory that holds a
// run already.
var ErrRunExists = errors.New("run directory holds a run already")

// ErrNoRun is wrapped by Resume's error for a directory without a
// checkpoint to continue from.
var ErrNoRun = errors.New("no checkpoint to resume from")

// RunConfig is the settings of a PPO run, fixed when it starts and stored
// in ConfigFile. A resumed run keeps them.
type RunConfig struct {
	Game     string `json:"game"`             // game spec
	Preset   string `json:"preset,omitempty"` // architecture preset of the net, when known
	Net      string `json:"net,omitempty"`    // the weights file the run started from ("" = fresh weights)
	Opponent string `json:"opponent"`         // agent spec of the opponent ("random": RandomOpponent)
	// League is "" or "fixed" (every game against Opponent), "fsp"
	// (Study002League) or "schedule" (Study000League, greedy played by
	// Opponent).
	League string `json:"league,omitempty"`
	Greedy string `json:"greedy,omitempty"` // agent spec of the greedy opponent of "schedule"
	Warmup int    `json:"warmup,omitempty"` // warm-up updates of "schedule"
	// LegalPlane adds study 002's legal-move plane to a fresh net's input
	// (Encoding.LegalPlane); a net from a file brings its own encoding.
	LegalPlane bool `json:"legal_plane,omitempty"`
	// Shaping is the dense reward (none by default).
	Shaping Shaping `json:"shaping,omitzero"`
	Envs    int     `json:"envs"`             // environments in lock-step
	Seed    uint64  `json:"seed"`             // seeds weights, environments, sampling and the opponent
	Every   int     `json:"checkpoint_every"` // updates between checkpoints
	Updates int     `json:"updates"`          // the update count the run was last asked to reach
	Options Options `json:"options"`          // PPO options (Seed is overridden per session; see Session)
}

// CheckpointInfo is the training metadata of a PPO checkpoint.
type CheckpointInfo struct {
	Game     string `json:"game"`
	Preset   string `json:"preset,omitempty"`
	Opponent string `json:"opponent,omitempty"`
	// Updates is the number of PPO updates that made these weights and
	// Samples the environment steps they were trained on, cumulative
	// over resumed sessions.
	Updates int   `json:"updates"`
	Samples int64 `json:"samples"`
}

// Metadata returns the info as safetensors metadata entries.
func (c CheckpointInfo) Metadata() map[string]string {
	m := map[string]string{
		MetaGame:     c.Game,
		MetaUpdates:  strconv.Itoa(c.Updates),
		MetaSamples:  strconv.FormatInt(c.Samples, 10),
		MetaOpponent: c.Opponent,
	}
	if c.Preset != "" {
		m[MetaPreset] = c.Preset
	}
	return m
}

// ParseCheckpointInfo reads the PPO metadata of a file. A file without
// any (a net from `canopy net init`, a train checkpoint) gives ok false;
// malformed entries are an error naming the key.
func ParseCheckpointInfo(meta map[string]string) (info CheckpointInfo, ok bool, err error) {
	if _, ok := meta[MetaUpdates]; !ok {
		return CheckpointInfo{}, false, nil
	}
	info = CheckpointInfo{Game: meta[MetaGame], Preset: meta[MetaPreset], Opponent: meta[MetaOpponent]}
	u, err := strconv.ParseInt(meta[MetaUpdates], 10, 32)
	if err != nil || u < 0 || u > MaxUpdate {
		return info, true, fmt.Errorf("checkpoint metadata %s = %q is not an update count", MetaUpdates, meta[MetaUpdates])
	}
	info.Updates = int(u)
	if info.Samples, err = strconv.ParseInt(meta[MetaSamples], 10, 64); err != nil || info.Samples < 0 {
		return info, true, fmt.Errorf("checkpoint metadata %s = %q is not a sample count", MetaSamples, meta[MetaSamples])
	}
	return info, true, nil
}

// CheckpointPath is the checkpoint of update u in dir.
func CheckpointPath(dir string, u int) string {
	return filepath.Join(dir, fmt.Sprintf("update-%06d.safetensors", u))
}

// AdamPath is the optimizer state of the checkpoint of update u in dir.
func AdamPath(dir string, u int) string {
	return filepath.Join(dir, fmt.Sprintf("update-%06d.adam.safetensors", u))
}

// Metadata key of an optimizer state file: Adam's step count.
const MetaAdamStep = "canopy.rl.adam_step"

// SaveAdamState writes s to path, atomically: one tensor "m.I" and
// "v.I" per parameter I that Adam has stepped.
func SaveAdamState(path string, s nets.AdamState) error {
	var ts []safetensors.Tensor
	for i, m := range s.M {
		if m != nil {
			ts = append(ts, safetensors.FromFloat32(fmt.Sprintf("m.%d", i), []int{len(m)}, m),
				safetensors.FromFloat32(fmt.Sprintf("v.%d", i), []int{len(m)}, s.V[i]))
		}
	}
	meta := map[string]string{MetaAdamStep: strconv.Itoa(s.Step), "canopy.rl.adam_params": strconv.Itoa(len(s.M))}
	if err := safetensors.WriteFile(path, ts, meta); err != nil {
		return fmt.Errorf("rl: writing %s: %w", path, err)
	}
	return nil
}

// LoadAdamState reads an optimizer state file written by SaveAdamState
// for a net with params parameters.
func LoadAdamState(path string, params int) (nets.AdamState, error) {
	f, err := safetensors.ReadFile(path)
	if err != nil {
		return nets.AdamState{}, err
	}
	s := nets.AdamState{M: make([][]float32, params), V: make([][]float32, params)}
	step, err := strconv.Atoi(f.Metadata[MetaAdamStep])
	if err != nil || step < 0 {
		return s, fmt.Errorf("%s: metadata %s = %q is not a step count", path, MetaAdamStep, f.Metadata[MetaAdamStep])
	}
	if n := f.Metadata["canopy.rl.adam_params"]; n != strconv.Itoa(params) {
		return s, fmt.Errorf("%s: optimizer state of %s parameters, the net has %d", path, n, params)
	}
	s.Step = step
	for _, t := range f.Tensors {
		var i int
		var kind byte
		if _, err := fmt.Sscanf(t.Name, "%c.%d", &kind, &i); err != nil || i < 0 || i >= params || (kind != 'm' && kind != 'v') {
			return s, fmt.Errorf("%s: unexpected tensor %q", path, t.Name)
		}
		x, err := t.Float32()
		if err != nil {
			return s, fmt.Errorf("%s: tensor %s: %v", path, t.Name, err)
		}
		if kind == 'm' {
			s.M[i] = x
		} else {
			s.V[i] = x
		}
	}
	return s, nil
}

var checkpointName = regexp.MustCompile(`^update-([0-9]{6})\.safetensors$`)

// LatestCheckpoint returns the checkpoint of dir with the highest update
// number, and that number; "" and 0 when there is none (or no dir).
func LatestCheckpoint(dir string) (path string, update int, err error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", 0, nil
	}
	if err != nil {
		return "", 0, err
	}
	for _, e := range ents {
		m := checkpointName.FindStringSubmatch(e.Name())
		if m == nil || !e.Type().IsRegular() {
			continue
		}
		u, _ := strconv.Atoi(m[1])
		if path == "" || u > update {
			path, update = filepath.Join(dir, e.Name()), u
		}
	}
	return path, update, nil
}

// SaveCheckpoint writes net with info's metadata to
// CheckpointPath(dir, info.Updates), atomically, and returns the path.
func SaveCheckpoint(dir string, net *nets.Net, info CheckpointInfo) (string, error) {
	return saveWeights(dir, net, info)
}

// weightsSaver is what a checkpoint needs of a network (nets.Net and
// nets.Recurrent).
type weightsSaver interface {
	SaveWithMetadata(path string, extra map[string]string) error
}

func saveWeights(dir string, net weightsSaver, info CheckpointInfo) (string, error) {
	if info.Updates < 0 || info.Updates > MaxUpdate {
		return "", fmt.Errorf("rl: checkpoint of update %d, want 0..%d", info.Updates, MaxUpdate)
	}
	path := CheckpointPath(dir, info.Updates)
	if err := net.SaveWithMetadata(path, info.Metadata()); err != nil {
		return "", fmt.Errorf("rl: writing %s: %w", path, err)
	}
	return path, nil
}

// LoadCheckpoint reads a PPO checkpoint and its metadata. A file without
// PPO metadata is an error.
func LoadCheckpoint(path string) (*nets.Net, CheckpointInfo, error) {
	return loadCheckpoint(path, nets.LoadWithMetadata)
}

// loadCheckpoint reads the net at path with load, plain or recurrent, and
// parses its PPO metadata.
func loadCheckpoint[N any](path string, load func(string) (N, map[string]string, error)) (N, CheckpointInfo, error) {
	var zero N
	net, meta, err := load(path)
	if err != nil {
		return zero, CheckpointInfo{}, err
	}
	info, err := checkpointInfo(path, meta)
	if err != nil {
		return zero, info, err
	}
	return net, info, nil
}

// checkpointInfo parses the PPO metadata of the weights file at path.
func checkpointInfo(path string, meta map[string]string) (CheckpointInfo, error) {
	info, ok, err := ParseCheckpointInfo(meta)
	if err != nil {
		return info, fmt.Errorf("%s: %w", path, err)
	}
	if !ok {
		return info, fmt.Errorf("%s: not a PPO checkpoint (no %s metadata)", path, MetaUpdates)
	}
	return info, nil
}

// Metrics is one line of metrics.jsonl: one PPO update.
type Metrics struct {
	Update  int     `json:"update"`  // 1-based update number
	Samples int64   `json:"samples"` // environment steps trained on so far (cumulative)
	Time    float64 `json:"time_s"`  // seconds this update took (collection and training)
	// SamplesPerSec is this update's samples over its time.
	SamplesPerSec float64 `json:"samples_per_s"`
	LR            float64 `json:"lr"`
	EntropyCoef   float64 `json:"entropy_coef"`
	Loss          float64 `json:"loss"`
	PolicyLoss    float64 `json:"policy_loss"`
	ValueLoss     float64 `json:"value_loss"`
	Entropy       float64 `json:"entropy"`
	ApproxKL      float64 `json:"approx_kl"`
	ClipFrac      float64 `json:"clip_frac"`
	GradNorm      float64 `json:"grad_norm"`
	// ExplainedVariance is absent when the value targets had no variance.
	ExplainedVariance *float64 `json:"explained_variance,omitempty"`
	// The games against the opponent that ended during this update's
	// rollout, from the learner's side.
	Episodes   int64   `json:"episodes"`
	Wins       int64   `json:"wins"`
	Draws      int64   `json:"draws"`
	Losses     int64   `json:"losses"`
	WinRate    float64 `json:"win_rate"`
	MeanReturn float64 `json:"mean_return"`
	MeanLength float64 `json:"mean_length"`
	// Opponents is the same per opponent kind that played a game (the
	// kinds of a league: latest, pool, and the fixed opponents' names).
	Opponents map[string]KindMetrics `json:"opponents,omitempty"`
}

// KindMetrics is the games of one update against one opponent kind.
type KindMetrics struct {
	Episodes int64   `json:"episodes"`
	Wins     int64   `json:"wins"`
	Draws    int64   `json:"draws"`
	Losses   int64   `json:"losses"`
	WinRate  float64 `json:"win_rate"`
}

// NewMetrics fills a Metrics line from an update's statistics.
func NewMetrics(update int, samples int64, st UpdateStats, d time.Duration) Metrics {
	m := Metrics{
		Update: update, Samples: samples, Time: d.Seconds(), LR: st.LR,
		Loss: st.Loss.Total, PolicyLoss: st.Loss.Policy, ValueLoss: st.Loss.Value, Entropy: st.Loss.Entropy,
		ApproxKL: st.Loss.ApproxKL, ClipFrac: st.Loss.ClipFrac, GradNorm: st.GradNorm,
		Episodes: st.Episodes.Episodes, Wins: st.Episodes.Wins, Draws: st.Episodes.Draws, Losses: st.Episodes.Losses,
		WinRate: st.Episodes.WinRate(), MeanReturn: st.Episodes.MeanReturn(), MeanLength: st.Episodes.MeanLength(),
	}
	m.EntropyCoef = st.EntropyCoef
	for k, e := range st.ByKind {
		if e.Episodes == 0 || k >= len(st.Kinds) {
			continue
		}
		if m.Opponents == nil {
			m.Opponents = map[string]KindMetrics{}
		}
		m.Opponents[st.Kinds[k]] = KindMetrics{Episodes: e.Episodes, Wins: e.Wins, Draws: e.Draws, Losses: e.Losses, WinRate: e.WinRate()}
	}
	if d > 0 {
		m.SamplesPerSec = float64(st.Samples) / d.Seconds()
	}
	if ev := st.ExplainedVariance; !math.IsNaN(ev) && !math.IsInf(ev, 0) {
		m.ExplainedVariance = &ev
	}
	return m
}

// AppendMetrics appends m as one line to dir's metrics.jsonl.
func AppendMetrics(dir string, m Metrics) error {
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("rl: metrics of update %d: %w", m.Update, err)
	}
	f, err := os.OpenFile(filepath.Join(dir, MetricsFile), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadMetrics returns the lines of dir's metrics.jsonl (none when it does
// not exist). Lines that do not parse (a line cut short by a crash) are
// skipped.
func ReadMetrics(dir string) ([]Metrics, error) {
	b, err := os.ReadFile(filepath.Join(dir, MetricsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Metrics
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m Metrics
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.Update > 0 {
			out = append(out, m)
		}
	}
	return out, sc.Err()
}

// trimMetrics rewrites dir's metrics.jsonl, atomically, with the lines of
// updates 1..upto only (each update once, the last line written for it).
func trimMetrics(dir string, upto int) error {
	ms, err := ReadMetrics(dir)
	if err != nil {
		return err
	}
	byUpdate := make(map[int]Metrics, len(ms))
	for _, m := range ms {
		if m.Update <= upto {
			byUpdate[m.Update] = m
		}
	}
	var buf bytes.Buffer
	for u := 1; u <= upto; u++ {
		if m, ok := byUpdate[u]; ok {
			b, err := json.Marshal(m)
			if err != nil {
				return err
			}
			buf.Write(b)
			buf.WriteByte('\n')
		}
	}
	return atomicfile.WriteFile(filepath.Join(dir, MetricsFile), buf.Bytes())
}

// LoadRunConfig reads dir's ppo.json; ok is false when it does not exist.
func LoadRunConfig(dir string) (c RunConfig, ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if errors.Is(err, fs.ErrNotExist) {
		return c, false, nil
	}
	if err != nil {
		return c, false, err
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return c, true, fmt.Errorf("%s: %v", filepath.Join(dir, ConfigFile), err)
	}
	return c, true, nil
}

// Start begins a new run in dir (which must exist): it refuses a
// directory that holds a checkpoint, metrics or a ppo.json already
// (ErrRunExists), then writes c to ppo.json.
//
// A run that produced nothing (its settings, perhaps its update-0
// checkpoint, and no metrics: it failed before its first update) binds
// nothing: Start replaces it, so that the corrected command runs in the
// same directory.
func Start(dir string, c RunConfig) error {
	if fi, err := os.Stat(filepath.Join(dir, MetricsFile)); err == nil && fi.Size() > 0 {
		return fmt.Errorf("%s: %w (%s exists)", dir, ErrRunExists, MetricsFile)
	}
	p, u, err := LatestCheckpoint(dir)
	if err != nil {
		return err
	}
	if p != "" && u > 0 {
		return fmt.Errorf("%s: %w (%s exists)", dir, ErrRunExists, filepath.Base(p))
	}
	for _, f := range []string{CheckpointPath(dir, 0), AdamPath(dir, 0), filepath.Join(dir, MetricsFile)} {
		if err := os.Remove(f); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return SaveRunConfig(dir, c)
}

// SaveRunConfig writes c to dir's ppo.json, atomically (Start does it for
// a new run; a resumed run given a new target rewrites it).
func SaveRunConfig(dir string, c RunConfig) error {
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(dir, ConfigFile), append(b, '\n'))
}

// Resumed is what Resume restores of a run.
type Resumed struct {
	Config     RunConfig
	Net        *nets.Net       // the weights of the last checkpoint (nil for a recurrent net)
	Rec        *nets.Recurrent // the weights of a recurrent run's last checkpoint
	Info       CheckpointInfo
	Checkpoint string // its path
	Metrics    []Metrics
	// Adam is the optimizer state saved with the checkpoint; nil for a
	// checkpoint without one (update 0, or a run from before they were
	// saved), after which Adam restarts.
	Adam *nets.AdamState
}

// Resume reads the run in dir for continuing it: its ppo.json, its last
// checkpoint (the net, the update count and the samples seen), and its
// metrics, which it trims, atomically, to the updates up to that
// checkpoint (later lines belong to updates whose weights were lost and
// will be redone). A directory without a checkpoint is ErrNoRun.
//
// Adam's moments and step count are restored from the checkpoint's
// AdamPath file when it exists. The games in progress and the random
// streams are not saved: a run with Options.FreshGames needs neither (each
// update starts new games from streams of its own), so it resumes exactly;
// without it a resumed run draws new streams (see SessionSeed).
func Resume(dir string) (Resumed, error) {
	var r Resumed
	c, ok, err := LoadRunConfig(dir)
	if err != nil {
		return r, err
	}
	path, _, err := LatestCheckpoint(dir)
	if err != nil {
		return r, err
	}
	if !ok || path == "" {
		return r, fmt.Errorf("%s: %w", dir, ErrNoRun)
	}
	var (
		net     *nets.Net
		rec     *nets.Recurrent
		info    CheckpointInfo
		nParams int
	)
	if recurrentFile(path) {
		rec, info, err = LoadRecurrentCheckpoint(path)
		if rec != nil {
			nParams = len(rec.Params())
		}
	} else {
		net, info, err = LoadCheckpoint(path)
		if net != nil {
			nParams = len(net.Params())
		}
	}
	if err != nil {
		return r, err
	}
	if info.Game != c.Game {
		return r, fmt.Errorf("%s was trained on %q, but the run's %s says %q", path, info.Game, ConfigFile, c.Game)
	}
	if err := trimMetrics(dir, info.Updates); err != nil {
		return r, err
	}
	ms, err := ReadMetrics(dir)
	if err != nil {
		return r, err
	}
	r = Resumed{Config: c, Net: net, Rec: rec, Info: info, Checkpoint: path, Metrics: ms}
	ap := AdamPath(dir, info.Updates)
	if _, err := os.Stat(ap); err == nil {
		s, err := LoadAdamState(ap, nParams)
		if err != nil {
			return r, err
		}
		r.Adam = &s
	}
	return r, nil
}

// SessionSeed is the seed of a training session of a run with seed seed
// that starts after update start: a fresh run (start 0) uses seed itself,
// a resumed one new streams derived from both, so that resuming does not
// replay the random choices of the first session.
func SessionSeed(seed uint64, start int) uint64 {
	if start == 0 {
		return seed
	}
	x := seed ^ uint64(start)*0x9E3779B97F4A7C15
	x ^= x >> 31
	x *= 0xBF58476D1CE4E5B9
	return x ^ x>>29
}

// TrainOptions configures Train.
type TrainOptions struct {
	Dir string
	// Updates is the update count the run should reach; Train does
	// Updates - p.Updates updates.
	Updates int
	// Every is the number of updates between checkpoints (the last update
	// is always saved); 0 saves the last only.
	Every int
	// Info is the metadata of the checkpoints (Updates and Samples are
	// Train's); Info.Samples holds the samples of earlier sessions.
	Info CheckpointInfo
	// Progress, when set, is called after every update.
	Progress func(Metrics)
	// Snapshot, when set, is called with the net after every checkpoint
	// at the Every cadence (not the last or an interrupted one off the
	// cadence), to add it to a League's pool; SnapshotRecurrent is the
	// same for a recurrent learner.
	Snapshot          func(*nets.Net) error
	SnapshotRecurrent func(*nets.Recurrent) error
}

// TrainResult summarises a Train call.
type TrainResult struct {
	Info       CheckpointInfo // of the last checkpoint written
	Checkpoint string         // its path ("" when none was written)
	Last       Metrics        // the last update's metrics
	Samples    int64          // samples collected in this call
	Seconds    float64
}

// SamplesPerSec is the call's samples over its wall time.
func (r TrainResult) SamplesPerSec() float64 {
	if r.Seconds <= 0 {
		return 0
	}
	return float64(r.Samples) / r.Seconds
}

// Train runs PPO updates (p.Iterate) from p.Updates to o.Updates,
// appending a Metrics line to o.Dir's metrics.jsonl after each and
// writing a checkpoint every o.Every updates and after the last. When ctx
// is cancelled it stops between updates, saves a checkpoint of the
// updates done and returns ctx's error; on any other error it saves
// nothing more (the last checkpoint stays the last good state).
func Train(ctx context.Context, p *PPO, o TrainOptions) (TrainResult, error) {
	var res TrainResult
	if o.Updates < p.Updates || o.Updates > MaxUpdate {
		return res, fmt.Errorf("rl: train to update %d from update %d (at most %d)", o.Updates, p.Updates, MaxUpdate)
	}
	if o.Every < 0 {
		return res, fmt.Errorf("rl: checkpoint every %d updates, want >= 0", o.Every)
	}
	info := o.Info
	info.Updates = p.Updates
	saved := p.Updates
	start := time.Now()
	save := func() error {
		if saved == p.Updates && res.Checkpoint != "" {
			return nil
		}
		if err := SaveAdamState(AdamPath(o.Dir, p.Updates), p.AdamState()); err != nil {
			return err
		}
		path, err := p.saveCheckpoint(o.Dir, info)
		if err != nil {
			return err
		}
		res.Info, res.Checkpoint, saved = info, path, p.Updates
		return nil
	}
	for p.Updates < o.Updates {
		if err := ctx.Err(); err != nil {
			res.Seconds = time.Since(start).Seconds()
			if p.Updates > saved {
				if serr := save(); serr != nil {
					return res, serr
				}
			}
			return res, err
		}
		t0 := time.Now()
		st, err := p.Iterate()
		if err != nil {
			return res, fmt.Errorf("update %d: %w", p.Updates+1, err)
		}
		d := time.Since(t0)
		info.Updates = p.Updates
		info.Samples += int64(st.Samples)
		res.Samples += int64(st.Samples)
		m := NewMetrics(p.Updates, info.Samples, st, d)
		if err := AppendMetrics(o.Dir, m); err != nil {
			return res, err
		}
		res.Last = m
		onCadence := o.Every > 0 && p.Updates%o.Every == 0
		if onCadence || p.Updates == o.Updates {
			if err := save(); err != nil {
				return res, err
			}
		}
		if onCadence && o.Snapshot != nil && p.Net != nil {
			if err := o.Snapshot(p.Net); err != nil {
				return res, err
			}
		}
		if onCadence && o.SnapshotRecurrent != nil && p.Rec != nil {
			if err := o.SnapshotRecurrent(p.Rec); err != nil {
				return res, err
			}
		}
		if o.Progress != nil {
			o.Progress(m)
		}
	}
	res.Seconds = time.Since(start).Seconds()
	return res, nil
}

// PoolCheckpoints returns the checkpoints of dir that a League's pool
// holds after update upto when a snapshot is taken at every checkpoint on
// the every cadence (update 0 included): the last n of them, oldest first.
func PoolCheckpoints(dir string, upto, every, n int) ([]string, error) {
	if every < 1 {
		return nil, fmt.Errorf("rl: checkpoint cadence %d, want >= 1", every)
	}
	var out []string
	for u := upto - upto%every; u >= 0 && len(out) < n; u -= every {
		p := CheckpointPath(dir, u)
		if _, err := os.Stat(p); err != nil {
			return nil, fmt.Errorf("rl: the league pool needs %s: %w", p, err)
		}
		out = append(out, p)
	}
	slices.Reverse(out)
	return out, nil
}
