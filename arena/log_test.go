package arena

import (
	"bytes"
	"context"
	"github.com/canopy-go/canopy/agent"
	"slices"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/sushigo"
	_ "github.com/canopy-go/canopy/games/tetrislink"
	_ "github.com/canopy-go/canopy/games/tictactoe"
)

func playLogged(t testing.TB, spec string, seed uint64) (*Log, *Record) {
	g := games.MustNew(spec)
	specs := make([]string, g.NumPlayers())
	for i := range specs {
		specs[i] = "random"
	}
	ags, err := NewAgents(g, specs, agent.Env{Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := PlayGame(context.Background(), g, ags, specs, seed)
	if err != nil {
		t.Fatal(err)
	}
	l, err := LogFromRecord(g, rec, seed)
	if err != nil {
		t.Fatal(err)
	}
	return l, rec
}

// A log written for a scored game (Tetris Link, 3 players) and for a
// simultaneous game with chance (Sushi Go) replays to the same final state,
// and every corruption is caught with a message naming the problem.
func TestLogRoundTrip(t *testing.T) {
	for _, spec := range []string{"tetrislink:players=3", "sushigo:players=3", "tictactoe"} {
		l, rec := playLogged(t, spec, 4)
		var buf bytes.Buffer
		if err := WriteLog(&buf, l); err != nil {
			t.Fatal(err)
		}
		back, end, err := ReadLog(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		if end.String() != rec.Final.String() || !end.IsTerminal() || len(back.Moves) != len(l.Moves) {
			t.Errorf("%s: replay ends at %q, want %q", spec, end.String(), rec.Final.String())
		}
		if spec == "tetrislink:players=3" && l.Moves[0].Scores == nil {
			t.Errorf("%s: no scores recorded after the first move", spec)
		}
	}
}

func TestLogErrors(t *testing.T) {
	l, _ := playLogged(t, "tetrislink:players=3", 4)
	var buf bytes.Buffer
	if err := WriteLog(&buf, l); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	first := l.Moves[0].Action
	for _, tc := range []struct{ name, json, want string }{
		{"not json", "{", "not valid JSON"},
		{"unknown field", strings.Replace(good, `"game"`, `"extra": 1, "game"`, 1), "unknown field"},
		{"bad option", strings.Replace(good, "tetrislink:players=3", "tetrislink:players=9", 1), "players"},
		{"unknown game", strings.Replace(good, "tetrislink:players=3", "nosuchgame", 1), "unknown game"},
		{"player count", strings.Replace(good, `"random",`, "", 1), "players listed"},
		{"bad action", strings.Replace(good, `"action": "`+first+`"`, `"action": "Q`+first+`"`, 1), "move 1"},
		{"wrong turn", strings.Replace(good, `"player": 0,`, `"player": 1,`, 1), "turn"},
		{"wrong score", strings.Replace(good, `"scores": [`+"\n", `"scores": [`+"\n        7,\n", 1), "scores"},
	} {
		_, _, err := ReadLog(strings.NewReader(tc.json))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}

func FuzzReadLog(f *testing.F) {
	for _, spec := range []string{"tetrislink", "sushigo:players=2", "tictactoe"} {
		l, _ := playLogged(f, spec, 1)
		var buf bytes.Buffer
		if err := WriteLog(&buf, l); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.String())
	}
	f.Add(`{"game":"tictactoe","moves":[{"player":0,"action":"5"}]}`)
	f.Fuzz(func(t *testing.T, js string) {
		l, s, err := ReadLog(strings.NewReader(js))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		var out bytes.Buffer
		if err := WriteLog(&out, l); err != nil {
			t.Fatal(err)
		}
		if _, s2, err := ReadLog(&out); err != nil || s2.String() != s.String() {
			t.Fatalf("accepted log does not round-trip: %v", err)
		}
		// An accepted log's tournament result (arena --resume) counts its
		// decisions and keeps its returns, or is refused with an error.
		seats := make([]int, s.Game().NumPlayers())
		r, err := l.Result(seats)
		if err != nil {
			return
		}
		decisions := 0
		for _, m := range l.Moves {
			if m.Player >= 0 {
				decisions++
			}
		}
		if r.Length != decisions || !slices.Equal(r.Returns, l.Returns) || len(r.Think) != len(seats) {
			t.Fatalf("result %+v of a log with %d decisions and returns %v", r, decisions, l.Returns)
		}
	})
}

// Log.Result refuses logs it cannot count: unfinished, seats of another
// player count, a summary without move counts or without times.
func TestLogResultRefuses(t *testing.T) {
	sum := func(moves []int, ms []float64) *LogSummary {
		return &LogSummary{Ordinals: []float64{1, 2}, Moves: moves, MoveTimeMS: ms}
	}
	for name, l := range map[string]*Log{
		"unfinished":   {Moves: []LogMove{{Player: 0, Action: "a"}}},
		"no summary":   {Returns: []float64{1, -1}},
		"no times":     {Returns: []float64{1, -1}, Summary: sum([]int{1, 1}, nil)},
		"short counts": {Returns: []float64{1, -1}, Summary: sum([]int{1}, []float64{2, 3})},
	} {
		if _, err := l.Result([]int{0, 1}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	ok := &Log{Returns: []float64{1, -1}, Summary: sum([]int{3, 2}, []float64{10, 20})}
	if _, err := ok.Result([]int{0}); err == nil {
		t.Error("one seat for a 2-player log: accepted")
	}
	r, err := ok.Result([]int{1, 0})
	if err != nil || r.Length != 5 || r.Think[0] != 0.03 || r.Think[1] != 0.04 {
		t.Errorf("result %+v, %v; want length 5, think [0.03 0.04]", r, err)
	}
}
