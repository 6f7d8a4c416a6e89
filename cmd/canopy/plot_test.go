package main

import (
	"encoding/xml"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/internal/runlock"
)

// zeroRun writes a zero run directory by hand: zero.json and three
// iterations of metrics, two with Elo and solver scores.
func zeroRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "zero.json"), `{"game":"connect4"}`)
	write(t, filepath.Join(dir, "metrics.jsonl"), `{"iteration":1,"train":{"final_loss":{"Total":3,"Policy":2,"Value":1}}}
{"iteration":2,"train":{"final_loss":{"Total":2,"Policy":1.5,"Value":0.5}},"eval":{"solver_policy":0.5,"solver_search":0.7},"elo":{"value":10,"lo":-5,"hi":25}}
{"iteration":3,"train":{"final_loss":{"Total":1.5,"Policy":1,"Value":0.5}},"eval":{"solver_policy":0.6,"solver_search":0.8},"elo":{"value":30,"lo":15,"hi":45}}
`)
	return dir
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// files lists dir's file names, sorted.
func files(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// checkSVG checks that path is an SVG document that mentions each of
// texts.
func checkSVG(t *testing.T, path string, texts ...string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		XMLName xml.Name
	}
	if err := xml.Unmarshal(data, &doc); err != nil || doc.XMLName.Local != "svg" {
		t.Errorf("%s: not an SVG document (%v)", path, err)
	}
	for _, s := range texts {
		if !strings.Contains(string(data), ">"+s) {
			t.Errorf("%s: no text %q", path, s)
		}
	}
}

func TestPlotRun(t *testing.T) {
	dir := zeroRun(t)
	code, out, errs := runCLI(t, "", "plot", "run", dir)
	if code != 0 {
		t.Fatalf("status %d: %s", code, errs)
	}
	want := []string{"elo.png", "elo.svg", "loss.png", "loss.svg", "solver.png", "solver.svg"}
	if got := files(t, filepath.Join(dir, "plots")); !slices.Equal(got, want) {
		t.Errorf("wrote %v, want %v", got, want)
	}
	if n := strings.Count(out, "\n"); n != 6 {
		t.Errorf("printed %d paths, want 6:\n%s", n, out)
	}
	checkSVG(t, filepath.Join(dir, "plots", "solver.svg"), "network alone", "with search")
	checkSVG(t, filepath.Join(dir, "plots", "loss.svg"), "total", "policy", "value")

	// Flags after the arguments; another directory; PNG only.
	other := filepath.Join(t.TempDir(), "out")
	if code, _, errs := runCLI(t, "", "plot", "run", dir, "--out", other, "--format", "png"); code != 0 {
		t.Fatalf("--out after the arguments: status %d: %s", code, errs)
	}
	if got := files(t, other); !slices.Equal(got, []string{"elo.png", "loss.png", "solver.png"}) {
		t.Errorf("--format png wrote %v", got)
	}

	// --width, --height and --dpi: a 10 x 5 inch chart at 120 dpi is
	// 1200 x 600 pixels.
	sized := filepath.Join(t.TempDir(), "sized")
	if code, _, errs := runCLI(t, "", "plot", "run", dir, "--out", sized, "--format", "png", "--width", "10", "--height", "5", "--dpi", "120"); code != 0 {
		t.Fatalf("--width --height --dpi: status %d: %s", code, errs)
	}
	f, err := os.Open(filepath.Join(sized, "loss.png"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(f)
	f.Close()
	if err != nil || cfg.Width != 1200 || cfg.Height != 600 {
		t.Errorf("loss.png at 10 x 5 inches, 120 dpi: %d x %d (%v), want 1200 x 600", cfg.Width, cfg.Height, err)
	}

	// A run in progress holds the lock: writing into it is refused, and
	// --out elsewhere still works.
	lock, err := runlock.Acquire(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	if code, _, errs := runCLI(t, "", "plot", "run", dir); code != 1 || !strings.Contains(errs, "--out") {
		t.Errorf("locked run: status %d, %q; want 1 and a hint at --out", code, errs)
	}
	if code, _, errs := runCLI(t, "", "plot", "run", "--out", other, dir); code != 0 {
		t.Errorf("locked run, --out elsewhere: status %d: %s", code, errs)
	}
}

func TestPlotErrors(t *testing.T) {
	dir := zeroRun(t)
	corrupt := t.TempDir()
	write(t, filepath.Join(corrupt, "zero.json"), `{"game":"connect4"}`)
	write(t, filepath.Join(corrupt, "metrics.jsonl"), `{"iteration":1,"train":{"final_loss":{}}}`+"\n{\"iteration\":2,\n")
	empty := t.TempDir()
	noMetrics := t.TempDir()
	write(t, filepath.Join(noMetrics, "ppo.json"), `{"game":"tictactoe","opponent":"random"}`)
	logs := t.TempDir()
	ttt := filepath.Join(logs, "ttt.json")
	write(t, ttt, `{"game":"tictactoe","players":["a","b"],"moves":[{"player":0,"action":"1"},{"player":1,"action":"4"},{"player":0,"action":"2"},{"player":1,"action":"5"},{"player":0,"action":"3"}],"returns":[1,-1]}`)
	hex := filepath.Join(logs, "hex.json")
	write(t, hex, `{"game":"hex:size=3","moves":[{"player":0,"action":"b2"}]}`)
	bad := filepath.Join(logs, "bad.json")
	write(t, bad, "\n\n{\"game\":\"tictactoe\",\"moves\":[{\"player\":1,\"action\":\"1\"}]}\n")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"plot"}, 2, "say what to plot"},
		{[]string{"plot", "chart", "x"}, 2, `unknown kind "chart"`},
		{[]string{"plot", "run"}, 2, "name at least one input"},
		{[]string{"plot", "run", dir, dir}, 2, "one run directory at a time"},
		{[]string{"plot", "run", dir, "--format", "pdf"}, 2, `--format "pdf"`},
		{[]string{"plot", "run", dir, "--nope"}, 2, "flag provided but not defined"},
		{[]string{"plot", "run", dir, "--width", "0.5"}, 2, "--width 0.5: want inches from 1 to 40"},
		{[]string{"plot", "run", dir, "--height", "-3"}, 2, "--height -3: out of range (want [0, 40])"},
		{[]string{"plot", "run", dir, "--dpi", "5000"}, 2, "--dpi 5000: out of range (want 0..600)"},
		{[]string{"plot", "run", filepath.Join(empty, "missing")}, 2, "cannot read the run directory"}, // a usage error, as a missing --net is
		{[]string{"plot", "run", empty}, 1, "neither zero.json"},
		{[]string{"plot", "run", corrupt}, 1, "metrics.jsonl:2: not a JSON metrics record"},
		{[]string{"plot", "run", noMetrics}, 1, "no metrics yet"},
		{[]string{"plot", "run", dir, "--out", ttt}, 1, "is a file, not a directory"},
		{[]string{"plot", "logs", ttt, hex}, 2, "several games (hex:size=3,swap=false; tictactoe): choose one with --game"},
		{[]string{"plot", "logs", "--game", "connect4", ttt}, 1, "no logs of connect4"},
		{[]string{"plot", "logs", "--game", "chess", ttt}, 2, "--game:"},
		{[]string{"plot", "logs", "--by", "team", ttt}, 2, "--by"},
		{[]string{"plot", "logs", bad}, 1, "bad.json:3: log 1: game log: move 1"},
		{[]string{"plot", "logs", logs}, 1, "is a directory"},
		{[]string{"plot", "arena", ttt}, 1, "ttt.json: not the JSON of canopy arena --json"},
	} {
		code, _, errs := runCLI(t, "", c.args...)
		if code != c.code || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 1 {
			t.Errorf("%v: status %d, %q; want %d and one line containing %q", c.args[1:], code, errs, c.code, c.want)
		}
	}
}

func TestPlotLogsAndArena(t *testing.T) {
	tmp := t.TempDir()
	var logs []string
	for i, agents := range []string{"random,sequence-greedy", "sequence-greedy,random"} {
		p := filepath.Join(tmp, []string{"g1.json", "g2.json"}[i])
		if code, _, errs := runCLI(t, "", "play", "--game", "sequence", "--agents", agents, "--seed", "7", "--log", p, "--json"); code != 0 {
			t.Fatalf("play: status %d: %s", code, errs)
		}
		logs = append(logs, p)
	}
	out := filepath.Join(tmp, "plots")
	code, _, errs := runCLI(t, "", append([]string{"plot", "logs", "--out", out}, logs...)...)
	if code != 0 {
		t.Fatalf("plot logs: status %d: %s", code, errs)
	}
	if got := files(t, out); !slices.Equal(got, []string{"heatmap.png", "heatmap.svg", "lengths.png", "lengths.svg"}) {
		t.Errorf("wrote %v", got)
	}
	checkSVG(t, filepath.Join(out, "heatmap.svg"), "sequence: random", "sequence: sequence-greedy")

	res := filepath.Join(tmp, "c4.json")
	code, js, errs := runCLI(t, "", "arena", "--game", "tictactoe", "--agents", "random,onestep,random", "--games", "4", "--bootstrap", "10", "--json", "--quiet")
	if code != 0 {
		t.Fatalf("arena: status %d: %s", code, errs)
	}
	write(t, res, js)
	if code, _, errs := runCLI(t, "", "plot", "arena", res, "--out", out, "--format", "svg"); code != 0 {
		t.Fatalf("plot arena: status %d: %s", code, errs)
	}
	checkSVG(t, filepath.Join(out, "c4-pairs.svg"), "random vs onestep (4)", "onestep vs random (4)", "random vs random (4)")
	checkSVG(t, filepath.Join(out, "c4-ratings.svg"), "onestep")
}
