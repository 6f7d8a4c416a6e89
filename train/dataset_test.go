package train

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
)

func checkRows(t *testing.T, ds *Dataset, want []position) {
	t.Helper()
	if ds.Len() != len(want) {
		t.Fatalf("%d positions, want %d", ds.Len(), len(want))
	}
	for i, w := range want {
		obs := make([]float32, ds.ObsSize())
		pol, val, legal := ds.Row(i, obs)
		if !equalF32(obs, w.obs) || !equalF32(pol, w.policy) || val != w.value {
			t.Fatalf("position %d differs", i)
		}
		if legal != nil && !bytes.Equal(legal, w.legal) {
			t.Fatalf("position %d: legal %v, want %v", i, legal, w.legal)
		}
	}
}

func TestLoadRunDirectories(t *testing.T) {
	g := games.MustNew("connect4")
	dir := t.TempDir()
	a := writeRun(t, filepath.Join(dir, "it1"), g, 6, 2, 1, false)
	b := writeRun(t, filepath.Join(dir, "it2"), g, 4, 3, 2, true)
	for i := range a {
		// Positions of the run without a legal array count every action legal.
		a[i].legal = []uint8{1, 1, 1, 1, 1, 1, 1}
	}
	// The game comes from the manifest; a manifest path works like its
	// directory; positions are in game order.
	ds, err := LoadDataset([]string{filepath.Join(dir, "it1"), filepath.Join(dir, "it2", "manifest.json")}, nil, DatasetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if ds.Game().Spec() != "connect4" || !ds.HasLegal() {
		t.Fatalf("game %s, legal %t", ds.Game().Spec(), ds.HasLegal())
	}
	checkRows(t, ds, append(append([]position{}, a...), b...))
	if src := ds.Sources(); len(src) != 5 || src[0].Iteration != 0 || src[4].Iteration != 1 {
		t.Errorf("sources %+v", src)
	}

	// Window: the last N positions; Iterations: the last K runs.
	all := append(append([]position{}, a...), b...)
	for _, n := range []int{1, len(b), len(b) + 5, len(all), len(all) + 100} {
		ds, err := LoadDataset([]string{filepath.Join(dir, "it1"), filepath.Join(dir, "it2")}, g, DatasetOptions{Window: n})
		if err != nil {
			t.Fatal(err)
		}
		checkRows(t, ds, all[max(0, len(all)-n):])
	}
	ds, err = LoadDataset([]string{filepath.Join(dir, "it1"), filepath.Join(dir, "it2")}, g, DatasetOptions{Iterations: 1})
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, ds, b)
	ds, err = LoadDataset([]string{filepath.Join(dir, "it1"), filepath.Join(dir, "it2")}, g, DatasetOptions{Iterations: 1, Window: 3})
	if err != nil {
		t.Fatal(err)
	}
	checkRows(t, ds, b[len(b)-3:])
	// A shard given directly needs the game.
	shard := filepath.Join(dir, "it1", "shard-000000.npz")
	if _, err := LoadDataset([]string{shard}, nil, DatasetOptions{}); err == nil || !strings.Contains(err.Error(), "name the game") {
		t.Errorf("bare shard without a game: %v", err)
	}
	ds, err = LoadDataset([]string{shard}, g, DatasetOptions{})
	if err != nil || ds.HasLegal() {
		t.Fatalf("bare shard: %v", err)
	}
}

// Data of the wrong game, shape or action count is refused with the file
// named, what differs, and what to do.
func TestLoadWrongGame(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "c4")
	writeRun(t, run, games.MustNew("connect4"), 2, 2, 1, true)
	ttt := games.MustNew("tictactoe")
	_, err := LoadDataset([]string{run}, ttt, DatasetOptions{SkipBad: true})
	if err == nil || !strings.Contains(err.Error(), run) || !strings.Contains(err.Error(), `game "connect4"`) || !strings.Contains(err.Error(), "tictactoe") {
		t.Errorf("wrong game: %v", err)
	}
	// A manifest with the right name but another shape.
	mpath := filepath.Join(run, "manifest.json")
	var m map[string]any
	json.Unmarshal(mustRead(t, mpath), &m)
	m["obs_shape"] = []int{3, 6, 7}
	data, _ := json.Marshal(m)
	os.WriteFile(mpath, data, 0o644)
	_, err = LoadDataset([]string{run}, nil, DatasetOptions{})
	if err == nil || !strings.Contains(err.Error(), "[3 6 7]") || !strings.Contains(err.Error(), "[2 6 7]") {
		t.Errorf("wrong shape: %v", err)
	}
	// A bare shard of another game: the shapes are named.
	shard := filepath.Join(run, "shard-000000.npz")
	_, err = LoadDataset([]string{shard}, ttt, DatasetOptions{SkipBad: true})
	if err == nil || !strings.Contains(err.Error(), shard) || !strings.Contains(err.Error(), "obs has shape") {
		t.Errorf("bare shard of another game: %v", err)
	}
	for _, p := range []string{filepath.Join(dir, "missing"), dir, mustWrite(t, filepath.Join(dir, "x.txt"), "hi")} {
		if _, err := LoadDataset([]string{p}, ttt, DatasetOptions{}); err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: %v", p, err)
		}
	}
	if _, err := LoadDataset(nil, ttt, DatasetOptions{}); err == nil {
		t.Error("no paths: no error")
	}
	if _, err := LoadDataset([]string{run}, ttt, DatasetOptions{Window: -1}); err == nil || !strings.Contains(err.Error(), "window") {
		t.Errorf("negative window: %v", err)
	}
}

func mustWrite(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A truncated or inconsistent shard is an error naming the file, or with
// SkipBad a warning naming it while the other shards load.
func TestBadShards(t *testing.T) {
	g := games.MustNew("tictactoe")
	for _, tc := range []struct {
		name   string
		damage func(path string)
		want   string
	}{
		{"truncated", func(p string) { b := mustRead(t, p); os.WriteFile(p, b[:len(b)/2], 0o644) }, "zip"},
		{"missing", func(p string) { os.Remove(p) }, "no such file"},
		{"empty", func(p string) { os.WriteFile(p, nil, 0o644) }, "zip"},
		{"no policy", func(p string) {
			os.WriteFile(p, npzBytes(t, []testArray{{name: "obs", descr: "<f4", shape: []int{1, 2, 3, 3}, data: make([]float32, 18)},
				{name: "value", descr: "<f4", shape: []int{1}, data: []float32{0}}}), 0o644)
		}, `no array "policy"`},
		{"nan value", func(p string) { rewrite(t, g, p, func(ps []position) { ps[1].value = float32(nan()) }) }, "position 1: value NaN"},
		{"policy sum", func(p string) { rewrite(t, g, p, func(ps []position) { ps[0].policy[0] += 0.5 }) }, "policy sums to"},
		{"illegal target", func(p string) {
			rewrite(t, g, p, func(ps []position) {
				for a, l := range ps[2].legal {
					if l == 0 {
						ps[2].policy[a] = 0.25
						return
					}
				}
			})
		}, "marks illegal"},
		{"positions", func(p string) { rewrite(t, g, p, func(ps []position) {}, 1) }, "manifest lists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			want := writeRun(t, dir, g, 6, 2, 3, true)
			bad := filepath.Join(dir, "shard-000001.npz")
			nBad := 0
			{
				ds, err := LoadDataset([]string{dir}, g, DatasetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				nBad = ds.Sources()[1].Positions
			}
			tc.damage(bad)
			_, err := LoadDataset([]string{dir}, g, DatasetOptions{})
			if err == nil || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one naming %s and saying %q", err, bad, tc.want)
			}
			var log bytes.Buffer
			ds, err := LoadDataset([]string{dir}, g, DatasetOptions{SkipBad: true, Log: &log})
			if err != nil {
				t.Fatal(err)
			}
			if w := ds.Warnings(); len(w) != 1 || !strings.Contains(w[0], bad) || !strings.Contains(log.String(), bad) {
				t.Errorf("warnings %q, log %q", w, log.String())
			}
			if ds.Len() != len(want)-nBad {
				t.Errorf("%d positions after skipping, want %d", ds.Len(), len(want)-nBad)
			}
		})
	}
}

func nan() float64 { var z float64; return z / z }

// rewrite replaces a shard of g by its positions after change; with drop
// it also removes that many positions (so the manifest's count is wrong).
func rewrite(t *testing.T, g games.Game, path string, change func([]position), drop ...int) {
	t.Helper()
	arrays, err := readNPZ(mustRead(t, path))
	if err != nil {
		t.Fatal(err)
	}
	n, O, A := arrays["value"].shape[0], games.ObservationSize(g), g.NumActions()
	ps := make([]position, n)
	for i := range ps {
		ps[i] = position{obs: arrays["obs"].f32[i*O : (i+1)*O], policy: arrays["policy"].f32[i*A : (i+1)*A],
			value: arrays["value"].f32[i], legal: arrays["legal"].u8[i*A : (i+1)*A]}
	}
	change(ps)
	if len(drop) > 0 {
		ps = ps[drop[0]:]
	}
	if err := os.WriteFile(path, npzBytes(t, shardArrays(g, ps, true)), 0o644); err != nil {
		t.Fatal(err)
	}
}
