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
)

// screenshotDir is where TestBrowser saves its screenshots (git-ignored).
const screenshotDir = "../runs/web-screenshots"

// chromium returns the headless browser's path, or skips the test.
func chromium(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("chromium is not installed (Debian: apt-get install chromium); the browser test needs it")
	return ""
}

// browse loads url in headless Chromium and returns the DOM after the
// page's scripts ran (mode "dom"), or saves a screenshot to file.
func browse(t *testing.T, bin, url, file string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
		"--no-first-run", "--mute-audio", "--user-data-dir=" + t.TempDir(),
		"--window-size=1200,900", "--virtual-time-budget=10000"}
	if file != "" {
		args = append(args, "--screenshot="+file)
	} else {
		args = append(args, "--dump-dom")
	}
	cmd := exec.CommandContext(ctx, bin, append(args, url)...)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", url, err, clipN(errb.String(), 2000))
	}
	if file != "" {
		if fi, err := os.Stat(file); err != nil || fi.Size() < 1000 {
			t.Fatalf("chromium %s: no screenshot in %s (%v)", url, file, err)
		}
	}
	return out.String()
}

// TestBrowser drives the page in headless Chromium: every game's board
// (SVG boards, Sushi Go's card panels; all with their move buttons), an analysis overlay, a replay and a run dashboard. It
// checks the DOM for the expected elements and saves a screenshot of each
// page under runs/web-screenshots for a person to look at.
func TestBrowser(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	run := filepath.Join(dir, "demo-run")
	must(t, os.MkdirAll(filepath.Join(run, "plots"), 0o755))
	must(t, os.WriteFile(filepath.Join(run, "metrics.jsonl"), []byte(
		`{"iteration":1,"train":{"final_loss":{"Total":2.06,"Policy":1.6,"Value":0.39}},"eval":{"scores":[{"opponent":"random","score":1}]}}
{"iteration":2,"train":{"final_loss":{"Total":1.81,"Policy":1.4,"Value":0.33}},"eval":{"scores":[{"opponent":"random","score":1}]}}
`), 0o644))
	must(t, os.WriteFile(filepath.Join(run, "plots", "loss.svg"), []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="400" height="200"><rect width="400" height="200" fill="#fff"/><polyline points="20,40 200,120 380,160" fill="none" stroke="#2b6cb0" stroke-width="3"/><text x="20" y="20">loss</text></svg>`), 0o644))
	logs := filepath.Join(dir, "logs")
	must(t, os.MkdirAll(logs, 0o755))
	must(t, os.WriteFile(filepath.Join(logs, "hex.json"), []byte(`{"game":"hex:size=5,swap=false","players":["random","random"],"moves":[{"player":0,"action":"c3"},{"player":1,"action":"b3"},{"player":0,"action":"c2"}]}`), 0o644))

	s, err := New(Config{Runs: []string{run}, Logs: logs, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s.Handler())
	defer func() {
		hs.Close()
		s.Close()
		if n := s.Panics(); n != 0 {
			t.Errorf("%d handler panic(s)", n)
		}
	}()
	must(t, os.MkdirAll(screenshotDir, 0o755))

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
		want       []string // regexps the DOM must match
	}{
		{"home", "#/", []string{`id="game-select"`, `<option value="tetrislink"`}},
		{"connect4", "#/game/" + c4, []string{`class="board board-connect4"`, `(?s)(class="cell col".*){7}`, `id="status"[^>]*>player 0 to move`}},
		{"connect4-analysis", "#/game/" + c4 + "/analyze", []string{`class="board board-connect4"`, `class="an"`, `id="analysis"`}},
		{"tictactoe", "#/game/" + play("tictactoe", []string{"human", "human"}, "5", "1", "9"), []string{`class="board board-tictactoe"`, `(?s)(class="cell[ "].*){9}`}},
		{"hex", "#/game/" + play("hex:size=7", []string{"human", "hexdist"}, "d4", "!", "c5", "!"), []string{`class="board board-hex"`, `(?s)(class="cell[ "].*){49}`}},
		{"hex-analysis", "#/game/" + play("hex:size=7", []string{"human", "human"}, "d4", "c5") + "/analyze", []string{`class="board board-hex"`, `class="an"`}},
		{"replay", "#/replay/hex.json", []string{`class="board board-hex"`, `id="step"`, `id="next"`}},
		{"runs", "#/runs", []string{`data-run="demo-run"`, `<img src="/runs/demo-run/plots/loss.svg"`, `<th>train.final_loss.Total</th>`}},
	}
	// The boards of boards.go: (?s)(X.*){n} asks for n matches of X.
	more := []struct {
		name, hash string
		want       []string
	}{
		{"connect4d", "#/game/" + play("connect4d", []string{"human", "random"}, "0d", "1c", "2d", "3e", "4d", "!"),
			[]string{`class="board board-connect4d"`, `(?s)(class="cell col".*){7}`, `(?s)(class="cell col illegal".*){28}`, `board 0 — to play`}},
		{"strands", "#/game/" + play("strands", []string{"random", "human"}, "!"),
			[]string{`class="board board-strands"`, `(?s)(class="cell[ "].*){91}`, `Black groups: 1`}},
		{"tetrislink", "#/game/" + play("tetrislink", []string{"human", "random"}, "I0@1", "!", "T0@5", "!"),
			[]string{`class="board board-tetrislink"`, `id="piece-picker"`, `(?s)(class="orient.*){19}`, `(?s)(class="piece".*){10}`, `placements as buttons`}},
		{"sequence", "#/game/" + play("sequence", []string{"random", "human"}, "!"),
			[]string{`class="board board-sequence"`, `class="cell mine"`, `(?s)(class="card".*){7}`, `cards, hidden`, `class="move"`}},
		{"sushigo", "#/game/" + play("sushigo:players=3", []string{"human", "random", "random"}),
			[]string{`class="boardwrap board board-sushigo"`, `(?s)(<button class="card".*){9}`, `(?s)(cards, hidden.*){2}`, `class="move"`}},
		{"sushigo-seq", "#/game/" + play("sushigo-seq:players=2", []string{"random", "human"}, "!"),
			[]string{`class="boardwrap board board-sushigo"`, `chose`, `(?s)(<button class="card".*){5}`}},
	}
	pages = append(pages, more...)
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			dom := browse(t, bin, hs.URL+"/"+p.hash, "")
			for _, w := range p.want {
				if !regexp.MustCompile(w).MatchString(dom) {
					t.Errorf("page %s: DOM does not match %s:\n%s", p.hash, w, clipN(dom, 3000))
				}
			}
			if strings.Contains(dom, `class="err"`) && regexp.MustCompile(`class="err"[^>]*>[^<]`).MatchString(dom) {
				t.Errorf("page %s shows an error", p.hash)
			}
			file := filepath.Join(screenshotDir, fmt.Sprintf("%s.png", p.name))
			browse(t, bin, hs.URL+"/"+p.hash, file)
		})
	}
}
