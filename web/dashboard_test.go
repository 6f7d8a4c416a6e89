package web

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"github.com/canopy-go/canopy/agent"
	"io"
	"net/http"
	"net/http/httptest"
	neturl "net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/games"
)

// dashFixture lays out run directories and a logs directory:
//
//	runs/zrun   zero.json, three iterations of metrics (two with Elo and solver)
//	runs/prun   ppo.json, no metrics yet
//	runs/plain  neither configuration
//	runs/bad    zero.json, metrics.jsonl cut at line 2
//	logs/       two tic-tac-toe files (one with two logs), one Sequence
//	            game, an arena result, a bad log and a symlink out
type dashFixture struct {
	runs []string
	logs string
	seq  *arena.Log // the Sequence game
}

func newDashFixture(t testing.TB) dashFixture {
	t.Helper()
	check := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	root := t.TempDir()
	var f dashFixture
	files := map[string]string{
		"runs/zrun/zero.json": `{"game":"connect4"}`,
		"runs/zrun/metrics.jsonl": `{"iteration":1,"train":{"final_loss":{"Total":3,"Policy":2,"Value":1}}}
{"iteration":2,"train":{"final_loss":{"Total":2,"Policy":1.5,"Value":0.5}},"eval":{"solver_policy":0.5,"solver_search":0.7},"elo":{"value":10,"lo":-5,"hi":25}}
{"iteration":3,"train":{"final_loss":{"Total":1.5,"Policy":1,"Value":0.5}},"eval":{"solver_policy":0.6,"solver_search":0.8},"elo":{"value":30,"lo":15,"hi":45}}
`,
		"runs/prun/ppo.json":     `{"game":"tictactoe","opponent":"random"}`,
		"runs/plain/notes.txt":   "nothing",
		"runs/bad/zero.json":     `{"game":"connect4"}`,
		"runs/bad/metrics.jsonl": `{"iteration":1,"train":{"final_loss":{}}}` + "\n{\"iter\n",
		"secret.json":            `{"secret":true}`,
		"logs/ttt1.json":         tttLog("a", "b", "1 4 2 5 3", "1,-1"),
		"logs/ttt2.json":         tttLog("b", "a", "1 4 2 5 3", "1,-1") + "\n" + tttLog("a", "b", "1 2 3 5 4 6 8 7 9", "0,0"),
		"logs/bad.json":          `{"game":"tictactoe","moves":[{"player":0,"action":"1"},{"player":1,"action":"1"}]}`,
		"logs/res.json":          arenaResult,
	}
	for name, data := range files {
		p := filepath.Join(root, name)
		check(os.MkdirAll(filepath.Dir(p), 0o755))
		check(os.WriteFile(p, []byte(data), 0o644))
	}
	check(os.Symlink(filepath.Join(root, "secret.json"), filepath.Join(root, "logs", "escape.json")))
	g, err := games.New("sequence")
	if err != nil {
		t.Fatal(err)
	}
	specs := []string{"random", "onestep"}
	ags, err := arena.NewAgents(g, specs, agent.Env{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	rec, err := arena.PlayGame(context.Background(), g, ags, specs, 6)
	arena.CloseAgents(ags)
	if err != nil {
		t.Fatal(err)
	}
	if f.seq, err = arena.LogFromRecord(g, rec, 0); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	check(arena.WriteLog(&buf, f.seq))
	check(os.WriteFile(filepath.Join(root, "logs", "seq.json"), buf.Bytes(), 0o644))
	for _, r := range []string{"zrun", "prun", "plain", "bad"} {
		f.runs = append(f.runs, filepath.Join(root, "runs", r))
	}
	f.logs = filepath.Join(root, "logs")
	return f
}

// tttLog writes a tic-tac-toe log: cells (1-9) played alternately from
// player 0, and the returns ("" for an unfinished game).
func tttLog(p0, p1, cells, returns string) string {
	var moves []string
	for i, c := range strings.Fields(cells) {
		moves = append(moves, fmt.Sprintf(`{"player":%d,"action":%q}`, i%2, c))
	}
	ret := ""
	if returns != "" {
		ret = `,"returns":[` + returns + `]`
	}
	return fmt.Sprintf(`{"game":"tictactoe","players":[%q,%q],"moves":[%s]%s}`, p0, p1, strings.Join(moves, ","), ret)
}

const arenaResult = `{"game":"connect4","agents":["x","y"],"games_per_table":4,"total_games":4,"seed":1,"bootstrap":0,
"pairwise":[[{"games":0,"wins":0,"draws":0,"losses":0},{"games":4,"wins":3,"draws":0,"losses":1,"score":{"value":0.75,"lo":0.3,"hi":0.95}}],
[{"games":4,"wins":1,"draws":0,"losses":3,"score":{"value":0.25,"lo":0.05,"hi":0.7}},{"games":0,"wins":0,"draws":0,"losses":0}]],
"game_length_decisions":[],"elo":[{"agent":"x","value":95,"lo":95,"hi":95},{"agent":"y","value":-95,"lo":-95,"hi":-95}],"bradley_terry":[],"ilsr":[]}`

// getSVG fetches path, checks that it is an SVG image and returns its
// text elements (content and style).
func getSVG(t *testing.T, hs *httptest.Server, path string) [][2]string {
	t.Helper()
	resp, err := hs.Client().Get(hs.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/svg+xml" || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "sandbox") {
		t.Fatalf("GET %s: %d %s %q", path, resp.StatusCode, resp.Header.Get("Content-Type"), data[:min(len(data), 300)])
	}
	var texts [][2]string
	dec := xml.NewDecoder(bytes.NewReader(data))
	var cur *[2]string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("GET %s: the SVG does not parse: %v", path, err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if el.Name.Local == "text" {
				cur = &[2]string{}
				for _, a := range el.Attr {
					if a.Name.Local == "style" {
						cur[1] = a.Value
					}
				}
			}
		case xml.CharData:
			if cur != nil {
				cur[0] += string(el)
			}
		case xml.EndElement:
			if el.Name.Local == "text" && cur != nil {
				texts = append(texts, *cur)
				cur = nil
			}
		}
	}
	return texts
}

func hasText(texts [][2]string, s string) bool {
	for _, x := range texts {
		if x[0] == s {
			return true
		}
	}
	return false
}

func TestDashboardListing(t *testing.T) {
	f := newDashFixture(t)
	_, hs := testServer(t, Config{Runs: f.runs, Logs: f.logs})
	var d dashJSON
	if code, msg := call(t, hs, "GET", "/api/dashboard", nil, &d); code != 200 {
		t.Fatalf("%d %s", code, msg)
	}
	runs := map[string]dashRun{}
	for _, r := range d.Runs {
		runs[r.Name] = r
	}
	if r := runs["zrun"]; r.Kind != "zero" || r.Game != "connect4" || r.Records != 3 || !slices.Equal(r.Charts, []string{"loss", "elo", "solver"}) || r.Error != "" {
		t.Errorf("zrun: %+v", r)
	}
	if r := runs["prun"]; r.Kind != "ppo" || r.Records != 0 || len(r.Charts) != 0 || r.Error != "" {
		t.Errorf("prun: %+v", r)
	}
	if r := runs["plain"]; !strings.Contains(r.Error, "neither zero.json") || r.Error != strings.TrimSpace(r.Error) {
		t.Errorf("plain: %+v", r)
	}
	if r := runs["bad"]; !strings.Contains(r.Error, "bad/metrics.jsonl:2:") {
		t.Errorf("bad: %+v, want an error at metrics.jsonl:2", r)
	}
	want := []dashGame{{Game: "sequence", Logs: 1, Charts: []string{"lengths", "heatmap"}}, {Game: "tictactoe", Logs: 3, Charts: []string{"lengths"}}}
	if fmt.Sprint(d.Logs) != fmt.Sprint(want) {
		t.Errorf("logs %+v, want %+v", d.Logs, want)
	}
	if len(d.Arena) != 1 || d.Arena[0].File != "res.json" || !slices.Equal(d.Arena[0].Charts, []string{"pairs", "ratings"}) {
		t.Errorf("arena %+v", d.Arena)
	}
	problems := strings.Join(d.Problems, "\n")
	// The symlink out of the directory is no regular file: not listed.
	if len(d.Problems) != 1 || !strings.Contains(problems, "bad.json:1: log 1: game log: move 2") {
		t.Errorf("problems %q: want bad.json's move 2 only", d.Problems)
	}

	// Without run and log directories: empty lists.
	_, bare := testServer(t, Config{})
	d = dashJSON{}
	if code, _ := call(t, bare, "GET", "/api/dashboard", nil, &d); code != 200 || d.Runs == nil || len(d.Runs)+len(d.Logs)+len(d.Arena) != 0 {
		t.Errorf("bare server: %d %+v", code, d)
	}
}

func TestDashboardCharts(t *testing.T) {
	f := newDashFixture(t)
	_, hs := testServer(t, Config{Runs: f.runs, Logs: f.logs})
	texts := getSVG(t, hs, "/api/dashboard/runs/zrun/solver.svg")
	for _, s := range []string{"network alone", "with search"} {
		if !hasText(texts, s) {
			t.Errorf("solver chart: no legend entry %q", s)
		}
	}
	texts = getSVG(t, hs, "/api/dashboard/runs/zrun/elo.svg")
	if !hasText(texts, "network") {
		t.Errorf("Elo chart: no legend")
	}
	// Lengths by hand: a won in 5 moves (as X) and b in 5 (as X), one
	// draw in 9.
	texts = getSVG(t, hs, "/api/dashboard/logs/lengths.svg?game=tictactoe")
	for _, s := range []string{"won by a (1 game)", "won by b (1 game)", "draw (1 game)"} {
		if !hasText(texts, s) {
			t.Errorf("lengths by agent: no legend entry %q in %v", s, texts)
		}
	}
	texts = getSVG(t, hs, "/api/dashboard/logs/lengths.svg?game=tictactoe&by=seat")
	if !hasText(texts, "won by player 0 (2 games)") {
		t.Errorf("lengths by seat: no legend entry for player 0's 2 wins in %v", texts)
	}
	// The heatmap's cell labels are the non-zero counts of chips placed,
	// counted here from the moves' texts (CARD@SQUARE; the one-eyed jacks
	// JS and JH remove chips).
	count := map[string]map[string]int{}
	for _, m := range f.seq.Moves {
		card, sq, ok := strings.Cut(m.Action, "@")
		if m.Player < 0 || !ok || sq == "dead" || card == "JS" || card == "JH" {
			continue
		}
		name := f.seq.Players[m.Player]
		if count[name] == nil {
			count[name] = map[string]int{}
		}
		count[name][sq]++
	}
	var want []string
	for _, byCell := range count {
		for _, k := range byCell {
			want = append(want, strconv.Itoa(k))
		}
	}
	texts = getSVG(t, hs, "/api/dashboard/logs/heatmap.svg?game=sequence")
	var got []string
	for _, x := range texts {
		if strings.Contains(x[1], "font-size:7px") {
			got = append(got, x[0])
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("heatmap cell labels %v, want %v", got, want)
	}
	texts = getSVG(t, hs, "/api/dashboard/arena/res.json/pairs.svg")
	if !hasText(texts, "x vs y (4)") {
		t.Errorf("pairs chart: no row x vs y")
	}
	getSVG(t, hs, "/api/dashboard/arena/res.json/ratings.svg")
}

// Bad names, missing and corrupt files: 4xx answers with a JSON error of
// one line (call checks both), never a 500 or a chart.
func TestDashboardErrors(t *testing.T) {
	f := newDashFixture(t)
	_, hs := testServer(t, Config{Runs: f.runs, Logs: f.logs})
	for _, c := range []struct {
		path string
		code int
		want string
	}{
		{"/api/dashboard/runs/nosuch/loss.svg", 404, "no run"},
		{"/api/dashboard/runs/zrun/nosuch.svg", 404, `no chart "nosuch" for run zrun (there are: loss, elo, solver)`},
		{"/api/dashboard/runs/zrun/loss.png", 400, "want a .svg file"},
		{"/api/dashboard/runs/zrun/..%2Fzero.svg", 400, "bad file name"},
		{"/api/dashboard/runs/zrun/%2E%2E", 400, "bad file name"},
		{"/api/dashboard/runs/zrun/loss.svg%00.svg", 400, "bad file name"},
		{"/api/dashboard/runs/prun/loss.svg", 404, "no metrics yet"},
		{"/api/dashboard/runs/plain/loss.svg", 404, "neither zero.json"},
		{"/api/dashboard/runs/bad/loss.svg", 422, "bad/metrics.jsonl:2:"},
		{"/api/dashboard/runs/zrun", 404, "no API endpoint"},
		{"/api/dashboard/logs/lengths.svg", 400, "several games (sequence; tictactoe)"},
		{"/api/dashboard/logs/lengths.svg?game=chess", 400, "chess"},
		{"/api/dashboard/logs/lengths.svg?game=connect4", 404, "no readable logs of connect4"},
		{"/api/dashboard/logs/lengths.svg?game=tictactoe&by=team", 400, "want agent or seat"},
		{"/api/dashboard/logs/heatmap.svg?game=tictactoe", 404, `no chart "heatmap"`},
		{"/api/dashboard/logs/..%2Fsecret.svg?game=tictactoe", 400, "bad file name"},
		{"/api/dashboard/arena/nosuch.json/pairs.svg", 404, "no file nosuch.json"},
		{"/api/dashboard/arena/ttt1.json/pairs.svg", 422, "ttt1.json: not the JSON of canopy arena --json"},
		{"/api/dashboard/arena/escape.json/pairs.svg", 403, "cannot read escape.json"},
		{"/api/dashboard/arena/..%2Fsecret.json/pairs.svg", 400, "bad file name"},
		{"/api/dashboard/arena/res.txt/pairs.svg", 400, "want a .json file"},
		{"/api/dashboard/arena/res.json/nope.svg", 404, `no chart "nope" for res.json`},
	} {
		code, msg := call(t, hs, "GET", c.path, nil, nil)
		if code != c.code || !strings.Contains(msg, c.want) || strings.Contains(msg, "secret\":") {
			t.Errorf("GET %s: %d %q, want %d and %q", c.path, code, msg, c.code, c.want)
		}
	}
	_, bare := testServer(t, Config{})
	for _, p := range []string{"/api/dashboard/logs/lengths.svg", "/api/dashboard/arena/res.json/pairs.svg"} {
		if code, msg := call(t, bare, "GET", p, nil, nil); code != 404 || !strings.Contains(msg, "--logs DIR") {
			t.Errorf("GET %s without --logs: %d %q", p, code, msg)
		}
	}
}

// FuzzDashboardPaths asks for charts with arbitrary names and queries:
// the answer is an SVG or a 4xx JSON error, never a 500.
func FuzzDashboardPaths(f *testing.F) {
	for _, s := range [][3]string{
		{"runs/zrun", "loss.svg", ""}, {"logs", "heatmap.svg", "game=sequence&by=seat"}, {"arena/res.json", "pairs.svg", ""},
		{"runs/..", "x.svg", ""}, {"arena/%00", "..", "game=%ff"}, {"logs", "lengths.svg", "game=hex:size=99"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	fx := newDashFixture(f)
	s, err := New(Config{Runs: fx.runs, Logs: fx.logs, Logf: func(string, ...any) {}})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	h := s.Handler()
	f.Fuzz(func(t *testing.T, where, chart, query string) {
		u := "/api/dashboard/" + where + "/" + neturl.PathEscape(chart)
		if query != "" {
			u += "?" + query
		}
		req, err := http.NewRequest("GET", u, nil)
		if err != nil {
			return // not a URL at all: no request reaches the server
		}
		req.Host = "127.0.0.1"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 || rec.Code == http.StatusMisdirectedRequest || s.Panics() > 0 {
			t.Fatalf("GET %s: %d %s", u, rec.Code, rec.Body)
		}
		if rec.Code >= 400 && !strings.HasPrefix(rec.Body.String(), `{"error":`) {
			t.Fatalf("GET %s: %d without a JSON error: %s", u, rec.Code, rec.Body)
		}
	})
}
