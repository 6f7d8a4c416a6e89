package selfplay

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search/engine"
)

// refRun is a finished run every resume test compares with: 12 tictactoe
// games in shards of at most 3 games.
type refRun struct {
	dir  string
	g    games.Game
	st   Settings
	rows map[int][]row
	m    Manifest
}

var (
	refOnce sync.Once
	ref     refRun
)

const refGames = 12

func reference(t *testing.T) refRun {
	t.Helper()
	refOnce.Do(func() {
		dir, err := os.MkdirTemp("", "selfplay-ref-")
		if err != nil {
			t.Fatal(err)
		}
		ref.dir = dir
		ref.st = testSettings()
		var e *engine.Engine
		ref.g, e = newEngine(t, "tictactoe", 5, engine.Options{Workers: 1, Slots: engine.SlotsFor(3, 2)})
		out, err := OpenOutput(dir, testManifest(ref.g, ref.st, refGames), false)
		if err != nil {
			t.Fatal(err)
		}
		out.FlushGames, out.FlushEvery = 3, time.Hour
		if err := Generate(context.Background(), e, out, Config{Settings: ref.st, Seed: 42, Trees: 3}, nil); err != nil {
			t.Fatal(err)
		}
		ref.rows, ref.m = readRun(t, dir)
	})
	if ref.dir == "" || len(ref.m.Shards) < 4 {
		t.Fatalf("reference run: %d shards, want at least 4", len(ref.m.Shards))
	}
	return ref
}

func TestMain(m *testing.M) {
	code := m.Run()
	if ref.dir != "" {
		os.RemoveAll(ref.dir)
	}
	os.Exit(code)
}

// copyRun copies the reference run's files into a fresh directory.
func copyRun(t *testing.T, r refRun) string {
	t.Helper()
	dir := t.TempDir()
	ents, err := os.ReadDir(r.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(r.dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func editManifest(t *testing.T, dir string, edit func(*Manifest)) {
	t.Helper()
	p := filepath.Join(dir, ManifestName)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	edit(&m)
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// idsOf expands a shard's ranges.
func idsOf(sh Shard) []int {
	var ids []int
	for _, r := range sh.GameIDs {
		for i := r[0]; i < r[1]; i++ {
			ids = append(ids, i)
		}
	}
	return ids
}

// A resume verifies every listed shard: a bad one is dropped with one
// warning naming it and the games that will be regenerated, and the
// regenerated run equals the original.
func TestResumeRepairsBadShards(t *testing.T) {
	r := reference(t)
	sh := r.m.Shards
	shardPath := func(dir string, i int) string { return filepath.Join(dir, sh[i].File) }
	for _, tc := range []struct {
		name   string
		tamper func(t *testing.T, dir string)
		want   string // in the one warning
		again  []int  // games to regenerate
	}{
		{"missing", func(t *testing.T, dir string) { os.Remove(shardPath(dir, 1)) },
			`"shard-000001.npz", which is missing`, idsOf(sh[1])},
		{"truncated", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(shardPath(dir, 0))
			os.WriteFile(shardPath(dir, 0), b[:len(b)/2], 0o644)
		}, "is not a readable .npz archive", idsOf(sh[0])},
		{"corrupt byte", func(t *testing.T, dir string) {
			b, _ := os.ReadFile(shardPath(dir, 2))
			b[len(b)/3] ^= 0x55
			os.WriteFile(shardPath(dir, 2), b, 0o644)
		}, `"shard-000002.npz"`, idsOf(sh[2])},
		{"empty file", func(t *testing.T, dir string) { os.WriteFile(shardPath(dir, 3), nil, 0o644) },
			"is not a readable .npz archive", idsOf(sh[3])},
		{"path outside the run", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *Manifest) { m.Shards[1].File = "../../etc/passwd" })
		}, "not a plain .npz file name", idsOf(sh[1])},
		{"absolute path", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *Manifest) { m.Shards[1].File = filepath.Join(r.dir, sh[1].File) })
		}, "not a plain .npz file name", idsOf(sh[1])},
		{"negative ids", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *Manifest) { m.Shards[1].GameIDs[0][0] = -5 })
		}, "range [-5,", idsOf(sh[1])},
		{"ids beyond the run", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *Manifest) { m.Shards[0].GameIDs = [][2]int{{0, 3000000000}}; m.Shards[0].Games = 3000000000 })
		}, "inside [0, 12)", idsOf(sh[0])},
		{"overlapping shards", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *Manifest) { m.Shards[2].GameIDs, m.Shards[2].Games = sh[1].GameIDs, sh[1].Games })
		}, fmt.Sprintf("repeats game %d of an earlier shard; dropped it (moved aside to shard-000002.npz.bad): none of its games are missing",
			sh[1].GameIDs[0][0]),
			idsOf(sh[2])}, // no entry lists shard 2's real games any more
		{"ids not in the file", func(t *testing.T, dir string) {
			// Entry 1 claims shard 2's games, whose entry is gone: its
			// file holds others.
			editManifest(t, dir, func(m *Manifest) {
				m.Shards[1].GameIDs, m.Shards[1].Games = sh[2].GameIDs, sh[2].Games
				m.Shards = slices.Delete(m.Shards, 2, 3)
			})
		}, "which its entry does not list; dropped it (moved aside to shard-000001.npz.bad): games " +
			formatRanges(sh[2].GameIDs) + " will be regenerated", slices.Sorted(slices.Values(append(idsOf(sh[1]), idsOf(sh[2])...)))},
		{"wrong position count", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *Manifest) { m.Shards[1].Positions++ })
		}, "another type or shape", idsOf(sh[1])},
		{"listed twice", func(t *testing.T, dir string) {
			editManifest(t, dir, func(m *Manifest) { m.Shards = append(m.Shards, m.Shards[0]) })
		}, "is listed twice; dropped it: none of its games are missing", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyRun(t, r)
			tc.tamper(t, dir)
			out, err := OpenOutput(dir, testManifest(r.g, r.st, refGames), true)
			if err != nil {
				t.Fatal(err)
			}
			w := out.Warnings()
			if len(w) != 1 || !strings.Contains(w[0], tc.want) || strings.Contains(w[0], "\n") {
				t.Fatalf("warnings %q, want one line containing %q", w, tc.want)
			}
			again := tc.again
			if p := out.Pending(); !slices.Equal(p, again) {
				t.Errorf("pending %v, want %v", p, again)
			}
			if len(again) > 0 && !strings.Contains(tc.want, "will be regenerated") && !strings.Contains(tc.want, "none of") && !strings.Contains(w[0], formatRanges(ranges(again))+" will be regenerated") {
				t.Errorf("warning %q does not name games %v", w[0], again)
			}
			if _, err := os.Stat("/etc/passwd.bad"); err == nil {
				t.Fatal("a manifest entry made OpenOutput touch a file outside the run")
			}
			_, e := newEngine(t, "tictactoe", 5, engine.Options{Workers: 1, Slots: engine.SlotsFor(3, 2)})
			if err := Generate(context.Background(), e, out, Config{Settings: r.st, Seed: 42, Trees: 3}, nil); err != nil {
				t.Fatal(err)
			}
			got, m := readRun(t, dir)
			if fmt.Sprint(got) != fmt.Sprint(r.rows) {
				t.Errorf("repaired run differs from the original")
			}
			if m.Totals.Games != refGames || m.Totals.Positions != r.m.Totals.Positions {
				t.Errorf("totals %+v, want %+v", m.Totals, r.m.Totals)
			}
			again2, err := OpenOutput(dir, testManifest(r.g, r.st, refGames), true)
			if err != nil || len(again2.Warnings()) > 0 || len(again2.Pending()) > 0 {
				t.Errorf("second resume: %v, warnings %q, pending %v", err, again2.Warnings(), again2.Pending())
			}
		})
	}
}

// A manifest that would make OpenOutput allocate without bound is refused
// at once.
func TestResumeRefusesHugeManifest(t *testing.T) {
	r := reference(t)
	for _, tc := range []struct {
		name string
		edit func(*Manifest)
		want string
	}{
		{"games 3e9", func(m *Manifest) { m.Games = 3000000000 }, "games = 3000000000"},
		{"negative games", func(m *Manifest) { m.Games = -4 }, "games = -4"},
		{"other obs shape", func(m *Manifest) { m.ObsShape = []int{1 << 30, 1 << 30} }, "observation shape"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyRun(t, r)
			editManifest(t, dir, tc.edit)
			_, err := OpenOutput(dir, testManifest(r.g, r.st, refGames), true)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("OpenOutput: %v, want an error containing %q", err, tc.want)
			}
		})
	}
	if _, err := OpenOutput(t.TempDir(), testManifest(r.g, r.st, MaxGames+1), false); err == nil {
		t.Errorf("a run of %d games was accepted", MaxGames+1)
	}
}

// A resume that finds nothing to do does not rewrite the manifest (it
// works on a read-only directory); leftover temporary files are removed.
func TestResumeFinishedRunLeavesManifest(t *testing.T) {
	r := reference(t)
	dir := copyRun(t, r)
	p := filepath.Join(dir, ManifestName)
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	os.Chtimes(p, old, old)
	before, _ := os.ReadFile(p)
	out, err := OpenOutput(dir, testManifest(r.g, r.st, refGames), true)
	if err != nil {
		t.Fatal(err)
	}
	_, e := newEngine(t, "tictactoe", 5, engine.Options{Workers: 1, Slots: engine.SlotsFor(3, 2)})
	if err := Generate(context.Background(), e, out, Config{Settings: r.st, Seed: 42, Trees: 3}, nil); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	if string(after) != string(before) || !fi.ModTime().Equal(old) {
		t.Errorf("a resume with nothing to do rewrote the manifest (mtime %v, was %v)", fi.ModTime(), old)
	}
	if len(out.Warnings()) > 0 {
		t.Errorf("warnings on a sound run: %q", out.Warnings())
	}

	if os.Geteuid() != 0 {
		ro := copyRun(t, r)
		os.Chmod(ro, 0o555)
		defer os.Chmod(ro, 0o755)
		if _, err := OpenOutput(ro, testManifest(r.g, r.st, refGames), true); err != nil {
			t.Errorf("resuming a finished run in a read-only directory: %v", err)
		}
	}
}

func TestResumeRemovesTemporaryFiles(t *testing.T) {
	r := reference(t)
	dir := copyRun(t, r)
	temps := []string{".shard-000004.npz.tmp-2736", ".manifest.json.tmp-99"}
	keep := []string{".lock", "notes.txt", ".shard-000004.npz.tmp-x"}
	for _, n := range append(slices.Clone(temps), keep...) {
		os.WriteFile(filepath.Join(dir, n), []byte("partial"), 0o644)
	}
	out, err := OpenOutput(dir, testManifest(r.g, r.st, refGames), true)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range temps {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			t.Errorf("%s was not removed", n)
		}
	}
	for _, n := range keep {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s was removed", n)
		}
	}
	if w := out.Warnings(); len(w) != 1 || !strings.Contains(w[0], "removed 2 temporary files") {
		t.Errorf("warnings %q", w)
	}
}

// Each session that adds games is recorded; the creating session's
// backend stays in Backend.
func TestSessionsHistory(t *testing.T) {
	st := testSettings()
	g, e := newEngine(t, "tictactoe", 5, engine.Options{Workers: 1, Slots: engine.SlotsFor(2, 2)})
	dir := t.TempDir()
	for i, backend := range []string{"cpu", "cuda", "cuda"} {
		m := testManifest(g, st, 3+3*min(i, 1))
		m.Backend = backend
		out, err := OpenOutput(dir, m, i > 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := Generate(context.Background(), e, out, Config{Settings: st, Seed: 42, Trees: 2}, nil); err != nil {
			t.Fatal(err)
		}
	}
	_, m := readRun(t, dir)
	if m.Backend != "cpu" || len(m.Sessions) != 2 {
		t.Fatalf("backend %q, sessions %+v; want cpu and two sessions", m.Backend, m.Sessions)
	}
	for i, s := range m.Sessions {
		if s.Backend != []string{"cpu", "cuda"}[i] || s.Games != 3 || s.Positions == 0 || s.Started == "" {
			t.Errorf("session %d: %+v", i, s)
		}
	}
}

// The buffer is bounded by games as well as positions and time.
func TestFlushByGames(t *testing.T) {
	st := testSettings()
	g, e := newEngine(t, "tictactoe", 5, engine.Options{Workers: 1, Slots: engine.SlotsFor(4, 2)})
	dir := t.TempDir()
	out, err := OpenOutput(dir, testManifest(g, st, 10), false)
	if err != nil {
		t.Fatal(err)
	}
	if out.FlushGames < 1 || out.FlushEvery > 2*time.Second {
		t.Errorf("defaults: FlushGames %d, FlushEvery %v", out.FlushGames, out.FlushEvery)
	}
	out.FlushGames, out.FlushEvery = 4, time.Hour
	var most int
	err = Generate(context.Background(), e, out, Config{Settings: st, Seed: 42, Trees: 4}, func(*GameRecord) {
		most = max(most, len(out.buf)+1)
	})
	if err != nil {
		t.Fatal(err)
	}
	_, m := readRun(t, dir)
	if most > 4 || len(m.Shards) != 3 {
		t.Errorf("%d games buffered at most, %d shards; want 4 and 3", most, len(m.Shards))
	}
	for _, sh := range m.Shards {
		if sh.Games > 4 {
			t.Errorf("%s holds %d games", sh.File, sh.Games)
		}
	}
}

func TestIntersectAndFormat(t *testing.T) {
	pend := [][2]int{{2, 5}, {8, 9}, {20, 30}}
	got := intersect([][2]int{{25, 40}, {-7, 3}, {0, 9}, {4, 4}}, pend)
	if want := [][2]int{{2, 5}, {8, 9}, {25, 30}}; !slices.Equal(got, want) {
		t.Errorf("intersect = %v, want %v", got, want)
	}
	if s := formatRanges([][2]int{{0, 4}, {7, 8}}); s != "0-3, 7 (5 in all)" {
		t.Errorf("formatRanges = %q", s)
	}
	var many [][2]int
	for i := range 30 {
		many = append(many, [2]int{3 * i, 3*i + 1})
	}
	if s := formatRanges(many); !strings.Contains(s, ", ..., 87 (30 in all)") || len(s) > 80 {
		t.Errorf("formatRanges of 30 = %q", s)
	}
	b := newBitset(200)
	b.setRange(3, 130)
	if b.firstIn(0, 200) != 3 || b.firstIn(130, 200) != -1 || b.firstClearIn(3, 200) != 130 || b.firstClearIn(0, 3) != 0 ||
		b.firstIn(64, 65) != 64 || b.firstClearIn(3, 130) != -1 {
		t.Error("bitset scans")
	}
}
