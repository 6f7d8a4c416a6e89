package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/sequence"
)

// The browser tests of issue 45: winning lines, hints and seat colours
// on the boards; the replay's value graph, its jumps and overlay; the
// list of logs without arena results.

// playTo plays moves (texts) by people in a new game and returns its id.
func playTo(t *testing.T, hs *httptest.Server, game string, moves ...string) string {
	t.Helper()
	st := create(t, hs, game, "human", "human")
	for _, m := range moves {
		if code, msg := call(t, hs, "POST", "/api/games/"+st.ID+"/move", moveRequest{Action: m}, nil); code != http.StatusOK {
			t.Fatalf("%s: move %s: %d %s", game, m, code, msg)
		}
	}
	return st.ID
}

func TestBrowserWinningLine(t *testing.T) {
	_, hs := testServer(t, Config{})
	c4 := playTo(t, hs, "connect4", "1", "2", "1", "2", "1", "2", "1")
	hex := playTo(t, hs, "hex:size=3,swap=false", "b1", "a1", "c1", "a2", "b2", "c3", "b3")
	// Connect4d with 4 boards: player 0's 3-D line climbs column a from
	// board 0 to board 3 (games/connect4d's TestWinningLine).
	var c4d []string
	for _, turn := range [][4]int{{0, 6, 6, 6}, {6, 0, 0, 0}, {5, 0, 5, 5}, {5, 5, 0, 0}, {4, 4, 0, 4}, {4, 4, 4, 0}, {3, 3, 3, 0}} {
		for b, c := range turn {
			c4d = append(c4d, fmt.Sprintf("%d%c", b, 'a'+c))
		}
	}
	c4dID := playTo(t, hs, "connect4d:d=4", c4d...)
	fresh := playTo(t, hs, "connect4")
	freshHex := playTo(t, hs, "hex:size=5")
	p := newPage(t, hs)
	for _, c := range []struct {
		name, id, kind string
		cells          int
	}{{"connect4-won", c4, "connect4", 4}, {"hex-won", hex, "hex", 3}, {"connect4d-won", c4dID, "connect4d", 4}} {
		p.open("#/game/" + c.id)
		p.until(c.name+": the board", fmt.Sprintf(`!!document.querySelector("svg.board-%s")`, c.kind))
		if n := eval[int](p, `document.querySelectorAll("svg.board .winline").length`); n != c.cells {
			t.Errorf("%s: %d cells of the winning line marked, want %d", c.name, n, c.cells)
		}
		if s := eval[string](p, `document.getElementById("status").textContent`); s != "game over: player 0 wins" {
			t.Errorf("%s: status %q, want the result in words", c.name, s)
		}
		p.screenshot(c.name)
	}
	// Hints on boards a person can play, seat badges in the pieces'
	// colours (Hex: black and white stones).
	p.open("#/game/" + fresh)
	p.until("connect4: the hint", `!!document.querySelector(".hint") && document.querySelector(".hint").textContent.includes("Click a column")`)
	p.open("#/game/" + freshHex)
	p.until("hex: the hint", `!!document.querySelector(".hint") && document.querySelector(".hint").textContent.includes("Black (player 0) joins the top and bottom")`)
	if bg := eval[string](p, `getComputedStyle(document.querySelector("#seats .seat.p1")).backgroundColor`); bg != "rgb(251, 251, 251)" {
		t.Errorf("hex: player 1's badge is %s, want White's stone colour", bg)
	}
	p.screenshot("hex-hint")
}

// seqLog returns a finished Sequence game won by someone, random moves
// from a seed on, as an arena.Log.
func seqLog(t *testing.T) []byte {
	t.Helper()
	g := sequence.New(2, true)
	for seed := range uint64(50) {
		s := g.NewInitialState()
		rng := games.NewRand(seed)
		mask := games.NewMask(g.NumActions())
		l := arena.Log{Game: g.Spec(), Players: []string{"random", "random"}, Seed: seed}
		for !s.IsTerminal() {
			p := s.CurrentPlayer()
			var a games.Action
			if p == games.ChancePlayer {
				a = s.(games.ChanceState).SampleChance(rng)
			} else {
				s.Legal(mask)
				a = mask.Random(rng)
			}
			l.Moves = append(l.Moves, arena.LogMove{Player: p, Action: s.ActionString(a)})
			s.Apply(a)
		}
		if s.(*sequence.State).Winner() < 0 {
			continue
		}
		l.Returns = make([]float64, 2)
		s.Returns(l.Returns)
		data, err := json.Marshal(l)
		must(t, err)
		return data
	}
	t.Fatal("no random Sequence game was won")
	return nil
}

func TestBrowserReplayGraph(t *testing.T) {
	logs := t.TempDir()
	must(t, os.WriteFile(filepath.Join(logs, "c4.json"), []byte(c4Log), 0o644))
	must(t, os.WriteFile(filepath.Join(logs, "seq.json"), seqLog(t), 0o644))
	must(t, os.WriteFile(filepath.Join(logs, "arena.json"), []byte(arenaResult), 0o644))
	_, hs := testServer(t, Config{Logs: logs})
	p := newPage(t, hs)
	p.open("#/replay")
	p.until("the lists of logs", `!!document.querySelector('#logs a[href="#/replay/c4.json"]') && !!document.querySelector('#arena-files a.arena-file')`)
	if n := eval[int](p, `document.querySelectorAll('#logs a[href*="arena.json"]').length`); n != 0 {
		t.Error("the arena result is offered as a game log to replay")
	}
	p.click(`#logs a[href="#/replay/c4.json"]`)
	p.until("the replay", `!!document.querySelector("#replay svg.board-connect4") && !!document.getElementById("graph")`)
	// The buttons are drawn, not font glyphs.
	if n := eval[int](p, `["first","prev","next","last","play"].filter(id => document.querySelector("#" + id + " svg.icon path")).length`); n != 5 {
		t.Errorf("%d of the 5 replay buttons have drawn icons", n)
	}
	p.do("choosing the solver", chromedp.SetValue(chromedp.ID("graph-agent"), "solver"))
	p.click("#graph")
	p.until("the value graph", `document.getElementById("value-graph").dataset.done === "true" && document.querySelectorAll("#value-graph .vpt").length === 8`)
	// Position 6: player 0 wins at once, +1; position 5: player 1 can
	// block, the solver says player 0 still wins (three stones stacked,
	// and the rest of the game); the end: +1.
	for _, c := range []struct {
		pos  int
		want string
	}{{6, "+1.00"}, {7, "+1.00"}} {
		got := eval[string](p, fmt.Sprintf(`document.querySelector('#value-graph .vpt[data-pos="%d"] title').textContent`, c.pos))
		if !strings.HasSuffix(got, c.want) {
			t.Errorf("value graph at position %d: %q, want %s", c.pos, got, c.want)
		}
	}
	// A click on the graph jumps there, with the analysis overlaid.
	p.do("clicking the graph at position 3", chromedp.Evaluate[chromedp.Void](`(() => {
		const c = document.querySelector('#value-graph .vpt[data-pos="3"]'), b = c.getBoundingClientRect();
		c.dispatchEvent(new MouseEvent("click", { bubbles: true, clientX: b.left + b.width / 2, clientY: b.top + b.height / 2 })); })()`))
	p.until("position 3 with its analysis", `document.getElementById("frame").textContent.includes("position 3 of 7")
		&& !!document.querySelector("#replay-analysis #analysis") && document.querySelectorAll("#replay svg.board-connect4 text.an").length > 0`)
	if s := eval[string](p, `document.querySelector("#replay-analysis #analysis th:last-child").textContent`); s != "solver score" {
		t.Errorf("the solver's score column is headed %q, want \"solver score\"", s)
	}
	p.screenshot("replay-graph")
	p.click("#last")
	p.until("the end with its line", `document.getElementById("frame").textContent.includes("position 7 of 7") && document.querySelectorAll("#replay .winline").length === 4`)
	// Sequence: chance positions named as such, the sequence marked.
	p.open("#/replay/seq.json")
	p.until("the sequence replay", `!!document.querySelector("#replay svg.board-sequence")`)
	if s := eval[string](p, `document.querySelector("#replay .status").textContent`); !strings.Contains(s, "chance move next") || strings.Contains(s, "player -1") {
		t.Errorf("Sequence's first position reads %q", s)
	}
	p.click("#last")
	p.until("the sequence's line", `document.querySelectorAll("#replay .winline").length >= 4`)
	p.screenshot("replay-sequence")
}

// TestBrowserGenericGrid: a board of a kind the page has no drawing of
// its own for (a new game's games.Board) is drawn as a grid: every cell,
// the stones, the labels and the winning line, with only the legal cells'
// actions clickable.
func TestBrowserGenericGrid(t *testing.T) {
	_, hs := testServer(t, Config{})
	p := newPage(t, hs)
	p.open("#/")
	p.until("the page's scripts", `typeof drawBoard === "function"`)
	got := eval[string](p, `(() => {
		const st = {board: {kind: "no-such-kind", rows: 2, cols: 3, active: 0,
			cells: [[0, -1, 1], [-1, -1, -1]], actions: [[-1, 1, -1], [3, 4, 5]],
			labels: [["a", "b", "c"], ["d", "e", "f"]], marks: [[0, 1, 0], [0, 0, 2]], line: [[0, 0], [0, 2]]},
			legal: [{player: 0, actions: [{id: 1, text: "b"}, {id: 4, text: "e"}]}]};
		let clicked = -1;
		const pic = drawBoard(st, a => { clicked = a; }, null);
		document.body.append(pic);
		const live = [...pic.querySelectorAll(".cell:not(.illegal)")].map(c => c.getAttribute("data-action"));
		pic.querySelector('.cell[data-action="4"]').dispatchEvent(new MouseEvent("click", {bubbles: true}));
		const off = pic.querySelector('.cell[data-action="5"]');
		off.dispatchEvent(new MouseEvent("click", {bubbles: true}));
		return JSON.stringify({cells: pic.querySelectorAll(".cell").length, stones: pic.querySelectorAll(".stone").length,
			labels: [...pic.querySelectorAll(".cell text")].map(x => x.textContent).join(""),
			line: pic.querySelectorAll(".winline").length, live, clicked});
	})()`)
	want := `{"cells":6,"stones":2,"labels":"abcdef","line":2,"live":["1","4"],"clicked":4}`
	if got != want {
		t.Errorf("generic grid: %s\nwant %s", got, want)
	}
}
