package plots

import (
	"bytes"
	"errors"
	"image/color"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	_ "github.com/canopy-go/canopy/games/sequence"
	_ "github.com/canopy-go/canopy/games/tictactoe"
)

func names(figs []*Figure) []string {
	var out []string
	for _, f := range figs {
		out = append(out, f.Name)
	}
	return out
}

const zeroLines = `{"iteration":1,"train":{"final_loss":{"Total":3,"Policy":2,"Value":1}},"eval":{}}
{"iteration":2,"train":{"final_loss":{"Total":2.5,"Policy":1.5,"Value":1}},"eval":{"scores":[{"opponent":"iter-0001","games":20,"score":0.5,"lo":0.3,"hi":0.7},{"opponent":"random","games":20,"score":0.6,"lo":0.4,"hi":0.8}],"alone":[{"opponent":"random","games":200,"score":0.55,"lo":0.48,"hi":0.62}],"solver_policy":0.5,"solver_search":0.75,"solver_random":0.25},"elo":{"value":30,"lo":-20,"hi":80}}
{"iteration":3,"train":{"final_loss":{"Total":2,"Policy":1.25,"Value":0.75},"held_out":{"Total":2.5,"Policy":1.5,"Value":1}},"eval":{"scores":[{"opponent":"iter-0002","games":20,"score":0.45,"lo":0.25,"hi":0.65},{"opponent":"random","games":20,"score":0.7,"lo":0.5,"hi":0.85}],"solver_policy":0.625,"solver_search":0.875,"solver_random":0.25},"elo":{"value":70,"lo":20,"hi":120}}
`

func TestZeroFigures(t *testing.T) {
	its, err := ParseZeroMetrics([]byte(zeroLines), "m.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(its) != 3 || its[2].Loss != (Loss{2, 1.25, 0.75, 0}) || its[1].HeldOut != nil || *its[2].HeldOut != (Loss{2.5, 1.5, 1, 0}) || *its[1].SolverSearch != 0.75 || its[0].Elo != nil || *its[2].Elo != (Interval{70, 20, 120}) {
		t.Fatalf("parsed %+v", its)
	}
	figs := ZeroFigures("connect4", its)
	if got := names(figs); !slices.Equal(got, []string{"loss", "elo", "scores", "solver"}) {
		t.Fatalf("figures %v, want loss, elo, scores, solver", got)
	}
	for i, legend := range [][]string{{"total", "policy", "value", "l2", "policy, held out", "value, held out"}, {"network"}, {"vs random", "alone vs random"}, {"network alone", "with search", "random moves"}} {
		doc := render(t, figs[i])
		for _, l := range legend {
			if !doc.hasText(l) {
				t.Errorf("%s: no legend entry %q", figs[i].Name, l)
			}
		}
		if doc.textContaining("connect4: ") != 1 {
			t.Errorf("%s: want one title naming the game", figs[i].Name)
		}
	}
	// The scores chart: one series per baseline with search and one
	// alone, in percent with their intervals; the previous network, a
	// different opponent every iteration, is left out.
	if doc := render(t, figs[2]); doc.hasText("vs iter-0001") || doc.hasText("vs iter-0002") {
		t.Error("scores chart draws the previous network as an opponent")
	}
	sc := scoreSeries(its)
	want := []Series{
		{Name: "vs random", X: []float64{2, 3}, Y: []float64{60, 70}, Lo: []float64{40, 50}, Hi: []float64{80, 85}},
		{Name: "alone vs random", X: []float64{2}, Y: []float64{55}, Lo: []float64{48}, Hi: []float64{62}},
	}
	if len(sc) != len(want) {
		t.Fatalf("score series %+v, want %+v", sc, want)
	}
	for i := range want {
		g, w := sc[i], want[i]
		if g.Name != w.Name || !slices.Equal(g.X, w.X) || !approxEqual(g.Y, w.Y) || !approxEqual(g.Lo, w.Lo) || !approxEqual(g.Hi, w.Hi) {
			t.Errorf("score series %d = %+v, want %+v", i, g, w)
		}
	}
	// Without held-out losses: no held-out series.
	if doc := render(t, ZeroFigures("hex", its[:2])[0]); doc.hasText("value, held out") {
		t.Error("held-out series drawn for iterations without a held-out loss")
	}
	// Without evaluations: the loss chart only.
	if got := names(ZeroFigures("hex", its[:1])); !slices.Equal(got, []string{"loss"}) {
		t.Errorf("one iteration without Elo or solver: figures %v, want loss only", got)
	}
	if ZeroFigures("hex", nil) != nil {
		t.Errorf("figures for no iterations")
	}
}

func TestParseZeroMetricsErrors(t *testing.T) {
	good := `{"iteration":1,"train":{"final_loss":{"Total":3,"Policy":2,"Value":1}}}` + "\n"
	for _, c := range []struct{ name, data, want string }{
		{"cut", good + `{"iteration":2,"train":`, "m.jsonl:2: not a JSON metrics record"},
		{"no iteration", good + "\n" + `{"train":{"final_loss":{}}}`, "m.jsonl:3: no \"iteration\" field"},
		{"no loss", `{"iteration":1}`, "m.jsonl:1: no \"train.final_loss\""},
		{"order", good + good, "m.jsonl:2: iteration 1 after iteration 1"},
		{"elo", `{"iteration":1,"train":{"final_loss":{}},"elo":{"value":5,"lo":6,"hi":7}}`, "m.jsonl:1: iteration 1: Elo 5 outside its interval"},
		{"share", `{"iteration":1,"train":{"final_loss":{}},"eval":{"solver_policy":1.5,"solver_search":1}}`, "outside [0, 1]"},
		{"score", `{"iteration":1,"train":{"final_loss":{}},"eval":{"scores":[{"opponent":"random","score":0.9,"lo":0.2,"hi":0.8}]}}`, "m.jsonl:1: iteration 1: score 0.9 against \"random\" outside [0, 1] or its interval"},
		{"alone score", `{"iteration":1,"train":{"final_loss":{}},"eval":{"alone":[{"opponent":"random","score":1.2,"lo":0.9,"hi":1.3}]}}`, "outside [0, 1]"},
		{"rl file", `{"update":1,"loss":0.5}`, "m.jsonl:1: no \"iteration\""},
	} {
		_, err := ParseZeroMetrics([]byte(c.data), "m.jsonl")
		var ie *InputError
		if err == nil || !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want an InputError containing %q", c.name, err, c.want)
		}
	}
}

func TestPPOMetrics(t *testing.T) {
	data := `{"update":1,"loss":1,"policy_loss":0.5,"value_loss":0.4,"entropy":1.2,"episodes":10,"wins":4,"draws":1,"losses":5}
{"update":2,"loss":0.9,"policy_loss":0.4,"value_loss":0.3,"entropy":1.1,"episodes":0}
{"update":3,"loss":0.8,"policy_loss":0.3,"value_loss":0.3,"entropy":1.0,"episodes":12,"wins":9,"draws":0,"losses":3}
{"update":4,"lo`
	ms, err := ParsePPOMetrics([]byte(data), "m.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 3 || ms[2].Wins != 9 {
		t.Fatalf("parsed %+v: want 3 updates (the cut last line left out)", ms)
	}
	// A bad line that is not the last is an error, as is a count that
	// does not fit.
	if _, err := ParsePPOMetrics([]byte(data[:strings.LastIndex(data, "\n")]+"\n{\n{\"update\":5}\n"), "m.jsonl"); err == nil || !strings.Contains(err.Error(), "m.jsonl:4:") {
		t.Errorf("bad middle line: %v, want an error at m.jsonl:4", err)
	}
	if _, err := ParsePPOMetrics([]byte(`{"update":1,"episodes":2,"wins":3}`+"\n"), "m.jsonl"); err == nil || !strings.Contains(err.Error(), "do not fit 2 episodes") {
		t.Errorf("wins over episodes: %v", err)
	}
	figs := PPOFigures("connect4", "random", ms)
	if got := names(figs); !slices.Equal(got, []string{"loss", "winrate"}) {
		t.Fatalf("figures %v", got)
	}
	doc := render(t, figs[1])
	if doc.textContaining("against random") != 1 || !doc.hasText("wins") {
		t.Errorf("win-rate chart: title or legend missing: %+v", doc.texts)
	}
}

func TestReadRun(t *testing.T) {
	fsys := fstest.MapFS{
		"zero.json":     {Data: []byte(`{"game":"connect4","iterations":3}`)},
		"metrics.jsonl": {Data: []byte(zeroLines)},
	}
	r, err := ReadRun(fsys, "runs/z")
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != "zero" || r.Game != "connect4" || r.Len() != 3 || len(r.Figures()) != 4 {
		t.Errorf("zero run read as %s %s with %d lines and %d figures", r.Kind, r.Game, r.Len(), len(r.Figures()))
	}
	r, err = ReadRun(fstest.MapFS{"ppo.json": {Data: []byte(`{"game":"tictactoe","opponent":"random"}`)}}, "runs/p")
	if err != nil || r.Kind != "ppo" || r.Opponent != "random" || r.Len() != 0 || r.Figures() != nil {
		t.Errorf("PPO run without metrics: %+v, %v", r, err)
	}
	if _, err := ReadRun(fstest.MapFS{}, "runs/e"); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "runs/e: neither zero.json") {
		t.Errorf("empty directory: %v, want a not-exist error naming it", err)
	}
	var ie *InputError
	if _, err := ReadRun(fstest.MapFS{"zero.json": {Data: []byte(`{"game":`)}}, "runs/c"); !errors.As(err, &ie) || ie.File != "runs/c/zero.json" {
		t.Errorf("corrupt zero.json: %v", err)
	}
	fsys["metrics.jsonl"] = &fstest.MapFile{Data: []byte(zeroLines + "oops\n")}
	if _, err := ReadRun(fsys, "runs/z"); !errors.As(err, &ie) || ie.File != "runs/z/metrics.jsonl" || ie.Line != 4 {
		t.Errorf("corrupt metrics: %v, want runs/z/metrics.jsonl:4", err)
	}
}

// Tic-tac-toe logs written by hand: cells 1-9 row by row, X (player 0)
// moves first.
const (
	xWins5  = `{"game":"tictactoe","players":["alice","bob"],"moves":[{"player":0,"action":"1"},{"player":1,"action":"4"},{"player":0,"action":"2"},{"player":1,"action":"5"},{"player":0,"action":"3"}],"returns":[1,-1]}`
	oWins6  = `{"game":"tictactoe","players":["alice","bob"],"moves":[{"player":0,"action":"1"},{"player":1,"action":"4"},{"player":0,"action":"2"},{"player":1,"action":"5"},{"player":0,"action":"9"},{"player":1,"action":"6"}],"returns":[-1,1]}`
	draw9   = `{"game":"tictactoe","players":["alice","bob"],"moves":[{"player":0,"action":"1"},{"player":1,"action":"2"},{"player":0,"action":"3"},{"player":1,"action":"5"},{"player":0,"action":"4"},{"player":1,"action":"6"},{"player":0,"action":"8"},{"player":1,"action":"7"},{"player":0,"action":"9"}],"returns":[0,0]}`
	open2   = `{"game":"tictactoe","players":["alice","bob"],"moves":[{"player":0,"action":"5"},{"player":1,"action":"1"}]}`
	bobX5   = `{"game":"tictactoe","players":["bob","alice"],"moves":[{"player":0,"action":"1"},{"player":1,"action":"4"},{"player":0,"action":"2"},{"player":1,"action":"5"},{"player":0,"action":"3"}],"returns":[1,-1]}`
	tttFile = xWins5 + "\n" + oWins6 + "\n" + draw9 + "\n" + open2 + "\n" + bobX5 + "\n"
)

func TestGameLengths(t *testing.T) {
	logs, err := ParseLogs([]byte(tttFile), "t.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	ls := GameLengths(logs, ByAgent)
	want := Lengths{Groups: []string{"won by alice", "won by bob", "draw"}, Values: [][]int{{5}, {6, 5}, {9}}, Unfinished: 1}
	if !reflect.DeepEqual(ls, want) {
		t.Errorf("by agent: %+v, want %+v", ls, want)
	}
	bySeat := GameLengths(logs, BySeat)
	want = Lengths{Groups: []string{"won by player 0", "won by player 1", "draw"}, Values: [][]int{{5, 5}, {6}, {9}}, Unfinished: 1}
	if !reflect.DeepEqual(bySeat, want) {
		t.Errorf("by seat: %+v, want %+v", bySeat, want)
	}
	if lo, w, n := ls.Bins(); lo != 5 || w != 1 || n != 5 {
		t.Errorf("bins from %d, width %d, %d of them; want 5, 1, 5", lo, w, n)
	}
	doc := render(t, LengthFigure("tictactoe", ls))
	// One filled bar per length that occurs in the group, and one legend
	// swatch.
	for g, bars := range []int{1, 2, 1} {
		if got := doc.countFill(colorOf(g)); got != bars+1 {
			t.Errorf("group %s: %d filled paths, want %d bars + 1 swatch", ls.Groups[g], got, bars)
		}
	}
	for _, l := range []string{"won by alice (1 game)", "won by bob (2 games)", "draw (1 game)"} {
		if !doc.hasText(l) {
			t.Errorf("no legend entry %q", l)
		}
	}
	if !strings.Contains(doc.allText(), "1 unfinished game left out") {
		t.Errorf("the title does not count the unfinished game")
	}
}

// Bins of a wide spread: at most maxBins, covering every length.
func TestBinsWide(t *testing.T) {
	ls := Lengths{Groups: []string{"a"}, Values: [][]int{{7, 300, 123}}}
	lo, w, n := ls.Bins()
	if n > maxBins || lo > 7 || lo+n*w <= 300 || lo%w != 0 {
		t.Errorf("bins from %d, width %d, %d of them: do not cover 7..300 in at most %d", lo, w, n, maxBins)
	}
}

func TestParseLogsErrors(t *testing.T) {
	illegal := strings.Replace(oWins6, `"action":"9"`, `"action":"1"`, 1)
	for _, c := range []struct{ name, data, want string }{
		{"second log illegal", xWins5 + "\n\n" + illegal + "\n", "t.json:3: log 2: game log: move 5"},
		{"not JSON", xWins5 + "\n{oops", "t.json:2: log 2: not JSON"},
		{"empty", " \n", "t.json: no game log"},
		{"unknown game", `{"game":"chess","moves":[]}`, "t.json:1: log 1: game log:"},
		{"arena result", `{"game":"tictactoe","agents":["a","b"],"pairwise":[]}`, "t.json:1: log 1: game log: not valid JSON of the expected form"},
	} {
		_, err := ParseLogs([]byte(c.data), "t.json")
		var ie *InputError
		if err == nil || !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want an InputError containing %q", c.name, err, c.want)
		}
	}
}

func TestWriteFiles(t *testing.T) {
	its, err := ParseZeroMetrics([]byte(zeroLines), "m")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "new", "plots")
	paths, err := WriteFiles(dir, ZeroFigures("connect4", its)[:2])
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"loss.svg", "loss.png", "elo.svg", "elo.png"}
	for i, p := range paths {
		if filepath.Base(p) != want[i] {
			t.Errorf("file %d is %s, want %s", i, p, want[i])
		}
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 4 || len(paths) != 4 {
		t.Errorf("%d files in the directory, %d reported; want 4 (no temporary files left)", len(ents), len(paths))
	}
	if _, err := (&Figure{Name: "x", build: ZeroFigures("c", its)[0].build}).Bytes("pdf"); err == nil {
		t.Errorf("unknown format accepted")
	}
}

func TestArenaFigures(t *testing.T) {
	// Three agents: a beat b 6-1-3 in 10 games, a and c met for 4 games
	// (1-2-1), b and c never met.
	js := `{"game":"connect4","agents":["a","b","c"],"games_per_table":10,"total_games":14,"seed":1,"bootstrap":100,
"pairwise":[[{"games":0,"wins":0,"draws":0,"losses":0},{"games":10,"wins":6,"draws":1,"losses":3,"score":{"value":0.65,"lo":0.35,"hi":0.86}},{"games":4,"wins":1,"draws":2,"losses":1,"score":{"value":0.5,"lo":0.15,"hi":0.85}}],
[{"games":10,"wins":3,"draws":1,"losses":6,"score":{"value":0.35,"lo":0.14,"hi":0.65}},{"games":0,"wins":0,"draws":0,"losses":0},{"games":0,"wins":0,"draws":0,"losses":0}],
[{"games":4,"wins":1,"draws":2,"losses":1,"score":{"value":0.5,"lo":0.15,"hi":0.85}},{"games":0,"wins":0,"draws":0,"losses":0},{"games":0,"wins":0,"draws":0,"losses":0}]],
"game_length_decisions":[],"elo":[{"agent":"a","value":60,"lo":10,"hi":110},{"agent":"b","value":-50,"lo":-100,"hi":0},{"agent":"c","value":-10,"lo":-90,"hi":70}],
"bradley_terry":[],"ilsr":[]}`
	res, err := ParseArena([]byte(js), "a.json")
	if err != nil {
		t.Fatal(err)
	}
	got := Pairings(res)
	want := []Pairing{
		{A: "a", B: "b", Win: 0.6, Draw: 0.1, Loss: 0.3, Score: 0.65, Lo: 0.35, Hi: 0.86, Games: 10},
		{A: "a", B: "c", Win: 0.25, Draw: 0.5, Loss: 0.25, Score: 0.5, Lo: 0.15, Hi: 0.85, Games: 4},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("pairings %+v, want %+v", got, want)
	}
	figs := ArenaFigures(res)
	if n := names(figs); !slices.Equal(n, []string{"pairs", "ratings"}) {
		t.Fatalf("figures %v", n)
	}
	doc := render(t, figs[0])
	for _, l := range []string{"a vs b (10)", "a vs c (4)", "win", "draw", "loss", "score"} {
		if !doc.hasText(l) {
			t.Errorf("pairs: no label %q", l)
		}
	}
	// Each colour: one bar per pairing and one legend swatch.
	for _, c := range []struct {
		name string
		col  color.Color
	}{{"win", winColor}, {"draw", drawColor}, {"loss", lossColor}} {
		if n := doc.countFill(c.col); n != 2+1 {
			t.Errorf("%s: %d filled paths, want 2 bars and 1 swatch", c.name, n)
		}
	}
	doc = render(t, figs[1])
	for _, l := range []string{"a", "b", "c"} {
		if !doc.hasText(l) {
			t.Errorf("ratings: no tick label %q", l)
		}
	}
	for _, c := range []struct{ name, data, want string }{
		{"not arena", `{"game":"x","moves":[]}`, "a.json: not the JSON of canopy arena --json"},
		{"one agent", `{"agents":["a"]}`, "1 agents listed"},
		{"counts", strings.Replace(js, `"games":10,"wins":6`, `"games":11,"wins":6`, 1), "a vs b: 6 wins, 1 draws and 3 losses do not add up to 11 games"},
	} {
		if _, err := ParseArena([]byte(c.data), "a.json"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.name, err, c.want)
		}
	}
}

// A Figure renders the same bytes from several goroutines at once (run
// with -race).
func TestFigureConcurrentRender(t *testing.T) {
	its, err := ParseZeroMetrics([]byte(zeroLines), "m")
	if err != nil {
		t.Fatal(err)
	}
	f := ZeroFigures("connect4", its)[1]
	want, err := f.Bytes("svg")
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			got, err := f.Bytes("svg")
			if err == nil && !bytes.Equal(got, want) {
				err = errors.New("a concurrent rendering differs")
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

func TestIntTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   []string
	}{
		{1.94, 3.06, []string{"2", "3"}},
		{-0.09, 3.09, []string{"0", "1", "2", "3"}},
		{0, 100, []string{"0", "50", "100"}},
	} {
		var got []string
		for _, tk := range (intTicks{}).Ticks(c.lo, c.hi) {
			if tk.Value != float64(int(tk.Value)) {
				t.Errorf("[%v, %v]: tick at %v", c.lo, c.hi, tk.Value)
			}
			if tk.Label != "" {
				got = append(got, tk.Label)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("[%v, %v]: labels %v, want %v", c.lo, c.hi, got, c.want)
		}
	}
}

// Any bytes: ParseZeroMetrics returns records or an error, never panics,
// and what it accepts can be drawn.
func FuzzParseZeroMetrics(f *testing.F) {
	f.Add([]byte(zeroLines))
	f.Add([]byte(`{"iteration":1,"train":{"final_loss":{"Total":1},"held_out":{"Value":1e309}}}`))
	f.Add([]byte(`{"iteration":2,"train":{"final_loss":{}},"elo":{"value":1,"lo":2,"hi":0}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		its, err := ParseZeroMetrics(data, "m.jsonl")
		if err != nil {
			return
		}
		for _, fig := range ZeroFigures("g", its) {
			if _, err := fig.Bytes("svg"); err != nil {
				t.Fatalf("accepted records do not draw: %v", err)
			}
		}
	})
}

// approxEqual reports whether a and b agree to 1e-9 (percentages made
// from shares are not exact in binary).
func approxEqual(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Abs(x-y) <= 1e-9 })
}
