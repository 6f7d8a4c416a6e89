package selfplay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"time"

	"github.com/canopy-go/canopy/internal/atomicfile"
	"github.com/canopy-go/canopy/search/engine"
)

// ManifestFormat tags manifest.json files written by this package.
const ManifestFormat = "canopy-selfplay/1"

// ManifestName is the manifest's file name inside a run directory.
const ManifestName = "manifest.json"

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
	Network       string   `json:"network"`
	NetworkSHA256 string   `json:"network_sha256"`
	Backend       string   `json:"backend"`
	Settings      Settings `json:"settings"`
	Seed          uint64   `json:"seed"`
	Games         int      `json:"games"` // games requested (ids 0..Games-1)
	Shards        []Shard  `json:"shards"`
	Totals        Totals   `json:"totals"`
	Updated       string   `json:"updated"`
}

// Shard is one .npz file of the run.
type Shard struct {
	File      string `json:"file"`
	Games     int    `json:"games"`
	Positions int    `json:"positions"`
	// GameIDs are the game indices in the shard as half-open [lo, hi)
	// ranges.
	GameIDs [][2]int `json:"game_ids"`
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

// Output writes finished games into shards of a run directory. It is not
// safe for concurrent use; Run serialises its OnGame calls.
type Output struct {
	dir  string
	m    Manifest
	done map[int]bool

	// ShardPositions: a shard is written once this many positions are
	// buffered; FlushEvery: or when the oldest buffered game is this old.
	ShardPositions int
	FlushEvery     time.Duration

	buf      []*GameRecord
	bufPos   int
	bufSince time.Time
}

// OpenOutput prepares dir for the run m. Without resume the directory
// must not hold a manifest yet; with resume an existing manifest must
// describe the same run (game, network, settings, seed) and its finished
// games are kept (m.Games may grow). A missing manifest with resume starts
// afresh.
func OpenOutput(dir string, m Manifest, resume bool) (*Output, error) {
	m.Format = ManifestFormat
	o := &Output{dir: dir, done: map[int]bool{}, ShardPositions: 16384, FlushEvery: 10 * time.Second}
	path := filepath.Join(dir, ManifestName)
	data, err := os.ReadFile(path)
	switch {
	case err == nil && !resume:
		return nil, fmt.Errorf("%s already holds a self-play run; pass --resume to continue it or choose another --out", dir)
	case err == nil:
		var old Manifest
		if err := json.Unmarshal(data, &old); err != nil {
			return nil, fmt.Errorf("%s: bad manifest: %v (fix or remove it)", path, err)
		}
		if err := sameRun(&old, &m); err != nil {
			return nil, fmt.Errorf("cannot resume %s: %v; use the original flags or another --out", dir, err)
		}
		old.Games = max(old.Games, m.Games)
		old.Backend = m.Backend
		m = old
		for _, s := range m.Shards {
			for _, r := range s.GameIDs {
				for i := r[0]; i < r[1]; i++ {
					o.done[i] = true
				}
			}
		}
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		m.Shards = []Shard{}
	default:
		return nil, err
	}
	o.m = m
	return o, o.writeManifest()
}

func sameRun(old, m *Manifest) error {
	switch {
	case old.Format != ManifestFormat:
		return fmt.Errorf("manifest format %q, want %q", old.Format, ManifestFormat)
	case old.Game != m.Game:
		return fmt.Errorf("game %s differs from %s", old.Game, m.Game)
	case old.NetworkSHA256 != m.NetworkSHA256:
		return fmt.Errorf("network %s (sha256 %s) differs from %s (sha256 %s)", old.Network, old.NetworkSHA256, m.Network, m.NetworkSHA256)
	case old.Settings != m.Settings:
		return fmt.Errorf("settings %+v differ from %+v", old.Settings, m.Settings)
	case old.Seed != m.Seed:
		return fmt.Errorf("seed %d differs from %d", old.Seed, m.Seed)
	}
	return nil
}

// Manifest returns a copy of the current manifest.
func (o *Output) Manifest() Manifest { return o.m }

// Pending lists the game ids in 0..Games-1 not yet in a shard.
func (o *Output) Pending() []int {
	var ids []int
	for i := range o.m.Games {
		if !o.done[i] {
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
	if o.bufPos >= o.ShardPositions || time.Since(o.bufSince) >= o.FlushEvery {
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
	name := fmt.Sprintf("shard-%06d.npz", len(o.m.Shards))
	if err := WriteFileAtomic(filepath.Join(o.dir, name), data); err != nil {
		return fmt.Errorf("writing shard: %w", err)
	}
	sh := Shard{File: name, Games: len(o.buf), Positions: o.bufPos}
	ids := make([]int, len(o.buf))
	for i, r := range o.buf {
		ids[i] = r.ID
		o.done[r.ID] = true
		t := &o.m.Totals
		t.Games++
		t.Positions += r.Positions()
		t.Nodes += r.Nodes
		if r.Resigned {
			t.Resigned++
		}
		if r.ResignOffGame {
			t.ResignOffGames++
		}
		if r.FalseResign {
			t.FalseResigns++
		}
	}
	sh.GameIDs = ranges(ids)
	o.m.Shards = append(o.m.Shards, sh)
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
