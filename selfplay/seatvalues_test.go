package selfplay

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/sushigo"
	_ "github.com/canopy-go/canopy/games/tetrislink"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search/engine"
)

// seatRun plays n games of spec with a random network and returns the
// run's directory, its records (by game id) and game.
func seatRun(t *testing.T, spec string, n int) (string, map[int]*GameRecord, games.Game) {
	t.Helper()
	g, e := newEngine(t, spec, 3, engine.Options{Workers: 1, Slots: engine.SlotsFor(2, 1), Wait: -1})
	st := DefaultSettings()
	st.Sims, st.Det = 8, 2
	dir := t.TempDir()
	out, err := OpenOutput(dir, testManifest(g, st, n), false)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	recs := map[int]*GameRecord{}
	err = Generate(context.Background(), e, out, Config{Settings: st, Seed: 7, Trees: 2}, func(r *GameRecord) {
		mu.Lock()
		recs[r.ID] = r
		mu.Unlock()
	})
	if err != nil {
		t.Fatal(err)
	}
	// A resume checks every shard, its values array included.
	if _, err := OpenOutput(dir, testManifest(g, st, n), true); err != nil {
		t.Fatalf("resume: %v", err)
	}
	return dir, recs, g
}

// readValues returns the shards' values arrays by game id (nil when the
// shards have none) and their width, read with the tests' own .npz
// reader.
func readValues(t *testing.T, dir string) (map[int][][]float32, int) {
	t.Helper()
	_, m := readRun(t, dir)
	out := map[int][][]float32{}
	width := 0
	for _, sh := range m.Shards {
		arr := readNPZ(t, filepath.Join(dir, sh.File))
		va, ok := arr["values"]
		if !ok {
			return nil, 0
		}
		if va.descr != "<f4" || len(va.shape) != 2 || va.shape[0] != sh.Positions {
			t.Fatalf("%s: values %s %v for %d positions", sh.File, va.descr, va.shape, sh.Positions)
		}
		width = va.shape[1]
		ids, val := arr["game_id"], arr["value"]
		for i := range sh.Positions {
			id := int(int64(binary.LittleEndian.Uint64(ids.data[8*i:])))
			row := make([]float32, width)
			for k := range row {
				row[k] = va.f32(i*width + k)
			}
			if row[0] != val.f32(i) {
				t.Errorf("%s row %d: values %v, value %v", sh.File, i, row, val.f32(i))
			}
			out[id] = append(out[id], row)
		}
	}
	return out, width
}

// replayTetrisLink replays a recorded game of a deterministic game from
// its observations alone: at every position the move played is the legal
// move whose successor shows the next recorded observation to its mover
// (the last: a move that ends the game, the most visited when several
// do). It returns each position's mover and the final returns, or false
// when the last move is ambiguous.
func replay(t *testing.T, g games.Game, obs [][]float32, policy [][]float32) ([]int, []float64, bool) {
	t.Helper()
	s := g.NewInitialState()
	mask := games.NewMask(g.NumActions())
	buf := make([]float32, games.ObservationSize(g))
	var movers []int
	for i := range obs {
		p := s.CurrentPlayer()
		if p < 0 {
			t.Fatalf("position %d: player %d to move", i, p)
		}
		s.Observation(p, buf)
		if !slices.Equal(buf, obs[i]) {
			t.Fatalf("position %d: the replayed state's observation differs from the record", i)
		}
		movers = append(movers, p)
		s.Legal(mask)
		var next games.State
		var ends []games.State
		var endP []float32
		for a := range mask.All() {
			c := s.Clone()
			c.Apply(a)
			if i == len(obs)-1 {
				if c.IsTerminal() {
					ends, endP = append(ends, c), append(endP, policy[i][a])
				}
				continue
			}
			if c.IsTerminal() || c.CurrentPlayer() < 0 {
				continue
			}
			c.Observation(c.CurrentPlayer(), buf)
			if slices.Equal(buf, obs[i+1]) {
				next = c
				break
			}
		}
		if i == len(obs)-1 {
			best := slices.Max(endP)
			var rets [][]float64
			for k, c := range ends {
				if endP[k] == best {
					r := make([]float64, g.NumPlayers())
					c.Returns(r)
					rets = append(rets, r)
				}
			}
			for _, r := range rets[1:] {
				if !slices.Equal(r, rets[0]) {
					return movers, nil, false
				}
			}
			return movers, rets[0], true
		}
		if next == nil {
			t.Fatalf("position %d: no legal move leads to the next recorded observation", i)
		}
		s = next
	}
	return movers, nil, false
}

// Value targets per seat match the games' Returns after seat rotation,
// on recorded games of every player count: Tetris Link's games are
// replayed from their observations and scored by the game itself; Sushi
// Go's (hidden hands, chance deals) are checked against the returns the
// game gave at the end, with the movers of its sequential view taking
// turns in seat order. Two-player shards have no values array, as
// before.
func TestSeatValues(t *testing.T) {
	for np := 2; np <= 4; np++ {
		t.Run(fmt.Sprintf("tetrislink-%d", np), func(t *testing.T) {
			dir, _, g := seatRun(t, fmt.Sprintf("tetrislink:players=%d", np), 2)
			vals, width := readValues(t, dir)
			if np == 2 {
				if vals != nil {
					t.Fatal("a two-player shard has a values array")
				}
				return
			}
			if width != np {
				t.Fatalf("values width %d, want %d", width, np)
			}
			rows, _ := readRun(t, dir)
			for id, rs := range rows {
				obs, pol := make([][]float32, len(rs)), make([][]float32, len(rs))
				for i, r := range rs {
					obs[i], pol[i] = r.obs, r.policy
				}
				movers, ret, ok := replay(t, g, obs, pol)
				if !ok {
					t.Logf("game %d: the last move is ambiguous; its returns are not compared", id)
					continue
				}
				for i, m := range movers {
					for k := range np {
						if want := float32(ret[(m+k)%np]); vals[id][i][k] != want {
							t.Fatalf("game %d position %d (player %d to move): values %v, want the returns %v rotated by %d", id, i, m, vals[id][i], ret, m)
						}
					}
				}
			}
		})
	}
	// Sushi Go's sequential view, and its simultaneous one (each joint
	// move searched seat by seat, one position recorded per seat in seat
	// order).
	for _, view := range []string{"sushigo-seq", "sushigo"} {
		for np := 2; np <= 5; np++ {
			sushiSeatValues(t, view, np)
		}
	}
}

func sushiSeatValues(t *testing.T, view string, np int) {
	t.Run(fmt.Sprintf("%s-%d", view, np), func(t *testing.T) {
		dir, recs, g := seatRun(t, fmt.Sprintf("%s:players=%d", view, np), 2)
		na := g.NumActions()
		for id, rec := range recs {
			if rec.Positions() == 0 || rec.Positions()%np != 0 {
				t.Fatalf("game %d: %d positions, want a positive multiple of %d", id, rec.Positions(), np)
			}
			for i := range rec.Positions() {
				var sum float32
				for a := range na {
					p := rec.Policy[i*na+a]
					if p > 0 && rec.Legal[i*na+a] == 0 {
						t.Fatalf("game %d position %d: policy on illegal action %d", id, i, a)
					}
					sum += p
				}
				if math.Abs(float64(sum-1)) > 1e-4 {
					t.Fatalf("game %d position %d: policy sums to %v", id, i, sum)
				}
			}
		}
		vals, width := readValues(t, dir)
		if np == 2 {
			if vals != nil {
				t.Fatal("a two-player shard has a values array")
			}
			return
		}
		if width != np {
			t.Fatalf("values width %d, want %d", width, np)
		}
		for id, rec := range recs {
			if rec.Resigned {
				t.Fatalf("game %d resigned with %d players", id, np)
			}
			ret := make([]float64, np)
			for k, v := range rec.Returns {
				// The game's scale is [-1, 1] (Type.MinReturn, MaxReturn):
				// self-play's targets are its returns as they are.
				ret[k] = v
			}
			if tp := g.Type(); tp.MinReturn != -1 || tp.MaxReturn != 1 {
				t.Fatalf("returns scale [%v, %v]", tp.MinReturn, tp.MaxReturn)
			}
			for i, row := range vals[id] {
				m := i % np // the sequential view: seats 0..np-1 choose in turn
				for k := range np {
					if want := float32(ret[(m+k)%np]); math.Abs(float64(row[k]-want)) != 0 {
						t.Fatalf("game %d position %d (seat %d to move): values %v, want the returns %v rotated by %d", id, i, m, row, ret, m)
					}
				}
			}
		}
	})
}

// Self-play with a per-player value head (MaxN backups) records the
// same per-player targets.
func TestSeatValuesPerPlayerHead(t *testing.T) {
	g := games.MustNew("tetrislink:players=3")
	cfg, err := nets.Config{Head: nets.HeadAlphaZero, Channels: 4, Blocks: 1, ValueHidden: 4}.ForGame(g)
	if err != nil {
		t.Fatal(err)
	}
	net, err := nets.New(cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	be, err := nets.NewCPUBackend(net, nets.BackendOptions{MaxBatch: 8})
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(g, be, engine.Options{Workers: 1, Slots: engine.SlotsFor(1, 2), Wait: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	st := DefaultSettings()
	st.Sims, st.Leaves = 8, 2
	var recs []*GameRecord
	if err := Run(context.Background(), e, Config{Settings: st, Seed: 3, NumGames: 1, Trees: 1, OnGame: func(r *GameRecord) error {
		recs = append(recs, r)
		return nil
	}}); err != nil {
		t.Fatal(err)
	}
	r := recs[0]
	if len(r.Values) != 3*r.Positions() {
		t.Fatalf("%d values for %d positions", len(r.Values), r.Positions())
	}
	for i := range r.Positions() {
		row := r.Values[3*i : 3*i+3]
		if row[0] != r.Value[i] || !slices.Contains([]int{0, 1, 2}, rotation(row, r.Returns)) {
			t.Fatalf("position %d: values %v, value %v, returns %v", i, row, r.Value[i], r.Returns)
		}
	}
}

// rotation returns the k with row[j] = returns[(k+j) mod n] for every j
// (the first such), or -1.
func rotation(row []float32, returns []float64) int {
	n := len(returns)
	for k := range n {
		ok := true
		for j := range n {
			ok = ok && row[j] == float32(returns[(k+j)%n])
		}
		if ok {
			return k
		}
	}
	return -1
}

// Games of three or more players record the search's root value of
// every player (root_values, seat-rotated, entry 0 the mover's root_q,
// the others in [-1, 1] and not all zero); two-player shards have none.
func TestRootValuesRecorded(t *testing.T) {
	for _, spec := range []string{"tetrislink:players=3", "sushigo:players=4", "tictactoe"} {
		dir, _, g := seatRun(t, spec, 2)
		_, m := readRun(t, dir)
		np := g.NumPlayers()
		for _, sh := range m.Shards {
			arr := readNPZ(t, filepath.Join(dir, sh.File))
			ra, ok := arr["root_values"]
			if np <= 2 {
				if ok {
					t.Errorf("%s: a two-player shard has root_values", spec)
				}
				continue
			}
			if !ok || ra.descr != "<f4" || len(ra.shape) != 2 || ra.shape[0] != sh.Positions || ra.shape[1] != np {
				t.Fatalf("%s: root_values %v (present %v), want <f4 [%d %d]", spec, ra.shape, ok, sh.Positions, np)
			}
			q := arr["root_q"]
			nonzero := false
			for i := range sh.Positions {
				if ra.f32(i*np) != q.f32(i) {
					t.Fatalf("%s row %d: root_values starts with %v, root_q %v", spec, i, ra.f32(i*np), q.f32(i))
				}
				for k := 1; k < np; k++ {
					v := ra.f32(i*np + k)
					if v < -1 || v > 1 {
						t.Fatalf("%s row %d: root value %v", spec, i, v)
					}
					nonzero = nonzero || v != 0
				}
			}
			if !nonzero {
				t.Errorf("%s: every other player's root value is 0", spec)
			}
		}
	}
}
