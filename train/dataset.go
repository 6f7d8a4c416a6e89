package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/internal/readfile"
	"github.com/canopy-go/canopy/selfplay"
	"github.com/canopy-go/canopy/spec"
)

// Manifest format and file name of a self-play run directory (package
// selfplay writes them; they are repeated here so that reading a run does
// not depend on the code that writes it).
const (
	manifestFormat = "canopy-selfplay/1"
	manifestName   = "manifest.json"
)

// manifest is the part of selfplay.Manifest the trainer reads.
type manifest struct {
	Format   string `json:"format"`
	Game     string `json:"game"`
	ObsShape []int  `json:"obs_shape"`
	Actions  int    `json:"actions"`
	Games    int64  `json:"games"`
	Shards   []struct {
		File      string `json:"file"`
		Positions int    `json:"positions"`
	} `json:"shards"`
}

// ErrNoGame is returned by LoadDataset when no game is given and no path
// has a manifest naming one (bare .npz shards).
var ErrNoGame = errors.New("the game is unknown: shards given without a run directory carry no manifest; name the game")

// ErrOtherGame is returned (wrapped) by LoadDataset when a run's manifest
// names another game than the one given: the caller asked for the wrong
// data or the wrong game.
var ErrOtherGame = errors.New("self-play data of another game")

// otherGameError is an error that is ErrOtherGame; its message names
// both games.
type otherGameError struct{ msg string }

func (e otherGameError) Error() string        { return e.msg }
func (e otherGameError) Is(target error) bool { return target == ErrOtherGame }

// DatasetOptions selects what LoadDataset keeps. The zero value keeps
// everything and stops at the first bad shard.
type DatasetOptions struct {
	// Window keeps only the last Window positions, in game order (the
	// paths in the order given, each run's shards in manifest order, each
	// shard's rows in file order); 0 keeps all.
	Window int
	// Iterations keeps only the last Iterations paths (each path given to
	// LoadDataset is one self-play iteration); 0 keeps all.
	Iterations int
	// SkipBad skips an unreadable, truncated or inconsistent shard with a
	// warning instead of failing. A run whose manifest names another game,
	// observation shape or action count is an error all the same.
	SkipBad bool
	// Log, when not nil, receives each warning as one line.
	Log io.Writer
}

// Table declares the replay window's options bound to o (flags of
// `canopy train`; see WindowTable).
func (o *DatasetOptions) Table() spec.Table { return WindowTable(&o.Window, &o.Iterations) }

// WindowTable declares the replay window's options, window (positions)
// and window-iters (iterations), bound to positions and iters: the one
// declaration behind `canopy train`'s DatasetOptions and `canopy zero`'s
// window settings.
func WindowTable(positions, iters *int) spec.Table {
	return spec.Table{
		spec.Int("window", positions, 0, 0, math.MaxInt32, "keep the last N positions (0 = all)"),
		spec.Int("window-iters", iters, 0, 0, MaxIteration, "keep the last K self-play iterations (0 = all)"),
	}
}

// Check reports an option out of range, naming it.
func (o *DatasetOptions) Check() error {
	c := *o // Table.Check stores what it re-validates: keep o untouched
	return c.Table().Check()
}

// Source is one shard that contributed positions to a Dataset.
type Source struct {
	Path      string `json:"path"`
	Iteration int    `json:"iteration"` // index of the path given to LoadDataset
	Positions int    `json:"positions"` // rows kept (the window may cut the oldest shard)
}

// Dataset is a replay window of self-play positions held in memory:
// for each position the observation from the mover's view, the target
// policy (visit distribution), the target value (the final outcome for the
// mover, in [-1, 1]) and, when the shards carry them, the legal-action
// mask and the search's root value for the mover (root_q, in [-1, 1]).
//
// Every position has been validated at load time: finite observation,
// policy entries >= 0 summing to 1 (within 1e-3) and zero on illegal
// actions, value and root_q in [-1, 1], at least one legal action.
//
// A Dataset is immutable after LoadDataset returns and safe for concurrent
// use.
type Dataset struct {
	game    games.Game
	obsSize int
	actions int
	n       int
	obs     obsRows   // n rows of obsSize values (coded when they fit)
	policy  []float32 // n x actions
	value   []float32 // n
	legal   []uint8   // n x actions, 1 = legal; nil when no shard had one
	// rootQ is the search's value of each position for the mover (the
	// shards' root_q), 0 for positions of shards without one; nil when no
	// shard had one. noQ names a shard without root_q ("" when all have
	// it).
	rootQ []float32
	noQ   string
	// values are the per-player value targets (the shards' values
	// arrays: n rows of players values, seat-rotated, mover first) when
	// every shard has them; nil otherwise, noValues then naming a shard
	// without them.
	values   []float32
	players  int
	noValues string
	// rootValues are the search's per-player root values (the shards'
	// root_values: n rows of players values, seat-rotated, first the
	// mover's root_q) when every shard with values has them; nil
	// otherwise.
	rootValues []float32
	sources    []Source
	warnings   []string
}

// Game returns the game the positions belong to.
func (d *Dataset) Game() games.Game { return d.game }

// Len is the number of positions.
func (d *Dataset) Len() int { return d.n }

// HasLegal reports whether the positions carry legal-action masks (shards
// with an array "legal"); positions from shards without one count every
// action as legal.
func (d *Dataset) HasLegal() bool { return d.legal != nil }

// HasRootQ reports whether every position carries the search's root
// value (every shard has an array "root_q"), which value targets mixing
// the outcome with root Q need (Options.QMix).
func (d *Dataset) HasRootQ() bool { return d.rootQ != nil && d.noQ == "" }

// SeatValues returns the number of players of the per-player value
// targets (a per-player value head's width) when every position has
// them, else 0.
func (d *Dataset) SeatValues() int {
	if d.values == nil {
		return 0
	}
	return d.players
}

// RootQ returns the search's value of position i for the mover (0 when
// its shard had none; see HasRootQ).
func (d *Dataset) RootQ(i int) float32 {
	if d.rootQ == nil {
		return 0
	}
	return d.rootQ[i]
}

// Sources lists the shards loaded, oldest first.
func (d *Dataset) Sources() []Source { return slices.Clone(d.sources) }

// Warnings lists the shards skipped under DatasetOptions.SkipBad, one
// line each naming the file and the reason.
func (d *Dataset) Warnings() []string { return slices.Clone(d.warnings) }

// Row writes position i's observation into obs (ObsSize values) and
// returns its policy (a slice into the dataset: read only), its value,
// and its legal mask (nil when the dataset has none).
func (d *Dataset) Row(i int, obs []float32) (policy []float32, value float32, legal []uint8) {
	d.obs.row(i, obs[:d.obsSize])
	policy = d.policy[i*d.actions : (i+1)*d.actions]
	if d.legal != nil {
		legal = d.legal[i*d.actions : (i+1)*d.actions]
	}
	return policy, d.value[i], legal
}

// RootValues returns the search's value of position i for every player
// (seat-rotated, mover first, entry 0 its RootQ), or nil when some shard
// lacks them (written before self-play recorded root_values).
func (d *Dataset) RootValues(i int) []float32 {
	if d.rootValues == nil {
		return nil
	}
	return d.rootValues[i*d.players : (i+1)*d.players]
}

// Values returns position i's per-player value targets (seat-rotated,
// mover first), or nil when the dataset has none (SeatValues 0).
func (d *Dataset) Values(i int) []float32 {
	if d.values == nil {
		return nil
	}
	return d.values[i*d.players : (i+1)*d.players]
}

// CheckValueSize reports whether a network whose value head gives vs
// values per position (nets.Net.ValueSize) can train on d: every
// network can learn the mover's value, a per-player head needs every
// position's per-player targets for as many players.
func (d *Dataset) CheckValueSize(vs int) error {
	switch {
	case vs <= 1:
		return nil
	case d.values == nil && d.game.NumPlayers() <= 2:
		return fmt.Errorf("the network has a per-player value head (%d players), but self-play records per-player targets only for games of three or more players; "+
			"for %s train a network with the scalar value head (canopy net init --value-players 1), which is exact for two players", vs, d.game.Spec())
	case d.values == nil:
		return fmt.Errorf("the network has a per-player value head (%d players), but shard %s has no per-player value targets (array values: "+
			"self-play records them for games of three or more players since value heads could have one output per player); "+
			"regenerate the self-play data, or train a network with the scalar value head", vs, d.noValues)
	case vs != d.players:
		return fmt.Errorf("the network's value head has %d players, the data's value targets %d; use a network made for %d players", vs, d.players, d.players)
	}
	return nil
}

// ObsSize is the number of values of an observation.
func (d *Dataset) ObsSize() int { return d.obsSize }

// ObsBytes is the memory the observations take, and Coded reports
// whether they are kept as one-byte codes (see obsRows).
func (d *Dataset) ObsBytes() (bytes int64, coded bool) { return d.obs.bytes(), !d.obs.isRaw() }

// iteration is one path given to LoadDataset.
type iteration struct {
	path   string
	m      *manifest // nil for a shard given directly
	shards []shardRef
}

type shardRef struct {
	path      string
	positions int // from the manifest; -1 when unknown
}

// LoadDataset loads the positions of one or more self-play iterations.
// Each path is a run directory written by `canopy selfplay` (holding
// manifest.json), the manifest.json file itself, or a single .npz shard;
// each counts as one iteration, in the order given (oldest first).
//
// g is the game the data must belong to. With g nil the game comes from
// the first manifest (it must be registered: import its package or
// games/all). Every manifest must name g's spec, observation shape and
// action count; every shard must match them and its manifest's position
// count. Errors name the file, what differs, and how to fix it.
//
// Only the shards inside the window (opt.Iterations, opt.Window) are read.
func LoadDataset(paths []string, g games.Game, opt DatasetOptions) (*Dataset, error) {
	if err := opt.Check(); err != nil {
		return nil, err
	}
	if len(paths) == 0 {
		return nil, errors.New("no data: give one or more self-play run directories or .npz shards")
	}
	its := make([]iteration, len(paths))
	seen := map[string]string{} // a shard's absolute path -> the --data entry that lists it
	for i, p := range paths {
		it, err := resolve(p)
		if err != nil {
			return nil, err
		}
		for _, ref := range it.shards {
			abs, err := filepath.Abs(ref.path)
			if err != nil {
				abs = ref.path
			}
			if prev, dup := seen[abs]; dup {
				return nil, fmt.Errorf("shard %s is given twice (by %s and %s): its positions would be trained on twice; list each run once", ref.path, prev, p)
			}
			seen[abs] = p
		}
		its[i] = it
	}
	if g == nil {
		for _, it := range its {
			if it.m == nil {
				continue
			}
			var err error
			if g, err = games.New(it.m.Game); err != nil {
				return nil, fmt.Errorf("%s names game %q: %v", it.path, it.m.Game, err)
			}
			break
		}
		if g == nil {
			return nil, ErrNoGame
		}
	}
	for _, it := range its {
		if it.m != nil {
			if err := checkManifest(it.path, it.m, g); err != nil {
				return nil, err
			}
		}
	}
	first := 0
	if opt.Iterations > 0 && len(its) > opt.Iterations {
		first = len(its) - opt.Iterations
	}
	d := &Dataset{game: g, obsSize: games.ObservationSize(g), actions: g.NumActions()}
	// Read shards newest first until the window is full, then lay them
	// out oldest first.
	var loaded []*shard
	total := 0
	// A game is in one shard of its run: ids met again in another shard
	// would be trained on twice.
	gameShard := map[[2]int64]string{} // (iteration, game id) -> shard path
	for i := len(its) - 1; i >= first && (opt.Window == 0 || total < opt.Window); i-- {
		it := &its[i]
		for j := len(it.shards) - 1; j >= 0 && (opt.Window == 0 || total < opt.Window); j-- {
			ref := it.shards[j]
			sh, err := loadShard(ref, g, it.m != nil)
			if err != nil {
				var bad *badShardError
				if opt.SkipBad && errors.As(err, &bad) {
					w := fmt.Sprintf("skipping shard %s: %v", ref.path, bad.err)
					d.warnings = append(d.warnings, w)
					if opt.Log != nil {
						fmt.Fprintln(opt.Log, "warning: "+w)
					}
					continue
				}
				return nil, err
			}
			sh.iteration = i
			for k, id := range sh.gameID {
				if k > 0 && sh.gameID[k-1] == id {
					continue
				}
				key := [2]int64{int64(i), id}
				if prev, dup := gameShard[key]; dup && prev != sh.path {
					return nil, fmt.Errorf("game %d of %s is in shard %s and in %s: its positions would be trained on twice; run `canopy selfplay --resume` on the run to repair it", id, it.path, prev, sh.path)
				}
				gameShard[key] = sh.path
			}
			loaded = append(loaded, sh)
			total += sh.n
		}
	}
	slices.Reverse(loaded)
	// Each self-play run loaded whole is laid out in (game, ply) order,
	// independent of its sharding. (The oldest run may be cut by the
	// window at shard granularity; it keeps file order.)
	var ordered []*shard
	for k := 0; k < len(loaded); {
		j := k
		for j < len(loaded) && loaded[j].iteration == loaded[k].iteration {
			j++
		}
		if whole := j-k == len(its[loaded[k].iteration].shards); whole && its[loaded[k].iteration].m != nil {
			ordered = append(ordered, canonical(loaded[k:j])...)
		} else {
			ordered = append(ordered, loaded[k:j]...)
		}
		k = j
	}
	loaded = ordered
	skip := 0 // rows of the oldest shard outside the window
	if opt.Window > 0 && total > opt.Window {
		skip = total - opt.Window
		total = opt.Window
	}
	if total == 0 {
		return nil, fmt.Errorf("no positions in %s (the runs hold no shards yet, or every shard was skipped)", strings.Join(paths, ", "))
	}
	d.n = total
	d.obs = obsRows{size: d.obsSize}
	d.obs.reserve(total)
	d.policy = make([]float32, 0, total*d.actions)
	d.value = make([]float32, 0, total)
	hasLegal, hasQ := false, false
	hasValues := len(loaded) > 0
	for _, sh := range loaded {
		hasLegal = hasLegal || sh.legal != nil
		hasQ = hasQ || sh.rootQ != nil
		if sh.rootQ == nil && d.noQ == "" {
			d.noQ = sh.noQ
		}
		if sh.values == nil && hasValues {
			hasValues, d.noValues = false, sh.path
		}
	}
	if hasValues {
		d.players = loaded[0].players
		for _, sh := range loaded {
			if sh.players != d.players {
				return nil, fmt.Errorf("shard %s has values of %d players, shard %s of %d; train on data of one player count", sh.path, sh.players, loaded[0].path, d.players)
			}
		}
		d.values = make([]float32, 0, total*d.players)
		hasRV := true
		for _, sh := range loaded {
			hasRV = hasRV && sh.rootValues != nil
		}
		if hasRV {
			d.rootValues = make([]float32, 0, total*d.players)
		}
	}
	if hasLegal {
		d.legal = make([]uint8, 0, total*d.actions)
	}
	if hasQ {
		d.rootQ = make([]float32, 0, total)
	}
	for k, sh := range loaded {
		lo := 0
		if k == 0 {
			lo = skip
		}
		if lo >= sh.n {
			// Cannot happen: the loop stops as soon as the window is full,
			// so the oldest shard loaded keeps at least one row.
			continue
		}
		d.obs.appendRows(&sh.obs, lo, sh.n)
		d.policy = append(d.policy, sh.policy[lo*d.actions:]...)
		d.value = append(d.value, sh.value[lo:]...)
		if hasValues {
			d.values = append(d.values, sh.values[lo*d.players:]...)
		}
		if d.rootValues != nil {
			d.rootValues = append(d.rootValues, sh.rootValues[lo*d.players:]...)
		}
		if hasQ {
			if sh.rootQ != nil {
				d.rootQ = append(d.rootQ, sh.rootQ[lo:]...)
			} else {
				d.rootQ = append(d.rootQ, make([]float32, sh.n-lo)...)
			}
		}
		if hasLegal {
			if sh.legal != nil {
				d.legal = append(d.legal, sh.legal[lo*d.actions:]...)
			} else {
				for range (sh.n - lo) * d.actions {
					d.legal = append(d.legal, 1)
				}
			}
		}
		d.sources = append(d.sources, Source{Path: sh.path, Iteration: sh.iteration, Positions: sh.n - lo})
	}
	return d, nil
}

// missingPath is the error of a data path that does not exist; it is an
// fs.ErrNotExist (errors.Is), so that a command can call it a usage error.
type missingPath string

func (p missingPath) Error() string {
	return string(p) + " does not exist (give a self-play run directory or an .npz shard)"
}

func (missingPath) Is(target error) bool { return target == fs.ErrNotExist }

// resolve turns one path into an iteration: a run directory, its
// manifest, or one shard.
func resolve(p string) (iteration, error) {
	fi, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return iteration{}, missingPath(p)
		}
		return iteration{}, err
	}
	mpath, dir := "", ""
	switch {
	case fi.IsDir():
		mpath, dir = filepath.Join(p, manifestName), p
		if _, err := os.Stat(mpath); err != nil {
			return iteration{}, fmt.Errorf("%s is not a self-play run directory: it has no %s (`canopy selfplay --out %s` writes one)", p, manifestName, p)
		}
	case strings.HasSuffix(p, ".json"):
		mpath, dir = p, filepath.Dir(p)
	case strings.HasSuffix(p, ".npz"):
		return iteration{path: p, shards: []shardRef{{path: p, positions: -1}}}, nil
	default:
		return iteration{}, fmt.Errorf("%s is neither a run directory, a manifest.json nor an .npz shard", p)
	}
	data, err := readfile.Regular(mpath, maxManifestBytes)
	if err != nil {
		return iteration{}, err
	}
	m := &manifest{}
	if err := json.Unmarshal(data, m); err != nil {
		return iteration{}, fmt.Errorf("%s: bad manifest: %v (is it a self-play manifest?)", mpath, err)
	}
	if m.Format != manifestFormat {
		return iteration{}, fmt.Errorf("%s: manifest format %q, want %q (written by `canopy selfplay`)", mpath, m.Format, manifestFormat)
	}
	if m.Games < 0 || m.Games > selfplay.MaxGames {
		return iteration{}, fmt.Errorf("%s: bad manifest: games = %d, want 0..%d (fix or remove it)", mpath, m.Games, selfplay.MaxGames)
	}
	it := iteration{path: p, m: m}
	listed := map[string]bool{}
	for _, s := range m.Shards {
		if err := selfplay.CheckShardName(s.File); err != nil {
			return iteration{}, fmt.Errorf("%s: shard %q %v; run `canopy selfplay --resume` on it to repair the manifest", mpath, s.File, err)
		}
		if listed[s.File] {
			return iteration{}, fmt.Errorf("%s: shard %q is listed twice (its games would be trained on twice); run `canopy selfplay --resume` on it to repair the manifest", mpath, s.File)
		}
		listed[s.File] = true
		if s.Positions < 0 {
			return iteration{}, fmt.Errorf("%s: shard %q has %d positions", mpath, s.File, s.Positions)
		}
		it.shards = append(it.shards, shardRef{path: filepath.Join(dir, s.File), positions: s.Positions})
	}
	return it, nil
}

// checkManifest compares a run's manifest with the game.
func checkManifest(path string, m *manifest, g games.Game) error {
	fix := fmt.Sprintf("train on data made for %s, or pass the game the data was made for", g.Spec())
	if m.Game != g.Spec() {
		return otherGameError{fmt.Sprintf("%s holds self-play data of game %q, not %s; %s", path, m.Game, g.Spec(), fix)}
	}
	if !slices.Equal(m.ObsShape, g.ObservationShape()) {
		return fmt.Errorf("%s has observations of shape %v, but %s's are %v (made by another version of the game?); %s",
			path, m.ObsShape, g.Spec(), g.ObservationShape(), fix)
	}
	if m.Actions != g.NumActions() {
		return fmt.Errorf("%s has %d actions per policy, but %s has %d; %s", path, m.Actions, g.Spec(), g.NumActions(), fix)
	}
	return nil
}

// badShardError marks a shard that is unreadable or inconsistent (as
// opposed to data of the wrong game): DatasetOptions.SkipBad skips it.
type badShardError struct {
	path string
	err  error
}

func (e *badShardError) Error() string {
	return fmt.Sprintf("shard %s: %v (regenerate it, remove it from the manifest, or pass --skip-bad)", e.path, e.err)
}

func (e *badShardError) Unwrap() error { return e.err }

// shard is one loaded, validated .npz file.
type shard struct {
	path      string
	iteration int
	n         int
	obs       obsRows
	policy    []float32
	value     []float32
	legal     []uint8
	rootQ     []float32 // nil when the shard has no root_q array
	noQ       string    // when rootQ is nil: the path of a shard without root_q
	gameID    []int64   // nil when the shard has no game_id/ply arrays
	ply       []int32
	values    []float32 // n x players; nil when the shard has no values array
	// rootValues: n x players (root_values); nil when the shard has none
	rootValues []float32
	players    int
}

// loadShard reads and validates one shard against g (and the manifest's
// position count when known). Mismatches with the game are plain errors
// for a shard given directly, and bad-shard errors for one listed in a
// manifest that matched the game (the file then contradicts its run).
// Bounds of the files a dataset reads: a self-play manifest (as selfplay
// writes: a few MiB at most) and a shard (16 GiB, far beyond any run's).
// Devices and pipes are refused before reading (see internal/readfile).
const (
	maxManifestBytes = 256 << 20
	maxShardBytes    = 16 << 30
)

func loadShard(ref shardRef, g games.Game, inRun bool) (*shard, error) {
	bad := func(format string, args ...any) error {
		return &badShardError{path: ref.path, err: fmt.Errorf(format, args...)}
	}
	data, err := readfile.Regular(ref.path, maxShardBytes)
	if err != nil {
		return nil, &badShardError{path: ref.path, err: unwrapPath(err)}
	}
	arrays, err := readNPZ(data)
	if err != nil {
		return nil, &badShardError{path: ref.path, err: err}
	}
	get := func(name, descr string) (*npyArray, error) {
		a, ok := arrays[name]
		if !ok {
			names := make([]string, 0, len(arrays))
			for k := range arrays {
				names = append(names, k)
			}
			slices.Sort(names)
			return nil, bad("no array %q (it has: %s); is it a self-play shard?", name, strings.Join(names, ", "))
		}
		if a.descr != descr {
			return nil, bad("array %q has dtype %s, want %s", name, a.descr, descr)
		}
		return a, nil
	}
	obs, err := get("obs", "<f4")
	if err != nil {
		return nil, err
	}
	pol, err := get("policy", "<f4")
	if err != nil {
		return nil, err
	}
	val, err := get("value", "<f4")
	if err != nil {
		return nil, err
	}
	if len(val.shape) != 1 {
		return nil, bad("value has shape %v, want [positions]", val.shape)
	}
	n := val.shape[0]
	if ref.positions >= 0 && n != ref.positions {
		return nil, bad("holds %d positions but its manifest lists %d", n, ref.positions)
	}
	shapeErr := func(format string, args ...any) error {
		if inRun {
			return bad(format, args...)
		}
		return fmt.Errorf("shard %s: %s; train on data made for %s, or pass the game the data was made for",
			ref.path, fmt.Sprintf(format, args...), g.Spec())
	}
	wantObs := append([]int{n}, g.ObservationShape()...)
	if !slices.Equal(obs.shape, wantObs) {
		return nil, shapeErr("obs has shape %v, but %s with %d positions needs %v", obs.shape, g.Spec(), n, wantObs)
	}
	A := g.NumActions()
	if !slices.Equal(pol.shape, []int{n, A}) {
		return nil, shapeErr("policy has shape %v, but %s with %d positions needs [%d %d]", pol.shape, g.Spec(), n, n, A)
	}
	var legal []uint8
	if la, ok := arrays["legal"]; ok {
		if la.descr != "|u1" {
			return nil, bad("array \"legal\" has dtype %s, want uint8 |u1", la.descr)
		}
		if !slices.Equal(la.shape, []int{n, A}) {
			return nil, shapeErr("legal has shape %v, want [%d %d]", la.shape, n, A)
		}
		legal = la.u8
	}
	var rootQ []float32
	if qa, ok := arrays["root_q"]; ok {
		if qa.descr != "<f4" || !slices.Equal(qa.shape, []int{n}) {
			return nil, bad("array \"root_q\" has dtype %s and shape %v, want <f4 [%d]", qa.descr, qa.shape, n)
		}
		rootQ = qa.f32
	}
	obsN := games.ObservationSize(g)
	if err := selfplay.CheckPositions(n, obsN, A, obs.f32, pol.f32, legal, val.f32, rootQ); err != nil {
		return nil, bad("%v", err)
	}
	sh := &shard{path: ref.path, n: n, obs: obsRows{size: obsN}, policy: pol.f32, value: val.f32, legal: legal, rootQ: rootQ}
	if va, ok := arrays["values"]; ok {
		P := g.NumPlayers()
		if va.descr != "<f4" || !slices.Equal(va.shape, []int{n, P}) {
			return nil, shapeErr("values has dtype %s and shape %v, but %s with %d positions needs <f4 [%d %d]", va.descr, va.shape, g.Spec(), n, n, P)
		}
		if err := selfplay.CheckValues(n, P, val.f32, va.f32); err != nil {
			return nil, bad("%v", err)
		}
		sh.values, sh.players = va.f32, P
		if ra, ok := arrays["root_values"]; ok && rootQ != nil {
			if ra.descr != "<f4" || !slices.Equal(ra.shape, []int{n, P}) {
				return nil, shapeErr("root_values has dtype %s and shape %v, but %s with %d positions needs <f4 [%d %d]", ra.descr, ra.shape, g.Spec(), n, n, P)
			}
			if err := selfplay.CheckValues(n, P, rootQ, ra.f32); err != nil {
				return nil, bad("root_values: %v", err)
			}
			sh.rootValues = ra.f32
		}
	}
	sh.obs.append(obs.f32)
	if rootQ == nil {
		sh.noQ = ref.path
	}
	if id, ok := arrays["game_id"]; ok && id.descr == "<i8" && slices.Equal(id.shape, []int{n}) {
		if ply, ok := arrays["ply"]; ok && ply.descr == "<i4" && slices.Equal(ply.shape, []int{n}) {
			sh.gameID, sh.ply = id.i64, ply.i32
		}
	}
	return sh, nil
}

// canonical merges the shards of one self-play run into one whose rows
// are ordered by (game id, ply): the order then depends only on which
// games the run holds, not on how they were grouped into shards (a run
// resumed after an interruption writes other shards than an uninterrupted
// one, with the same games). Shards without game ids are returned as
// they are.
func canonical(group []*shard) []*shard {
	if len(group) == 0 {
		return group
	}
	type row struct {
		sh  *shard
		i   int
		key [2]int64
	}
	var rows []row
	for _, sh := range group {
		if sh.gameID == nil {
			return group
		}
		for i := range sh.n {
			rows = append(rows, row{sh, i, [2]int64{sh.gameID[i], int64(sh.ply[i])}})
		}
	}
	slices.SortStableFunc(rows, func(a, b row) int {
		if a.key[0] != b.key[0] {
			return cmpInt(a.key[0], b.key[0])
		}
		return cmpInt(a.key[1], b.key[1])
	})
	first := group[0]
	A := len(first.policy) / max(first.n, 1)
	m := &shard{path: first.path, iteration: first.iteration, n: len(rows), obs: obsRows{size: first.obs.size}}
	m.obs.reserve(len(rows))
	m.policy = make([]float32, 0, len(rows)*A)
	hasLegal, hasQ, hasValues, hasRV := false, true, true, true
	for _, sh := range group {
		hasLegal = hasLegal || sh.legal != nil
		if sh.rootQ == nil && hasQ {
			hasQ, m.noQ = false, sh.noQ
		}
		hasValues = hasValues && sh.values != nil && sh.players == first.players
		hasRV = hasRV && sh.rootValues != nil
	}
	hasRV = hasRV && hasValues
	if hasValues {
		m.players = first.players
	}
	for _, r := range rows {
		sh, i := r.sh, r.i
		m.obs.appendRows(&sh.obs, i, i+1)
		m.policy = append(m.policy, sh.policy[i*A:(i+1)*A]...)
		m.value = append(m.value, sh.value[i])
		if hasValues {
			m.values = append(m.values, sh.values[i*m.players:(i+1)*m.players]...)
		}
		if hasRV {
			m.rootValues = append(m.rootValues, sh.rootValues[i*m.players:(i+1)*m.players]...)
		}
		if hasQ {
			m.rootQ = append(m.rootQ, sh.rootQ[i])
		}
		if hasLegal {
			if sh.legal != nil {
				m.legal = append(m.legal, sh.legal[i*A:(i+1)*A]...)
			} else {
				for range A {
					m.legal = append(m.legal, 1)
				}
			}
		}
		m.gameID = append(m.gameID, r.key[0])
		m.ply = append(m.ply, int32(r.key[1]))
	}
	return []*shard{m}
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// unwrapPath drops the operation and path of an *fs.PathError (the caller
// names the path), keeping the reason.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
