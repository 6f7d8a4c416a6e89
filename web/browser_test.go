package web

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// The click-through tests: the page in a real headless Chromium, driven
// over the DevTools protocol with chromedp. They skip under -short and
// where Chromium is not installed, and save a screenshot of each view
// under runs/web-screenshots (git-ignored) for a person to look at.

// screenshotDir is where the browser tests save their screenshots.
const screenshotDir = "../runs/web-screenshots"

// browserWait bounds each wait for the page (generous: the machine may
// be busy; a test that passes never waits this long).
const browserWait = 60 * time.Second

// chromium returns the headless browser's path, or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("browser test skipped in -short mode (it starts Chromium)")
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed (Debian: apt-get install chromium); the browser tests need it")
	return ""
}

// page is a browser tab on a test server.
type page struct {
	t   *testing.T
	ctx context.Context
	url string // the server's root, without the trailing slash
}

// newPage starts headless Chromium (one browser per test) with a tab on
// hs.
func newPage(t *testing.T, hs *httptest.Server) *page {
	t.Helper()
	bin := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.Flag("hide-scrollbars", true),
		chromedp.WindowSize(1200, 900))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("starting %s: %v", bin, err)
	}
	must(t, os.MkdirAll(screenshotDir, 0o755))
	return &page{t: t, ctx: ctx, url: hs.URL}
}

// do runs actions, each under browserWait, failing the test with what.
func (p *page) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, browserWait)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
}

// open navigates to the page's route (a location hash such as #/runs).
func (p *page) open(hash string) {
	p.t.Helper()
	// From a blank page, so that every view starts from a fresh load
	// (and a change of the hash alone is not a same-document navigation).
	p.do("opening "+hash, chromedp.Navigate("about:blank"), chromedp.Navigate(p.url+"/"+hash))
}

// until waits for a JavaScript condition on the page. It polls from Go,
// so that a page that is still loading (its JavaScript context being
// replaced) only delays it; at the deadline it fails with the page's text.
func (p *page) until(what, js string) {
	p.t.Helper()
	deadline := time.Now().Add(browserWait)
	var err error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
		var ok bool
		ok, err = chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+js+")"))
		cancel()
		if ok && err == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	text, _ := chromedp.Run(p.ctx, chromedp.Evaluate[string](`document.getElementById("main") ? document.getElementById("main").outerHTML : ""`))
	p.t.Fatalf("waiting for %s: not within %v (last error: %v); the page shows:\n%s", what, browserWait, err, clipN(text, 2000))
}

// untilMatch waits for the document to match every regexp of want.
func (p *page) untilMatch(what string, want []string) string {
	p.t.Helper()
	deadline := time.Now().Add(browserWait)
	for {
		dom := p.html()
		missing := ""
		for _, w := range want {
			if !regexp.MustCompile(w).MatchString(dom) {
				missing = w
				break
			}
		}
		if missing == "" {
			return dom
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("%s: the DOM does not match %s within %v:\n%s", what, missing, browserWait, clipN(dom, 3000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// eval returns the value of a JavaScript expression.
func eval[T any](p *page, js string) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, browserWait)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		p.t.Fatalf("evaluating %s: %v", js, err)
	}
	return v
}

// html returns the document's markup.
func (p *page) html() string { return eval[string](p, "document.documentElement.outerHTML") }

// click clicks the element a CSS selector names.
func (p *page) click(sel string) {
	p.t.Helper()
	p.do("clicking "+sel, chromedp.Click(chromedp.CSS(sel)))
}

// screenshot saves the whole page as runs/web-screenshots/NAME.png,
// after checking that no text of a board drawing is clipped.
func (p *page) screenshot(name string) {
	p.t.Helper()
	if bad := eval[string](p, clippedSVGText); bad != "" {
		p.t.Errorf("%s: board text outside its drawing: %s", name, bad)
	}
	ctx, cancel := context.WithTimeout(p.ctx, browserWait)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	if len(png) < 1000 || string(png[1:4]) != "PNG" {
		p.t.Fatalf("screenshot %s: %d bytes, not a PNG", name, len(png))
	}
	must(p.t, os.WriteFile(filepath.Join(screenshotDir, name+".png"), png, 0o644))
}

// clippedSVGText lists the texts of the page's board drawings whose
// boxes (the browser's getBBox) reach outside their drawing's viewBox.
const clippedSVGText = `[...document.querySelectorAll("svg.board")].flatMap(g => {
	const vb = g.viewBox.baseVal;
	return [...g.querySelectorAll("text")].filter(t => { const b = t.getBBox();
		return b.width > 0 && (b.x < vb.x - 0.5 || b.y < vb.y - 0.5 || b.x + b.width > vb.x + vb.width + 0.5 || b.y + b.height > vb.y + vb.height + 0.5); })
		.map(t => JSON.stringify(t.textContent)); }).join(" ")`

// TestBrowserPlayConnect4 plays a whole game of Connect Four against
// mcts by clicking the board: the person takes the leftmost legal column
// each turn, the agent answers by itself, until the game ends.
func TestBrowserPlayConnect4(t *testing.T) {
	s, hs := testServer(t, Config{})
	p := newPage(t, hs)
	p.open("#/")
	p.until("the new-game form", `!!document.getElementById("create")`)
	p.do("filling in the seats", chromedp.SetValue(chromedp.ID("players"), "human;mcts:sims=300"), chromedp.SetValue(chromedp.ID("seed"), "3"))
	p.click("#create")
	p.until("the board", `!!document.querySelector("svg.board-connect4") && location.hash.startsWith("#/game/")`)
	id := strings.TrimPrefix(eval[string](p, "location.hash"), "#/game/")
	moves := func() int {
		return eval[int](p, `document.getElementById("history").textContent.trim().split(/\s+/).filter(x => x).length`)
	}
	over := false
	for turn := 0; !over; turn++ {
		if turn > 21 {
			t.Fatal("more than 21 turns of the person in a game of 42 cells")
		}
		before := moves()
		p.click(`svg.board-connect4 g.cell.col:not(.illegal)`)
		// The person's move and the agent's answer, or the end.
		p.until(fmt.Sprintf("the answer to move %d", before+1), fmt.Sprintf(
			`(() => { const s = document.getElementById("status"), h = document.getElementById("history");
				if (!s || !h || s.textContent.includes("thinking")) return false;
				const n = h.textContent.trim().split(/\s+/).filter(x => x).length;
				return s.classList.contains("over") ? n > %d : n >= %d && s.textContent.startsWith("player 0 to move"); })()`, before, before+2))
		over = eval[bool](p, `document.getElementById("status").classList.contains("over")`)
	}
	status := eval[string](p, `document.getElementById("status").textContent`)
	if !strings.HasPrefix(status, "game over") {
		t.Errorf("status at the end: %q", status)
	}
	// The server agrees: the game it holds is over, with the moves shown.
	ss, err := s.games.get(id)
	if err != nil {
		t.Fatal(err)
	}
	ss.mu.Lock()
	terminal, n := ss.state.IsTerminal(), len(ss.actions)
	ss.mu.Unlock()
	if !terminal || n != moves() || n < 7 {
		t.Errorf("the server's game: terminal %v after %d moves; the page shows %d", terminal, n, moves())
	}
	if eval[int](p, `document.querySelectorAll("svg.board-connect4 g.cell.col:not(.illegal)").length`) != 0 {
		t.Error("the board still takes clicks after the end")
	}
	p.screenshot("connect4-played")
}

// TestBrowserLiveAnalysis opens the analysis of a position and watches
// it stream: snapshots that are not final yet, with the overlay on the
// board and the principal variation, then the final one with more visits.
func TestBrowserLiveAnalysis(t *testing.T) {
	_, hs := testServer(t, Config{})
	st := create(t, hs, "connect4", "human", "human")
	for _, m := range []string{"4", "4", "3"} {
		if code, msg := call(t, hs, "POST", "/api/games/"+st.ID+"/move", moveRequest{Action: m}, nil); code != 200 {
			t.Fatalf("move %s: %d %s", m, code, msg)
		}
	}
	p := newPage(t, hs)
	p.open("#/game/" + st.ID)
	p.until("the board", `!!document.querySelector("svg.board-connect4") && !!document.getElementById("analyst")`)
	p.do("naming the analyzer", chromedp.SetValue(chromedp.ID("analyst"), "mcts:sims=0,time=3s"))
	p.click("#analyze")
	p.until("a live snapshot", `(() => { const a = document.getElementById("analysis");
		return a && a.dataset.final === "false" && +a.dataset.visits > 0 && document.querySelectorAll("#pv .pvmove").length >= 2
			&& document.querySelectorAll("svg.board-connect4 text.an").length >= 7 && !!document.getElementById("stop-analysis"); })()`)
	early := eval[int](p, `+document.getElementById("analysis").dataset.visits`)
	if !strings.Contains(p.html(), "(searching...)") {
		t.Error("a live snapshot does not say it is searching")
	}
	p.screenshot("connect4-live-analysis")
	p.until("the final snapshot", `(() => { const a = document.getElementById("analysis"); return a && a.dataset.final === "true" && !!document.getElementById("analyze"); })()`)
	final := eval[int](p, `+document.getElementById("analysis").dataset.visits`)
	if final <= early {
		t.Errorf("visits did not grow while searching: %d, then %d at the end", early, final)
	}
	best := eval[string](p, `document.querySelector("#analysis table tr:nth-child(2) td").textContent`)
	pv0 := eval[string](p, `document.querySelector("#pv .pvmove").dataset.action`)
	if fmt.Sprint(atoiOr(best, -1)-1) != pv0 {
		t.Errorf("the principal variation starts with action %s; the table's best move is column %s", pv0, best)
	}
	p.screenshot("connect4-analysis-final")
}

func atoiOr(s string, d int) int {
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil {
		return d
	}
	return n
}

// TestBrowserReplay opens a log from --logs and steps through it.
func TestBrowserReplay(t *testing.T) {
	logs := t.TempDir()
	must(t, os.WriteFile(filepath.Join(logs, "hex.json"), []byte(`{"game":"hex:size=5,swap=false","players":["random","random"],"moves":[{"player":0,"action":"c3"},{"player":1,"action":"b3"},{"player":0,"action":"c2"}]}`), 0o644))
	_, hs := testServer(t, Config{Logs: logs})
	p := newPage(t, hs)
	p.open("#/replay")
	p.until("the list of logs", `!!document.querySelector('#logs a[href="#/replay/hex.json"]')`)
	p.click(`#logs a[href="#/replay/hex.json"]`)
	at := func(i int, move string) {
		t.Helper()
		p.until(fmt.Sprintf("position %d", i), fmt.Sprintf(`(() => { const f = document.getElementById("frame"), s = document.querySelector("#replay .status");
			return f && s && f.textContent.includes("position %d of 3") && s.textContent.includes(%q) && !!document.querySelector("#replay svg.board-hex"); })()`, i, move))
	}
	at(0, "start —")
	p.click("#next")
	at(1, "c3 —")
	p.click("#next")
	at(2, "b3 —")
	p.click("#last")
	at(3, "c2 —")
	p.click("#prev")
	at(2, "b3 —")
	p.click("#first")
	at(0, "start —")
	p.click("#last")
	at(3, "c2 —")
	p.screenshot("replay-hex")
}

// TestBrowserRunsLive shows a run's metrics and adds a record while the
// page is open: the table grows without a reload, and the self-play
// totals appear.
func TestBrowserRunsLive(t *testing.T) {
	run := filepath.Join(t.TempDir(), "demo-run")
	must(t, os.MkdirAll(filepath.Join(run, "plots"), 0o755))
	metrics := filepath.Join(run, "metrics.jsonl")
	must(t, os.WriteFile(metrics, []byte(`{"iteration":1,"train":{"final_loss":{"Total":2.06}}}`+"\n"+`{"iteration":2,"train":{"final_loss":{"Total":1.81}}}`+"\n"), 0o644))
	_, hs := testServer(t, Config{Runs: []string{run}, WatchEvery: 20 * time.Millisecond})
	p := newPage(t, hs)
	p.open("#/runs")
	rows := `document.querySelectorAll('[data-run="demo-run"] table.metrics tr').length`
	p.until("the metrics table", rows+` === 3 && !document.querySelector('[data-run="demo-run"] .live').hidden`)
	p.do("marking the page", chromedp.Evaluate[chromedp.Void](`window.notReloaded = true`))
	f, err := os.OpenFile(metrics, os.O_APPEND|os.O_WRONLY, 0)
	must(t, err)
	_, err = f.WriteString(`{"iteration":3,"train":{"final_loss":{"Total":1.52}}}` + "\n")
	must(t, err)
	must(t, f.Close())
	must(t, os.MkdirAll(filepath.Join(run, "selfplay", "iter-0004"), 0o755))
	must(t, os.WriteFile(filepath.Join(run, "selfplay", "iter-0004", "manifest.json"), []byte(`{"format":"canopy-selfplay/1","game":"connect4","games":64,"shards":[{}],"totals":{"games":16,"positions":400}}`), 0o644))
	p.until("the new record and the self-play totals", rows+` === 4 && window.notReloaded === true &&
		document.querySelector('[data-run="demo-run"] .selfplay').textContent.includes("16 of 64 games")`)
	if html := p.html(); !strings.Contains(html, "<td>1.520</td>") {
		t.Error("the new record's loss 1.52 is not in the table")
	}
	p.screenshot("runs-live")
}

// TestBrowserBoards draws every game's board (SVG boards, Sushi Go's card
// panels; all with their move buttons), an analysis overlay, a replay and
// a run dashboard; it checks the DOM for the expected elements and saves
// a screenshot of each.
func TestBrowserBoards(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "demo-run")
	must(t, os.MkdirAll(filepath.Join(run, "plots"), 0o755))
	must(t, os.WriteFile(filepath.Join(run, "metrics.jsonl"), []byte(
		`{"iteration":1,"train":{"final_loss":{"Total":2.06,"Policy":1.6,"Value":0.39}},"eval":{"scores":[{"opponent":"random","score":1,"lo":0.8,"hi":1}]}}
{"iteration":2,"train":{"final_loss":{"Total":1.81,"Policy":1.4,"Value":0.33}},"eval":{"scores":[{"opponent":"random","score":1,"lo":0.8,"hi":1}]}}
`), 0o644))
	must(t, os.WriteFile(filepath.Join(run, "plots", "loss.svg"), []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="400" height="200"><rect width="400" height="200" fill="#fff"/><polyline points="20,40 200,120 380,160" fill="none" stroke="#2b6cb0" stroke-width="3"/><text x="20" y="20">loss</text></svg>`), 0o644))
	logs := filepath.Join(dir, "logs")
	must(t, os.MkdirAll(logs, 0o755))
	must(t, os.WriteFile(filepath.Join(logs, "hex.json"), []byte(`{"game":"hex:size=5,swap=false","players":["random","random"],"moves":[{"player":0,"action":"c3"},{"player":1,"action":"b3"},{"player":0,"action":"c2"}]}`), 0o644))
	// For the Dashboard: a zero run (its charts drawn from metrics.jsonl),
	// finished tic-tac-toe games and an arena result.
	must(t, os.WriteFile(filepath.Join(run, "zero.json"), []byte(`{"game":"connect4"}`), 0o644))
	must(t, os.WriteFile(filepath.Join(logs, "ttt.json"), []byte(tttLog("mcts:sims=200", "random", "1 4 2 5 3", "1,-1")+"\n"+tttLog("random", "mcts:sims=200", "1 2 3 5 4 6 8 7 9", "0,0")+"\n"+tttLog("random", "mcts:sims=200", "1 5 2 3 4 7", "-1,1")), 0o644))
	must(t, os.WriteFile(filepath.Join(logs, "arena.json"), []byte(arenaResult), 0o644))
	_, hs := testServer(t, Config{Runs: []string{run}, Logs: logs, MaxClientGames: 16})

	// play creates a game and plays moves (person's moves by text, "!"
	// for an agent move).
	play := func(game string, players []string, moves ...string) string {
		st := create(t, hs, game, players...)
		for _, m := range moves {
			if m == "!" {
				if code, msg := call(t, hs, "POST", "/api/games/"+st.ID+"/agent", nil, nil); code != http.StatusOK {
					t.Fatalf("%s: agent move: %d %s", game, code, msg)
				}
				continue
			}
			if code, msg := call(t, hs, "POST", "/api/games/"+st.ID+"/move", moveRequest{Action: m}, nil); code != http.StatusOK {
				t.Fatalf("%s: move %s: %d %s", game, m, code, msg)
			}
		}
		return st.ID
	}
	c4 := play("connect4", []string{"human", "mcts:sims=50"}, "4", "!", "4", "!", "3", "!")
	pages := []struct {
		name, hash string
		ready      string   // a CSS selector that appears when the view is drawn
		want       []string // regexps the DOM must match; (?s)(X.*){n} asks for n matches of X
	}{
		{"home", "#/", `#game-select option[value="tetrislink"]`, []string{`id="game-select"`, `<option value="tetrislink"`}},
		{"connect4", "#/game/" + c4, `svg.board-connect4`, []string{`class="board board-connect4"`, `(?s)(class="cell col".*){7}`, `id="status"[^>]*>player 0 to move`}},
		{"connect4-analysis", "#/game/" + c4 + "/analyze", `#analysis[data-final="true"]`, []string{`class="board board-connect4"`, `class="an"`, `id="analysis"`, `id="pv"`}},
		{"tictactoe", "#/game/" + play("tictactoe", []string{"human", "human"}, "5", "1", "9"), `svg.board-tictactoe`, []string{`class="board board-tictactoe"`, `(?s)(class="cell[ "].*){9}`}},
		{"hex", "#/game/" + play("hex:size=7", []string{"human", "hexdist"}, "d4", "!", "c5", "!"), `svg.board-hex`, []string{`class="board board-hex"`, `(?s)(class="cell[ "].*){49}`}},
		{"hex-analysis", "#/game/" + play("hex:size=7", []string{"human", "human"}, "d4", "c5") + "/analyze", `#analysis[data-final="true"]`, []string{`class="board board-hex"`, `class="an"`}},
		{"replay", "#/replay/hex.json", `#replay svg.board-hex`, []string{`class="board board-hex"`, `id="step"`, `id="next"`}},
		{"runs", "#/runs", `[data-run="demo-run"] table.metrics`, []string{`data-run="demo-run"`, `<img src="/api/dashboard/runs/demo-run/loss.svg\?width=[0-9]+"`,
			`<th title="train.final_loss.Total" data-field="train.final_loss.Total">loss</th>`, `>policy loss</th>`, `>opponent #1</th>`, `>score #1 low</th>`, `<tr><th title="iteration"`}},
		{"dashboard", "#/dashboard", `.dash-arena img`, []string{`class="panel dash-run"`, `/api/dashboard/runs/demo-run/loss.svg\?width=[0-9]+`,
			`/api/dashboard/logs/lengths.svg\?game=tictactoe&amp;by=agent&amp;width=[0-9]+`, `/api/dashboard/arena/arena.json/pairs.svg\?width=[0-9]+`}},
		{"connect4d", "#/game/" + play("connect4d", []string{"human", "random"}, "0d", "1c", "2d", "3e", "4d", "!"), `svg.board-connect4d`,
			[]string{`class="board board-connect4d"`, `(?s)(class="cell col".*){7}`, `(?s)(class="cell col illegal".*){28}`, `board 0 — to play`}},
		{"strands", "#/game/" + play("strands", []string{"random", "human"}, "!"), `svg.board-strands`,
			[]string{`class="board board-strands"`, `(?s)(class="cell[ "].*){91}`, `Black groups: 1`}},
		{"tetrislink", "#/game/" + play("tetrislink", []string{"human", "random"}, "I0@1", "!", "T0@5", "!"), `svg.board-tetrislink`,
			[]string{`class="board board-tetrislink"`, `id="piece-picker"`, `(?s)(class="orient.*){19}`, `(?s)(class="piece".*){10}`, `placements as buttons`}},
		{"sequence", "#/game/" + play("sequence", []string{"random", "human"}, "!"), `svg.board-sequence`,
			[]string{`class="board board-sequence"`, `class="cell mine"`, `(?s)(class="card".*){7}`, `cards, hidden`, `class="move"`}},
		{"sushigo", "#/game/" + play("sushigo:players=3", []string{"human", "random", "random"}), `.board-sushigo`,
			[]string{`class="boardwrap board board-sushigo"`, `(?s)(<button class="card".*){9}`, `(?s)(cards, hidden.*){2}`, `class="move"`}},
		{"sushigo-seq", "#/game/" + play("sushigo-seq:players=2", []string{"random", "human"}, "!"), `.board-sushigo`,
			[]string{`class="boardwrap board board-sushigo"`, `chose`, `(?s)(<button class="card".*){5}`}},
	}
	p := newPage(t, hs)
	for _, pg := range pages {
		t.Run(pg.name, func(t *testing.T) {
			p.t = t
			p.open(pg.hash)
			p.until(pg.ready, fmt.Sprintf(`document.querySelector(%q)`, pg.ready))
			dom := p.untilMatch("page "+pg.hash, pg.want) // agents may still be moving
			if regexp.MustCompile(`class="err"[^>]*>[^<]`).MatchString(dom) {
				t.Errorf("page %s shows an error", pg.hash)
			}
			// Every image loaded, and no chart is scaled: each is shown at
			// the width it was drawn for.
			p.until(pg.name+": the images", `[...document.images].every(i => i.complete)`)
			if bad := eval[string](p, `[...document.images].filter(i => !i.naturalWidth).map(i => i.src).join(" ")`); bad != "" {
				t.Errorf("page %s: images that did not load: %s", pg.hash, bad)
			}
			p.screenshot(pg.name)
		})
	}
}

// TestBrowserHandOver: two people playing Sequence at one screen see a
// hand-over screen, with no cards on it, before each one's own hand; the
// page offers no other view and no log while the game runs.
func TestBrowserHandOver(t *testing.T) {
	_, hs := testServer(t, Config{})
	p := newPage(t, hs)
	st := create(t, hs, "sequence", "human", "human")
	p.open("#/game/" + st.ID)
	for _, seat := range []string{"0", "1"} {
		p.until("the hand-over to player "+seat, `document.querySelector("#handover") && document.querySelector("#handover h1").textContent.endsWith("player `+seat+`")`)
		if dom := p.html(); strings.Contains(dom, "board-sequence") || strings.Contains(dom, `class="card"`) {
			t.Fatalf("the hand-over screen shows the board or cards:\n%s", clipN(dom, 2000))
		}
		p.screenshot("handover-screen-" + seat)
		p.click("#handover-ok")
		p.until("player "+seat+"'s board", `document.querySelector("svg.board-sequence")`)
		p.untilMatch("player "+seat+"'s view", []string{`id="log-later"`, `<select id="view"><option value="` + seat + `">player ` + seat + `</option></select>`})
		p.screenshot("handover-" + seat)
		p.click("button.move")
	}
	p.until("the hand-over back to player 0", `document.querySelector("#handover h1") && document.querySelector("#handover h1").textContent.endsWith("player 0")`)
}
