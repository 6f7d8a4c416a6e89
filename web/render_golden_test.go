package web

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
)

var update = flag.Bool("update", false, "rewrite testdata/render.golden.json.gz from the current rendering")

// goldenSpecs are the games the page draws in the golden file: every game
// registered when it was written, at its default options, and the variants
// whose drawing differs (board size, number of boards or players, the
// sequential view). A new game need not join (it is checked by the
// conformance suite's board checks); add it when its drawing is worth
// pinning.
var goldenSpecs = []string{
	"connect4", "tictactoe", "hex", "hex:size=5", "connect4d", "connect4d:d=2",
	"strands", "strands:size=4", "tetrislink", "tetrislink:players=4",
	"sequence", "sequence:players=3", "sushigo", "sushigo:players=2", "sushigo-seq:players=3", "nim",
}

// goldenFrame is one rendering of a position: the page's JSON with the
// legal moves of every waiting player on offer (a game between people),
// with none on offer (a replay), and the history as a session shows it to
// view (sushigo-seq hides picks the trick has not revealed).
type goldenFrame struct {
	Spec    string    `json:"spec"`
	Moves   int       `json:"moves"`
	View    int       `json:"view"`
	Offered stateJSON `json:"offered"`
	Replay  stateJSON `json:"replay"`
	History []string  `json:"history"`
}

// goldenFrames renders a few random positions of every game in
// goldenSpecs for every view, reproducibly from fixed seeds.
func goldenFrames(t *testing.T) []goldenFrame {
	t.Helper()
	var out []goldenFrame
	for i, sp := range goldenSpecs {
		g, err := games.New(sp)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(uint64(i), 39))
		mask := games.NewMask(g.NumActions())
		for game := range 2 {
			s := g.NewInitialState()
			var hist []string
			var movers []int
			// Snapshots: the start, a few midgame positions, the end.
			stops := map[int]bool{0: game == 0, 5 + rng.IntN(5): true, 20 + rng.IntN(20): true}
			for n := 0; ; n++ {
				if stops[n] || s.IsTerminal() {
					for v := -1; v < g.NumPlayers(); v++ {
						out = append(out, goldenFrame{Spec: sp, Moves: n, View: v,
							Offered: renderFor(s, v), Replay: renderReplay(s, v), History: sessionHistory(s, v, movers, hist)})
					}
				}
				if s.IsTerminal() {
					break
				}
				switch p := s.CurrentPlayer(); p {
				case games.SimultaneousPlayer:
					joint := make([]games.Action, g.NumPlayers())
					for q := range joint {
						s.(games.SimultaneousState).LegalFor(q, mask)
						joint[q] = mask.Random(rng)
						hist = append(hist, fmt.Sprintf("p%d:%s", q, s.ActionString(joint[q])))
						movers = append(movers, q)
					}
					s.(games.SimultaneousState).ApplyJoint(joint)
				case games.ChancePlayer:
					a := s.(games.ChanceState).SampleChance(rng)
					hist = append(hist, "chance:"+s.ActionString(a))
					movers = append(movers, p)
					s.Apply(a)
				default:
					s.Legal(mask)
					a := mask.Random(rng)
					hist = append(hist, s.ActionString(a))
					movers = append(movers, p)
					s.Apply(a)
				}
			}
		}
	}
	return out
}

// renderReplay renders s as a replay frame: no move on offer.
func renderReplay(s games.State, view int) stateJSON {
	legal := func(p int, m games.Mask) { games.LegalOf(s, p, m) }
	return render(s, view, nil, func(int) bool { return false }, legal, nil, games.NoAction)
}

// sessionHistory is hist as session.view shows it to view.
func sessionHistory(s games.State, view int, movers []int, hist []string) []string {
	h := append([]string{}, hist...)
	hidePending(s, view, movers, h)
	return h
}

// TestRenderGolden pins the JSON the page draws every game from (boards,
// panels, placements, winning lines, hidden histories) against
// testdata/render.golden.json.gz, written from the drawing code before it
// moved into the game packages (issue 39, item 5) so that the move is seen
// to change nothing. Regenerate with go test ./web -run TestRenderGolden
// -update after an intended change, and read the diff of the gunzipped
// files.
func TestRenderGolden(t *testing.T) {
	frames := goldenFrames(t)
	var got bytes.Buffer
	enc := json.NewEncoder(&got)
	for _, f := range frames {
		if err := enc.Encode(f); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join("testdata", "render.golden.json.gz")
	if *update {
		var z bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
		zw.Write(got.Bytes())
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, z.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %d frames, %d bytes (%d gzipped)", path, len(frames), got.Len(), z.Len())
		return
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%v (write it with -update)", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	want, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	wl, gl := strings.Split(string(want), "\n"), strings.Split(got.String(), "\n")
	if len(wl) != len(gl) {
		t.Errorf("%d frames, golden has %d", len(gl)-1, len(wl)-1)
	}
	bad := 0
	for i := range min(len(wl), len(gl)) {
		if wl[i] != gl[i] {
			if bad++; bad <= 3 {
				t.Errorf("frame %d differs:\n got %s\nwant %s", i, gl[i], wl[i])
			}
		}
	}
	if bad > 3 {
		t.Errorf("%d frames differ in all", bad)
	}
}
