package train

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/connect4"
	_ "github.com/canopy-go/canopy/games/hex"
	_ "github.com/canopy-go/canopy/games/tictactoe"
)

// The tests write their own shards with the small .npy writer below (kept
// independent of package selfplay's writer, so that the reader is checked
// against a second implementation of the format) from random games of
// real game implementations.

// testArray is one array to store in an .npz.
type testArray struct {
	name    string
	descr   string
	shape   []int
	data    any  // []float32, []int32, []int64 or []uint8
	fortran bool // write fortran_order True (for the rejection test)
}

// npyBytes encodes a as a version 1.0 .npy file.
func npyBytes(a testArray) []byte {
	dims := make([]string, len(a.shape))
	for i, d := range a.shape {
		dims[i] = fmt.Sprint(d)
	}
	sh := strings.Join(dims, ", ")
	if len(a.shape) == 1 {
		sh += ","
	}
	fo := "False"
	if a.fortran {
		fo = "True"
	}
	dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': (%s), }", a.descr, fo, sh)
	for (10+len(dict)+1)%64 != 0 {
		dict += " "
	}
	dict += "\n"
	var b bytes.Buffer
	b.WriteString("\x93NUMPY\x01\x00")
	binary.Write(&b, binary.LittleEndian, uint16(len(dict)))
	b.WriteString(dict)
	binary.Write(&b, binary.LittleEndian, a.data)
	return b.Bytes()
}

// npzBytes zips the arrays (deflated, as numpy.savez_compressed does).
func npzBytes(t testing.TB, arrays []testArray) []byte {
	t.Helper()
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, a := range arrays {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: a.name + ".npy", Method: zip.Deflate})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(npyBytes(a)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// position is one recorded move of a random game.
type position struct {
	obs, policy []float32
	legal       []uint8
	value       float32
}

// randomGames plays n random games of g and records every position from
// the mover's view with a random policy over the legal actions and the
// final outcome for the mover.
func randomGames(g games.Game, n int, seed uint64) [][]position {
	rng := games.NewRand(seed)
	A := g.NumActions()
	m := games.NewMask(A)
	ret := make([]float64, g.NumPlayers())
	var out [][]position
	for range n {
		s := g.NewInitialState()
		var rec []position
		var movers []int
		for !s.IsTerminal() {
			p := s.CurrentPlayer()
			pos := position{obs: make([]float32, games.ObservationSize(g)), policy: make([]float32, A), legal: make([]uint8, A)}
			s.Observation(p, pos.obs)
			s.Legal(m)
			var legal []games.Action
			sum := float32(0)
			for a := range m.All() {
				legal = append(legal, a)
				pos.legal[a] = 1
				w := float32(rng.ExpFloat64())
				pos.policy[a] = w
				sum += w
			}
			for _, a := range legal {
				pos.policy[a] /= sum
			}
			rec = append(rec, pos)
			movers = append(movers, p)
			s.Apply(legal[rng.IntN(len(legal))])
		}
		s.Returns(ret)
		for i := range rec {
			rec[i].value = float32(ret[movers[i]])
		}
		out = append(out, rec)
	}
	return out
}

// shardArrays lays out positions as a shard's arrays.
func shardArrays(g games.Game, ps []position, withLegal bool) []testArray {
	n, A := len(ps), g.NumActions()
	var obs, pol, val []float32
	var legal []uint8
	ids := make([]int64, n)
	for _, p := range ps {
		obs = append(obs, p.obs...)
		pol = append(pol, p.policy...)
		val = append(val, p.value)
		legal = append(legal, p.legal...)
	}
	arr := []testArray{
		{name: "obs", descr: "<f4", shape: append([]int{n}, g.ObservationShape()...), data: obs},
		{name: "policy", descr: "<f4", shape: []int{n, A}, data: pol},
		{name: "value", descr: "<f4", shape: []int{n}, data: val},
		{name: "game_id", descr: "<i8", shape: []int{n}, data: ids},
	}
	if withLegal {
		arr = append(arr, testArray{name: "legal", descr: "|u1", shape: []int{n, A}, data: legal})
	}
	return arr
}

// writeRun writes a self-play run directory for g: nGames random games,
// gamesPerShard games per shard, a manifest like selfplay's. It returns
// the positions in game order.
func writeRun(t testing.TB, dir string, g games.Game, nGames, gamesPerShard int, seed uint64, withLegal bool) []position {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	type shardEntry struct {
		File      string   `json:"file"`
		Games     int      `json:"games"`
		Positions int      `json:"positions"`
		GameIDs   [][2]int `json:"game_ids"`
	}
	m := struct {
		Format   string       `json:"format"`
		Game     string       `json:"game"`
		ObsShape []int        `json:"obs_shape"`
		Actions  int          `json:"actions"`
		Network  string       `json:"network"`
		Shards   []shardEntry `json:"shards"`
	}{Format: manifestFormat, Game: g.Spec(), ObsShape: g.ObservationShape(), Actions: g.NumActions(), Network: "test"}
	var all []position
	recs := randomGames(g, nGames, seed)
	for lo := 0; lo < nGames; lo += gamesPerShard {
		hi := min(lo+gamesPerShard, nGames)
		var ps []position
		for _, r := range recs[lo:hi] {
			ps = append(ps, r...)
		}
		name := fmt.Sprintf("shard-%06d.npz", len(m.Shards))
		if err := os.WriteFile(filepath.Join(dir, name), npzBytes(t, shardArrays(g, ps, withLegal)), 0o644); err != nil {
			t.Fatal(err)
		}
		m.Shards = append(m.Shards, shardEntry{File: name, Games: hi - lo, Positions: len(ps), GameIDs: [][2]int{{lo, hi}}})
		all = append(all, ps...)
	}
	data, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, manifestName), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return all
}

func equalF32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !(math.IsNaN(float64(a[i])) && math.IsNaN(float64(b[i]))) {
			return false
		}
	}
	return true
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
