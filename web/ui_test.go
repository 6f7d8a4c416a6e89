package web

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// A finished game's state names its winning line in the board's rows
// (row 0 at the top) and its result in words.
func TestWinningLineInState(t *testing.T) {
	_, hs := testServer(t, Config{})
	st := create(t, hs, "connect4", "human", "human")
	var out stateJSON
	for _, m := range []string{"1", "2", "1", "2", "1", "2", "1"} {
		if code, msg := call(t, hs, "POST", "/api/games/"+st.ID+"/move", moveRequest{Action: m}, &out); code != 200 {
			t.Fatalf("move %s: %d %s", m, code, msg)
		}
	}
	// Column 1, rows 0-3 from the bottom: rows 5, 4, 3, 2 from the top.
	want := [][2]int{{5, 0}, {4, 0}, {3, 0}, {2, 0}}
	if out.Board == nil || !slices.Equal(out.Board.Line, want) {
		t.Errorf("winning line %v, want %v", out.Board.Line, want)
	}
	if out.Result != "game over: player 0 wins" {
		t.Errorf("result %q, want it in words", out.Result)
	}
	// Hex: Black's chain b1 b2 b3 on 3x3.
	st = create(t, hs, "hex:size=3,swap=false", "human", "human")
	for _, m := range []string{"b1", "a1", "c1", "a2", "b2", "c3", "b3"} {
		if code, msg := call(t, hs, "POST", "/api/games/"+st.ID+"/move", moveRequest{Action: m}, &out); code != 200 {
			t.Fatalf("move %s: %d %s", m, code, msg)
		}
	}
	if want := [][2]int{{0, 1}, {1, 1}, {2, 1}}; !slices.Equal(out.Board.Line, want) {
		t.Errorf("hex: winning line %v, want %v", out.Board.Line, want)
	}
	// A draw, in words.
	out = stateJSON{}
	st = create(t, hs, "tictactoe", "human", "human")
	for _, m := range []string{"1", "2", "3", "5", "4", "6", "8", "7", "9"} {
		if code, msg := call(t, hs, "POST", "/api/games/"+st.ID+"/move", moveRequest{Action: m}, &out); code != 200 {
			t.Fatalf("move %s: %d %s", m, code, msg)
		}
	}
	if out.Result != "game over: a draw" || out.Board.Line != nil {
		t.Errorf("tictactoe draw: result %q, line %v", out.Result, out.Board.Line)
	}
}

// c4Log is a Connect Four log: player 0 plays column 1 four times, player
// 1 column 2 three times; position 6 has player 0 to move with a win in
// column 1, position 5 player 1 to move who must block it.
const c4Log = `{"game":"connect4","players":["a","b"],"moves":[{"player":0,"action":"1"},{"player":1,"action":"2"},{"player":0,"action":"1"},{"player":1,"action":"2"},{"player":0,"action":"1"},{"player":1,"action":"2"},{"player":0,"action":"1"}],"returns":[1,-1]}`

func TestReplayAnalyze(t *testing.T) {
	logs := t.TempDir()
	must(t, os.WriteFile(filepath.Join(logs, "c4.json"), []byte(c4Log), 0o644))
	must(t, os.WriteFile(filepath.Join(logs, "arena.json"), []byte(arenaResult), 0o644))
	_, hs := testServer(t, Config{Logs: logs})
	var pv positionValueJSON
	// Player 0 to move wins at once: the solver's value for the mover is 1.
	if code, msg := call(t, hs, "POST", "/api/replay/analyze", replayAnalyzeRequest{Name: "c4.json", Agent: "solver", Position: 6}, &pv); code != 200 {
		t.Fatalf("position 6: %d %s", code, msg)
	}
	if pv.Player != 0 || pv.Value == nil || *pv.Value != 1 || pv.Analysis == nil || len(pv.Analysis.Rows) != 7 {
		t.Errorf("position 6: %+v; want player 0, value 1 and 7 rows", pv)
	}
	// The log itself instead of its name; the end: the returns, no analysis.
	pv = positionValueJSON{}
	if code, msg := call(t, hs, "POST", "/api/replay/analyze", `{"log":`+c4Log+`,"agent":"mcts:sims=50","position":7}`, &pv); code != 200 {
		t.Fatalf("position 7: %d %s", code, msg)
	}
	if !slices.Equal(pv.Returns, []float64{1, -1}) || pv.Analysis != nil {
		t.Errorf("position 7 (the end): %+v; want returns [1 -1], no analysis", pv)
	}
	for _, c := range []struct {
		body string
		want string
	}{
		{`{"name":"c4.json","agent":"solver","position":8}`, "the log has positions 0 to 7"},
		{`{"name":"c4.json","agent":"random","position":1}`, "cannot analyse"},
		{`{"name":"c4.json","agent":"","position":1}`, "name an analyzer"},
		{`{"name":"c4.json","log":{},"agent":"solver"}`, "not both"},
		{`{"agent":"solver"}`, "give a log"},
		{`{"name":"../c4.json","agent":"solver"}`, ""},
		{`{"name":"c4.json","agent":"mcts:sims=999999999","position":1}`, "sims"},
	} {
		code, msg := call(t, hs, "POST", "/api/replay/analyze", c.body, nil)
		if code != http.StatusBadRequest && code != http.StatusNotFound || !strings.Contains(msg, c.want) {
			t.Errorf("%s: %d %q; want 400 or 404 with %q", c.body, code, msg, c.want)
		}
	}
	// The log list tells game logs from arena results; an arena result is
	// not replayed.
	var ls []logEntry
	if code, msg := call(t, hs, "GET", "/api/logs", nil, &ls); code != 200 {
		t.Fatalf("logs: %d %s", code, msg)
	}
	if want := []logEntry{{"arena.json", "arena"}, {"c4.json", "game"}}; !slices.Equal(ls, want) {
		t.Errorf("logs %v, want %v", ls, want)
	}
	if code, msg := call(t, hs, "GET", "/api/logs/arena.json", nil, nil); code != http.StatusBadRequest || !strings.Contains(msg, "Dashboard") {
		t.Errorf("replaying an arena result: %d %q; want 400 pointing at the Dashboard", code, msg)
	}
	// Replay frames: chance positions and moves read as such (Sequence
	// deals cards by chance).
	var rep replayJSON
	seqLog := `{"game":"sequence","players":["a","b"],"moves":[{"player":-1,"action":"2S"}]}`
	if code, msg := call(t, hs, "POST", "/api/replay", seqLog, &rep); code != 200 {
		t.Fatalf("sequence replay: %d %s", code, msg)
	}
	if rep.Frames[0].Result != "chance move next (a card dealt or drawn, dice rolled)" || rep.Moves[0] != "chance: 2S" {
		t.Errorf("chance: frame 0 %q, move %q", rep.Frames[0].Result, rep.Moves[0])
	}
}

// Dashboard charts drawn for the page's width: ?width=PX.
func TestChartWidth(t *testing.T) {
	logs := t.TempDir()
	must(t, os.WriteFile(filepath.Join(logs, "arena.json"), []byte(arenaResult), 0o644))
	_, hs := testServer(t, Config{Logs: logs})
	width := func(path string) (int, string) {
		resp, err := hs.Client().Get(hs.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, regexp.MustCompile(`<svg[^>]*width="([0-9.]+)pt"`).FindStringSubmatch(string(data))[1:][0]
	}
	code, own := width("/api/dashboard/arena/arena.json/ratings.svg")
	code2, wide := width("/api/dashboard/arena/arena.json/ratings.svg?width=1152") // 12 inches = 864 pt
	if code != 200 || code2 != 200 || wide != "864" || own == wide {
		t.Errorf("ratings chart: %d width %spt; with ?width=1152: %d width %spt (want 864)", code, own, code2, wide)
	}
	if code, msg := call(t, hs, "GET", "/api/dashboard/arena/arena.json/ratings.svg?width=5", nil, nil); code != http.StatusBadRequest || !strings.Contains(msg, "want pixels") {
		t.Errorf("?width=5: %d %q", code, msg)
	}
}

// FuzzReplayAnalyze posts random bodies to POST /api/replay/analyze: a
// log (given inline or named) and an analyzer kept cheap by the caps.
func FuzzReplayAnalyze(f *testing.F) {
	for _, seed := range []string{
		`{"name":"c4.json","agent":"solver","position":6}`,
		`{"log":` + c4Log + `,"agent":"mcts:sims=20","position":3}`,
		`{"log":{"game":"hex:size=3","moves":[{"player":0,"action":"b2"}]},"agent":"policy:net=random","position":1}`,
		`{"log":{"game":"sequence","moves":[{"player":-1,"action":"2S"}]},"agent":"mcts:sims=5","position":0}`,
		`{"name":"../x.json","agent":"solver"}`, `{"position":-1}`, `{"log":[],"agent":"x"}`, `null`, ``,
	} {
		f.Add(seed)
	}
	logs := f.TempDir()
	if err := os.WriteFile(filepath.Join(logs, "c4.json"), []byte(c4Log), 0o644); err != nil {
		f.Fatal(err)
	}
	s, err := New(Config{Logs: logs, MaxSims: 50, MaxNodes: 1000, MaxThreads: 1, Logf: f.Logf})
	if err != nil {
		f.Fatal(err)
	}
	defer s.Close()
	h := s.Handler()
	f.Fuzz(func(t *testing.T, body string) {
		fuzzPost(t, h, "/api/replay/analyze", body)
		if n := s.Panics(); n != 0 {
			t.Fatalf("%d handler panic(s)", n)
		}
	})
}
