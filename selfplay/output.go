package selfplay

import (
	"archive/zip"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/canopy-go/canopy/internal/atomicfile"
	"github.com/canopy-go/canopy/internal/readfile"
	"github.com/canopy-go/canopy/internal/rundir"
	"github.com/canopy-go/canopy/search/engine"
)

// ManifestFormat tags manifest.json files written by this package.
const ManifestFormat = "canopy-selfplay/1"

// ManifestName is the manifest's file name inside a run directory.
const ManifestName = "manifest.json"

// MaxGames is the most games one run directory may hold (game ids
// 0..MaxGames-1). It bounds what a manifest, tampered or not, can make
// OpenOutput and Pending allocate: a bit per game and, for Pending, an
// int per unplayed game (128 MiB at most).
const MaxGames = 1 << 24

// maxManifestBytes bounds the manifest file OpenOutput reads. A run of
// MaxGames games in shards of one game each would stay well below it.
const maxManifestBytes = 256 << 20

// maxSeatValues bounds the players of a shard's values array (far above
// any game's MaxPlayers).
const maxSeatValues = 64

// maxShardPositions bounds the rows one shard entry may claim, so that
// sizes computed from it cannot overflow.
const maxShardPositions = 1 << 31

// Manifest describes a self-play run directory: what produced it and which
// games each shard holds. It is rewritten atomically after every shard, so
// it always lists exactly the shards that are complete on disk.
type Manifest struct {
	Format   string `json:"format"`
	Game     string `json:"game"`
	ObsShape []int  `json:"obs_shape"`
	Actions  int    `json:"actions"`
	// Network is the weights file, or a description of the built-in
	// randomly initialised network; NetworkSHA256 is the file's SHA-256
	// or "random" for a built-in network.
	Network       string `json:"network"`
	NetworkSHA256 string `json:"network_sha256"`
	// Backend is the backend of the session that created the run; a
	// resume on another backend keeps it and adds a Session.
	Backend  string   `json:"backend"`
	Settings Settings `json:"settings"`
	// TurnSearch is the whole-turn search that played the games
	// (Config.TurnSearch as TurnSearchSpec writes it), or empty for PUCT
	// self-play with Settings.
	TurnSearch string  `json:"turn_search,omitempty"`
	Seed       uint64  `json:"seed"`
	Games      int     `json:"games"` // games requested (ids 0..Games-1), at most MaxGames
	Shards     []Shard `json:"shards"`
	Totals     Totals  `json:"totals"`
	// Sessions lists, oldest first, the processes that added games to
	// the run: one entry per OpenOutput whose Output flushed a shard.
	// Manifests written before sessions were recorded have none for
	// their earlier sessions.
	Sessions []Session `json:"sessions,omitempty"`
	Updated  string    `json:"updated"`
}

// Shard is one .npz file of the run.
type Shard struct {
	// File is the shard's plain file name inside the run directory.
	File      string `json:"file"`
	Games     int    `json:"games"`
	Positions int    `json:"positions"`
	// GameIDs are the game indices in the shard as sorted, disjoint
	// half-open [lo, hi) ranges; their lengths add up to Games.
	GameIDs [][2]int `json:"game_ids"`
	// The shard's share of the Totals counters of the same names (absent
	// in manifests written before they were recorded).
	Resigned       int   `json:"resigned,omitempty"`
	ResignOffGames int   `json:"resign_off_games,omitempty"`
	FalseResigns   int   `json:"false_resigns,omitempty"`
	Nodes          int64 `json:"nodes,omitempty"`
}

// Totals add up the shards.
type Totals struct {
	Games          int   `json:"games"`
	Positions      int   `json:"positions"`
	Resigned       int   `json:"resigned"`
	ResignOffGames int   `json:"resign_off_games"`
	FalseResigns   int   `json:"false_resigns"`
	Nodes          int64 `json:"nodes"`
}

// Session is one process's part of a run.
type Session struct {
	Backend   string `json:"backend"`
	Started   string `json:"started"` // when OpenOutput ran, RFC 3339 UTC
	Games     int    `json:"games"`   // games this session added to shards
	Positions int    `json:"positions"`
}

// Output writes finished games into shards of a run directory. It is not
// safe for concurrent use; Run serialises its OnGame calls.
//
// Invariants: the manifest on disk lists only shards that are complete
// on disk; done holds exactly the game ids of o.m.Shards; next is above
// the number of every listed shard-NNNNNN.npz, so a new shard never
// replaces a listed one.
type Output struct {
	dir      string
	m        Manifest
	done     bitset // game i is in a listed shard
	next     int    // number of the next shard file
	warnings []string
	backend  string    // this session's backend
	started  time.Time // when this session opened the run
	session  int       // index of this session in m.Sessions; -1 until its first shard

	// A shard is written once ShardPositions positions or FlushGames
	// games (0: no limit) are buffered, or when a game arrives and the
	// oldest buffered one is FlushEvery old. They bound what a crash (or
	// kill -9) loses of the finished games: fewer than FlushGames, and
	// none older than FlushEvery when another game finished since.
	ShardPositions int
	FlushGames     int
	FlushEvery     time.Duration

	buf      []*GameRecord
	bufPos   int
	bufSince time.Time
}

// OpenOutput prepares dir for the run m. Without resume the directory
// must not hold a manifest yet; with resume an existing manifest must
// describe the same run (game, shapes, network, settings, seed) and its
// finished games are kept (m.Games may grow). A missing manifest with
// resume starts afresh.
//
// The caller must have the exclusive use of dir (internal/runlock):
// OpenOutput removes the temporary files of writes an earlier crash cut
// short. On resume it verifies every shard the manifest lists (a plain
// .npz name inside dir; a regular file that parses; the arrays, shapes
// and row counts the manifest states; game ids inside 0..Games-1, in the
// shard's ranges and in no other shard). A shard that fails is dropped
// from the manifest, its file moved aside to NAME.bad, and its games are
// regenerated; Warnings says which, one line per shard. A resume that
// finds nothing to repair leaves the manifest untouched, so a finished
// run resumes on a read-only directory.
func OpenOutput(dir string, m Manifest, resume bool) (*Output, error) {
	if m.Games < 0 || m.Games > MaxGames {
		return nil, fmt.Errorf("a run of %d games: want 0..%d games per run directory (split the run over several directories)", m.Games, MaxGames)
	}
	m.Format = ManifestFormat
	o := &Output{dir: dir, next: 0, backend: m.Backend, started: time.Now().UTC(), session: -1,
		ShardPositions: 16384, FlushGames: 64, FlushEvery: 2 * time.Second}
	path := filepath.Join(dir, ManifestName)
	data, err := readManifest(path)
	if err == nil {
		// A run that saved no game (it failed before its first shard)
		// binds nothing: the new run replaces it, with or without resume.
		var old Manifest
		if json.Unmarshal(data, &old) == nil && len(old.Shards) == 0 && old.Totals.Games == 0 {
			err = fs.ErrNotExist
		}
	}
	switch {
	case err == nil && !resume:
		return nil, fmt.Errorf("%s already holds a self-play run; pass --resume to continue it or choose another --out", dir)
	case err == nil:
		var old Manifest
		if err := json.Unmarshal(data, &old); err != nil {
			return nil, fmt.Errorf("%s: bad manifest: %v (fix or remove it)", path, err)
		}
		old.Settings.Upgrade()
		if err := sameRun(&old, &m); err != nil {
			return nil, fmt.Errorf("cannot resume %s: %w; use the original flags or another --out", dir, err)
		}
		if old.Games < 0 || old.Games > MaxGames {
			return nil, fmt.Errorf("%s: bad manifest: games = %d, want 0..%d (fix or remove it)", path, old.Games, MaxGames)
		}
		o.removeTemps()
		old.Games = max(old.Games, m.Games)
		if old.Backend == "" {
			old.Backend = m.Backend
		}
		o.m = old
		changed, err := o.verify()
		if err != nil {
			return nil, err
		}
		if !changed {
			return o, nil
		}
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		m.Shards, m.Totals, m.Sessions = []Shard{}, Totals{}, nil
		o.m = m
		o.done = newBitset(m.Games)
		o.removeTemps()
	default:
		return nil, err
	}
	return o, o.writeManifest()
}

// readManifest reads the manifest at path, refusing one too large to be
// real.
func readManifest(path string) ([]byte, error) {
	data, err := readfile.Regular(path, maxManifestBytes)
	if errors.Is(err, readfile.ErrTooLarge) || errors.Is(err, readfile.ErrNotRegular) {
		return nil, fmt.Errorf("bad manifest: %v; a run writes a regular file of a few MiB at most (fix or remove it)", err)
	}
	return data, err
}

// sameRun reports how run m differs from the stored run old: the
// format, the game's shapes and the network by their own messages, the
// settings a command's flags set (game, search settings, turn search,
// seed) named by flag through rundir.Compare ("--sims 16 (run: 32)").
func sameRun(old, m *Manifest) error {
	switch {
	case old.Format != ManifestFormat:
		return fmt.Errorf("manifest format %q, want %q", old.Format, ManifestFormat)
	case old.Game == m.Game && (!slices.Equal(old.ObsShape, m.ObsShape) || old.Actions != m.Actions):
		return fmt.Errorf("observation shape %v and %d actions differ from the game's %v and %d", old.ObsShape, old.Actions, m.ObsShape, m.Actions)
	case old.NetworkSHA256 != m.NetworkSHA256:
		return fmt.Errorf("network %s (sha256 %s) differs from %s (sha256 %s)", old.Network, old.NetworkSHA256, m.Network, m.NetworkSHA256)
	}
	cs, err := rundir.Compare(old.runSettings(), m.runSettings(), rundir.Flags{})
	if err != nil {
		return err
	}
	return cs.Err()
}

// runSettings are the manifest's settings that a resumed run keeps, as
// the flags of `canopy selfplay` name them (the keys of Settings are its
// flags).
type runSettings struct {
	Game       string   `json:"game"`
	Settings   Settings `json:"settings"`
	TurnSearch string   `json:"turn_search,omitempty"`
	Seed       uint64   `json:"seed"`
}

func (m *Manifest) runSettings() runSettings {
	return runSettings{Game: m.Game, Settings: m.Settings, TurnSearch: m.TurnSearch, Seed: m.Seed}
}

// removeTemps deletes the temporary files of interrupted atomic writes in
// the run directory, with a warning naming them.
func (o *Output) removeTemps() {
	removed, err := atomicfile.RemoveTemps(o.dir)
	if len(removed) > 0 {
		o.warnf("removed %d temporary files left by an interrupted write: %s", len(removed), strings.Join(removed, ", "))
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		o.warnf("cannot remove temporary files in %s: %v", o.dir, err)
	}
}

func (o *Output) warnf(format string, args ...any) {
	o.warnings = append(o.warnings, fmt.Sprintf(format, args...))
}

// Warnings are the problems OpenOutput found and repaired, one line each
// (a shard dropped and which games will be regenerated, temporary files
// removed).
func (o *Output) Warnings() []string { return o.warnings }

// verify checks every shard o.m lists (see OpenOutput), drops the bad
// ones, rebuilds done and the totals, and reports whether the manifest
// changed. Its error is an I/O failure that stops the resume (a shard
// that cannot be read is not known to be bad).
func (o *Output) verify() (changed bool, err error) {
	m := &o.m
	o.done = newBitset(m.Games)
	names := map[string]bool{}
	kept := []Shard{}
	var dropped []Shard
	var reasons []string
	for _, sh := range m.Shards {
		problem := o.checkRanges(&sh, names)
		if problem == nil {
			problem, err = o.checkFile(&sh)
			if err != nil {
				return false, err
			}
		}
		if problem != nil {
			dropped = append(dropped, sh)
			reasons = append(reasons, problem.Error())
			continue
		}
		names[sh.File] = true
		for _, r := range sh.GameIDs {
			o.done.setRange(r[0], r[1])
		}
		if k, ok := shardNumber(sh.File); ok {
			o.next = max(o.next, k+1)
		}
		kept = append(kept, sh)
	}
	pending := o.pendingRanges()
	t := m.Totals
	t.Games, t.Positions = 0, 0
	for _, sh := range kept {
		t.Games += sh.Games
		t.Positions += sh.Positions
	}
	for i, sh := range dropped {
		t.Resigned = max(0, t.Resigned-sh.Resigned)
		t.ResignOffGames = max(0, t.ResignOffGames-sh.ResignOffGames)
		t.FalseResigns = max(0, t.FalseResigns-sh.FalseResigns)
		t.Nodes = max(0, t.Nodes-sh.Nodes)
		aside := ""
		if !names[sh.File] && o.moveAside(sh.File) {
			bad := sh.File + ".bad"
			if CheckShardName(sh.File) != nil {
				bad = strconv.Quote(bad)
			}
			aside = fmt.Sprintf(" (moved aside to %s)", bad)
		}
		again := "none of its games are missing"
		if ids := intersect(sh.GameIDs, pending); len(ids) > 0 {
			again = "games " + formatRanges(ids) + " will be regenerated"
		}
		o.warnf("%s lists shard %q, which %s; dropped it%s: %s", ManifestName, clip(sh.File), reasons[i], aside, again)
	}
	changed = len(dropped) > 0 || t != m.Totals
	m.Shards, m.Totals = kept, t
	return changed, nil
}

// checkRanges checks sh's file name and game id ranges against the run
// and the shards accepted so far (whose files are names, whose games are
// o.done).
// CheckShardName reports why name cannot be a shard of a manifest: it
// must be a plain .npz file name inside the run directory, without
// control or format characters (NUL, a right-to-left override: never in
// the names the writer makes, and they would reach the terminal in
// messages). Resume drops such a shard; train refuses it.
func CheckShardName(name string) error {
	switch {
	case name == "" || name != filepath.Base(name) || !filepath.IsLocal(name) ||
		strings.ContainsAny(name, `/\`) || !strings.HasSuffix(name, ".npz"):
		return errors.New("is not a plain .npz file name inside the run directory")
	case strings.IndexFunc(name, func(r rune) bool { return !unicode.IsPrint(r) || r == utf8.RuneError }) >= 0:
		return errors.New("has control or format characters in its name")
	}
	return nil
}

func (o *Output) checkRanges(sh *Shard, names map[string]bool) error {
	if err := CheckShardName(sh.File); err != nil {
		return err
	}
	switch {
	case names[sh.File]:
		return errors.New("is listed twice")
	case sh.Games < 1 || sh.Positions < 0 || sh.Positions > maxShardPositions:
		return fmt.Errorf("claims %d games and %d positions", sh.Games, sh.Positions)
	}
	n, prev := 0, 0
	for _, r := range sh.GameIDs {
		lo, hi := r[0], r[1]
		if lo < prev || lo >= hi || hi > o.m.Games {
			return fmt.Errorf("has game id range [%d, %d), not sorted, disjoint and inside [0, %d)", lo, hi, o.m.Games)
		}
		n += hi - lo
		prev = hi
	}
	if n != sh.Games {
		return fmt.Errorf("has game id ranges of %d games but claims %d", n, sh.Games)
	}
	for _, r := range sh.GameIDs {
		if i := o.done.firstIn(r[0], r[1]); i >= 0 {
			return fmt.Errorf("repeats game %d of an earlier shard", i)
		}
	}
	return nil
}

// checkFile reads sh's file: a content problem comes back as problem, a
// failure to read as err.
func (o *Output) checkFile(sh *Shard) (problem, err error) {
	path := filepath.Join(o.dir, sh.File)
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("is missing"), nil
	case err != nil:
		return nil, fmt.Errorf("cannot resume %s: %v", o.dir, err)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("is not a regular file (%s)", fi.Mode().Type()), nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cannot resume %s: %v", o.dir, err)
	}
	defer f.Close()
	zr, err := zip.NewReader(f, fi.Size())
	if err != nil {
		return ioOr(err, "is not a readable .npz archive (truncated?): %v")
	}
	if err := CheckZipNames(f, fi.Size()); err != nil {
		return ioOr(err, "is a damaged .npz archive: %v")
	}
	members := map[string]*zip.File{}
	for _, zf := range zr.File {
		members[zf.Name] = zf
	}
	data := map[string][]byte{}
	for _, a := range shardArrays(nil, o.m.ObsShape, o.m.Actions) {
		zf := members[a.name+".npy"]
		if zf == nil {
			return fmt.Errorf("has no array %s", a.name), nil
		}
		var keep []byte
		if problem, err := o.checkArray(zf, a, sh, &keep); problem != nil || err != nil {
			return problem, err
		}
		data[a.name] = keep
	}
	var rootQ []float32
	if zf := members["root_q.npy"]; zf != nil {
		a := npzArray{name: "root_q", descr: "<f4", shape: []int{sh.Positions}}
		var keep []byte
		if problem, err := o.checkArray(zf, a, sh, &keep); problem != nil || err != nil {
			return problem, err
		}
		rootQ = f32s(keep)
	}
	var values []float32
	players := 0
	if zf := members["values.npy"]; zf != nil {
		// The width is the one whose header and rows fill the member.
		for p := 3; p <= maxSeatValues && players == 0; p++ {
			if int64(len(npyHeader("<f4", []int{sh.Positions, p})))+int64(sh.Positions)*int64(p)*4 == int64(zf.UncompressedSize64) {
				players = p
			}
		}
		if players == 0 {
			return fmt.Errorf("has an array values that is not %d positions of 3..%d players' float32 values", sh.Positions, maxSeatValues), nil
		}
		a := npzArray{name: "values", descr: "<f4", shape: []int{sh.Positions, players}}
		var keep []byte
		if problem, err := o.checkArray(zf, a, sh, &keep); problem != nil || err != nil {
			return problem, err
		}
		values = f32s(keep)
	}
	var rootValues []float32
	if zf := members["root_values.npy"]; zf != nil {
		if values == nil || rootQ == nil {
			return fmt.Errorf("has an array root_values without values and root_q"), nil
		}
		a := npzArray{name: "root_values", descr: "<f4", shape: []int{sh.Positions, players}}
		var keep []byte
		if problem, err := o.checkArray(zf, a, sh, &keep); problem != nil || err != nil {
			return problem, err
		}
		rootValues = f32s(keep)
	}
	// The values training checks (selfplay.CheckPositions): a shard kept
	// here must be one train accepts.
	obsN := 1
	for _, d := range o.m.ObsShape {
		obsN *= d
	}
	if err := CheckPositions(sh.Positions, obsN, o.m.Actions, f32s(data["obs"]), f32s(data["policy"]), data["legal"],
		f32s(data["value"]), rootQ); err != nil {
		return err, nil
	}
	if values != nil {
		if err := CheckValues(sh.Positions, players, f32s(data["value"]), values); err != nil {
			return err, nil
		}
	}
	if rootValues != nil {
		if err := CheckValues(sh.Positions, players, rootQ, rootValues); err != nil {
			return fmt.Errorf("root_values: %w", err), nil
		}
	}
	return nil, nil
}

// f32s decodes little-endian float32s.
func f32s(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// checkArray reads one member of a shard to its end (which checks its
// CRC): its header must be the one the shard writer makes for a's type
// and sh.Positions rows, its data exactly that many rows; the game_id
// array must hold sorted ids, all in sh's ranges, sh.Games distinct.
//
// The rows' bytes are appended to *keep.
func (o *Output) checkArray(zf *zip.File, a npzArray, sh *Shard, keep *[]byte) (problem, err error) {
	size, err := strconv.Atoi(a.descr[2:])
	if err != nil {
		return nil, fmt.Errorf("selfplay: shard array %s has an unknown type %s", a.name, a.descr)
	}
	shape := append([]int{sh.Positions}, a.shape[1:]...)
	want := npyHeader(a.descr, shape)
	rowBytes := int64(size)
	for _, d := range shape[1:] {
		rowBytes *= int64(d)
	}
	rc, err := zf.Open()
	if err != nil {
		return ioOr(err, "has an unreadable array "+a.name+": %v")
	}
	defer rc.Close()
	buf := make([]byte, 1<<16)
	hdr := buf[:len(want)]
	if _, err := io.ReadFull(rc, hdr); err != nil {
		return ioOr(err, "has a truncated array "+a.name+": %v")
	}
	if string(hdr) != string(want) {
		return fmt.Errorf("has an array %s of another type or shape than %d positions of %v %s", a.name, sh.Positions, shape[1:], a.descr), nil
	}
	ids := idChecker{ranges: sh.GameIDs}
	for left := rowBytes * int64(sh.Positions); left > 0; {
		chunk := buf[:min(left, int64(len(buf)))]
		if _, err := io.ReadFull(rc, chunk); err != nil {
			return ioOr(err, "has a truncated array "+a.name+": %v")
		}
		left -= int64(len(chunk))
		*keep = append(*keep, chunk...)
		if a.name == "game_id" {
			for i := 0; i < len(chunk); i += 8 {
				if err := ids.add(int64(binary.LittleEndian.Uint64(chunk[i:]))); err != nil {
					return err, nil
				}
			}
		}
	}
	switch _, err := io.ReadFull(rc, buf[:1]); {
	case err == nil:
		return fmt.Errorf("has more rows in array %s than its %d positions", a.name, sh.Positions), nil
	case err != io.EOF: // at the end, the zip reader checks the CRC
		return ioOr(err, "has a damaged array "+a.name+": %v")
	}
	if a.name == "game_id" && ids.distinct != sh.Games {
		return fmt.Errorf("holds %d games, not the %d its entry claims", ids.distinct, sh.Games), nil
	}
	return nil, nil
}

// ioOr sorts a read error: a failure of the file system (an
// *fs.PathError) is returned as err, anything else (a format, checksum
// or decompression error) as the problem described by format.
func ioOr(e error, format string) (problem, err error) {
	var pe *fs.PathError
	if errors.As(e, &pe) {
		return nil, fmt.Errorf("cannot resume: reading %s: %v", pe.Path, pe.Err)
	}
	return fmt.Errorf(format, e), nil
}

// idChecker follows a shard's game_id column: ids must be sorted and
// each in ranges (sorted and disjoint, as checkRanges ensures).
type idChecker struct {
	ranges   [][2]int
	r        int // current range
	last     int64
	distinct int
}

func (c *idChecker) add(id int64) error {
	if c.distinct > 0 && id == c.last {
		return nil
	}
	if c.distinct > 0 && id < c.last {
		return fmt.Errorf("has game ids out of order (%d after %d)", id, c.last)
	}
	for c.r < len(c.ranges) && id >= int64(c.ranges[c.r][1]) {
		c.r++
	}
	if c.r == len(c.ranges) || id < int64(c.ranges[c.r][0]) {
		return fmt.Errorf("has rows of game %d, which its entry does not list", id)
	}
	c.last = id
	c.distinct++
	return nil
}

// moveAside renames a dropped shard's file to NAME.bad when it is a plain
// name of a regular file in the run directory; best effort.
func (o *Output) moveAside(name string) bool {
	if name == "" || name != filepath.Base(name) || !filepath.IsLocal(name) || strings.ContainsAny(name, `/\`) {
		return false
	}
	p := filepath.Join(o.dir, name)
	if fi, err := os.Lstat(p); err != nil || !fi.Mode().IsRegular() {
		return false
	}
	return os.Rename(p, p+".bad") == nil
}

// pendingRanges lists, as sorted [lo, hi) ranges, the game ids in
// 0..Games-1 no kept shard holds.
func (o *Output) pendingRanges() [][2]int {
	var out [][2]int
	for i := 0; i < o.m.Games; {
		lo := o.done.firstClearIn(i, o.m.Games)
		if lo < 0 {
			break
		}
		hi := o.done.firstIn(lo, o.m.Games)
		if hi < 0 {
			hi = o.m.Games
		}
		out = append(out, [2]int{lo, hi})
		i = hi
	}
	return out
}

// intersect returns, as sorted disjoint ranges, the ids of claims (ranges
// in any order, overlapping or out of bounds: a tampered manifest's) that
// are in pending (sorted disjoint ranges). It takes time in the number of
// ranges, not ids.
func intersect(claims, pending [][2]int) [][2]int {
	cs := slices.Clone(claims)
	slices.SortFunc(cs, func(a, b [2]int) int { return cmp.Compare(a[0], b[0]) })
	var out [][2]int
	end := math.MinInt // ids below end are done
	for _, c := range cs {
		lo, hi := max(c[0], end), c[1]
		if lo >= hi {
			continue
		}
		end = hi
		k := sort.Search(len(pending), func(k int) bool { return pending[k][1] > lo })
		for ; k < len(pending) && pending[k][0] < hi; k++ {
			r := [2]int{max(lo, pending[k][0]), min(hi, pending[k][1])}
			if n := len(out); n > 0 && out[n-1][1] == r[0] {
				out[n-1][1] = r[1]
			} else {
				out = append(out, r)
			}
		}
	}
	return out
}

// bitset is a set of game ids 0..n-1.
type bitset []uint64

func newBitset(n int) bitset { return make(bitset, (n+63)/64) }

func (b bitset) has(i int) bool { return b[i/64]&(1<<(i%64)) != 0 }

func (b bitset) set(i int) { b[i/64] |= 1 << (i % 64) }

func (b bitset) setRange(lo, hi int) {
	for i := lo; i < hi; i++ {
		b.set(i)
	}
}

// firstIn returns the first id in [lo, hi) in the set, or -1.
func (b bitset) firstIn(lo, hi int) int { return b.first(lo, hi, 0) }

// firstClearIn returns the first id in [lo, hi) not in the set, or -1.
func (b bitset) firstClearIn(lo, hi int) int { return b.first(lo, hi, ^uint64(0)) }

// first scans [lo, hi) a word at a time for a bit that differs from flip's.
func (b bitset) first(lo, hi int, flip uint64) int {
	for i := lo; i < hi; i = (i/64 + 1) * 64 {
		if w := (b[i/64] ^ flip) >> (i % 64); w != 0 {
			if j := i + bits.TrailingZeros64(w); j < hi {
				return j
			}
			return -1
		}
	}
	return -1
}

// formatRanges writes [lo, hi) ranges as "0-3, 7, 9-12" (inclusive, as
// people count), eliding the middle of long lists, with the total.
func formatRanges(rs [][2]int) string {
	var b strings.Builder
	n := 0
	for i, r := range rs {
		n += r[1] - r[0]
		if i == 8 && len(rs) > 10 {
			b.WriteString(", ...")
			continue
		}
		if i > 8 && i < len(rs)-1 && len(rs) > 10 {
			continue
		}
		if i > 0 {
			b.WriteString(", ")
		}
		if r[1]-r[0] == 1 {
			fmt.Fprintf(&b, "%d", r[0])
		} else {
			fmt.Fprintf(&b, "%d-%d", r[0], r[1]-1)
		}
	}
	fmt.Fprintf(&b, " (%d in all)", n)
	return b.String()
}

// shardNumber parses the k of "shard-%06d.npz".
func shardNumber(name string) (int, bool) {
	s, ok := strings.CutPrefix(name, "shard-")
	if !ok {
		return 0, false
	}
	if s, ok = strings.CutSuffix(s, ".npz"); !ok || len(s) < 6 {
		return 0, false
	}
	k, err := strconv.Atoi(s)
	if err != nil || k < 0 || shardName(k) != name {
		return 0, false
	}
	return k, true
}

func shardName(k int) string { return fmt.Sprintf("shard-%06d.npz", k) }

// clip shortens a manifest string for a message.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}

// Manifest returns a copy of the current manifest.
func (o *Output) Manifest() Manifest { return o.m }

// Pending lists the game ids in 0..Games-1 not yet in a shard.
func (o *Output) Pending() []int {
	n := o.m.Games
	for _, w := range o.done {
		n -= bits.OnesCount64(w)
	}
	ids := make([]int, 0, max(n, 0))
	for i := range o.m.Games {
		if !o.done.has(i) {
			ids = append(ids, i)
		}
	}
	return ids
}

// Add buffers a finished game and writes a shard when enough are
// buffered.
func (o *Output) Add(r *GameRecord) error {
	if len(o.buf) == 0 {
		o.bufSince = time.Now()
	}
	o.buf = append(o.buf, r)
	o.bufPos += r.Positions()
	if o.bufPos >= o.ShardPositions || (o.FlushGames > 0 && len(o.buf) >= o.FlushGames) || time.Since(o.bufSince) >= o.FlushEvery {
		return o.Flush()
	}
	return nil
}

// Flush writes the buffered games as one shard (temp file, fsync,
// rename), then rewrites the manifest the same way.
func (o *Output) Flush() error {
	if len(o.buf) == 0 {
		return nil
	}
	sort.Slice(o.buf, func(i, j int) bool { return o.buf[i].ID < o.buf[j].ID })
	data, err := encodeNPZ(shardArrays(o.buf, o.m.ObsShape, o.m.Actions))
	if err != nil {
		return err
	}
	name := shardName(o.next)
	if err := WriteFileAtomic(filepath.Join(o.dir, name), data); err != nil {
		return fmt.Errorf("writing shard: %w", err)
	}
	o.next++
	sh := Shard{File: name, Games: len(o.buf), Positions: o.bufPos}
	ids := make([]int, len(o.buf))
	for i, r := range o.buf {
		ids[i] = r.ID
		o.done.set(r.ID)
		sh.Nodes += r.Nodes
		if r.Resigned {
			sh.Resigned++
		}
		if r.ResignOffGame {
			sh.ResignOffGames++
		}
		if r.FalseResign {
			sh.FalseResigns++
		}
	}
	sh.GameIDs = ranges(ids)
	t := &o.m.Totals
	t.Games += sh.Games
	t.Positions += sh.Positions
	t.Nodes += sh.Nodes
	t.Resigned += sh.Resigned
	t.ResignOffGames += sh.ResignOffGames
	t.FalseResigns += sh.FalseResigns
	o.m.Shards = append(o.m.Shards, sh)
	if o.session < 0 {
		o.session = len(o.m.Sessions)
		o.m.Sessions = append(o.m.Sessions, Session{Backend: o.backend, Started: o.started.Format(time.RFC3339)})
	}
	s := &o.m.Sessions[o.session]
	s.Games += sh.Games
	s.Positions += sh.Positions
	o.buf, o.bufPos = o.buf[:0], 0
	return o.writeManifest()
}

// ranges compresses sorted ids into [lo, hi) runs.
func ranges(ids []int) [][2]int {
	ids = slices.Compact(ids)
	out := [][2]int{}
	for _, id := range ids {
		if n := len(out); n > 0 && out[n-1][1] == id {
			out[n-1][1]++
			continue
		}
		out = append(out, [2]int{id, id + 1})
	}
	return out
}

func (o *Output) writeManifest() error {
	o.m.Updated = time.Now().UTC().Format(time.RFC3339)
	data, err := json.MarshalIndent(o.m, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(o.dir, ManifestName), append(data, '\n'))
}

// WriteFileAtomic writes data to path atomically (see internal/atomicfile).
func WriteFileAtomic(path string, data []byte) error { return atomicfile.WriteFile(path, data) }

// Generate plays the output's pending games on e with cfg (its Games and
// OnGame are set here; extra, when non-nil, also sees every game). When
// ctx ends, the finished games still buffered are flushed before
// returning ctx.Err(): only games in flight are lost.
func Generate(ctx context.Context, e *engine.Engine, o *Output, cfg Config, extra func(*GameRecord)) error {
	cfg.Games = o.Pending()
	if len(cfg.Games) == 0 {
		return nil
	}
	cfg.OnGame = func(r *GameRecord) error {
		if extra != nil {
			extra(r)
		}
		return o.Add(r)
	}
	err := Run(ctx, e, cfg)
	if ferr := o.Flush(); err == nil {
		err = ferr
	}
	return err
}
