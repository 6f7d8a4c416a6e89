package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/spec"
)

// netTestGame is a tiny two-player game for the net CLI tests: 5 actions,
// each playable once, 4 moves in all; observation 2 planes of 2x3 marking
// the actions each side played (from the mover's view). Notation: the
// action digits played so far ("" for the start).
type netTestGame struct{}

func (netTestGame) Type() games.Type {
	return games.Type{Name: "nettest", MinPlayers: 2, MaxPlayers: 2, MinReturn: 0, MaxReturn: 0}
}
func (netTestGame) Spec() string            { return "nettest" }
func (netTestGame) NumPlayers() int         { return 2 }
func (netTestGame) NumActions() int         { return 5 }
func (netTestGame) MaxGameLength() int      { return 4 }
func (netTestGame) ObservationShape() []int { return []int{2, 2, 3} }
func (netTestGame) NewInitialState() games.State {
	return &netTestState{}
}
func (g netTestGame) ParseState(s string) (games.State, error) {
	st := &netTestState{}
	for _, r := range s {
		a := games.Action(r - '0')
		if err := games.ApplyChecked(st, a); err != nil {
			return nil, err
		}
	}
	return st, nil
}

type netTestState struct{ moves []games.Action }

func (s *netTestState) Game() games.Game { return netTestGame{} }
func (s *netTestState) CurrentPlayer() int {
	if s.IsTerminal() {
		return games.TerminalPlayer
	}
	return len(s.moves) % 2
}
func (s *netTestState) IsTerminal() bool { return len(s.moves) >= 4 }
func (s *netTestState) Legal(m games.Mask) {
	m.Clear()
	if s.IsTerminal() {
		return
	}
	for a := games.Action(0); a < 5; a++ {
		m.Set(a)
	}
	for _, a := range s.moves {
		m.Unset(a)
	}
}
func (s *netTestState) Apply(a games.Action) { s.moves = append(s.moves, a) }
func (s *netTestState) Clone() games.State {
	return &netTestState{append([]games.Action(nil), s.moves...)}
}
func (s *netTestState) CloneInto(d games.State) {
	d.(*netTestState).moves = append(d.(*netTestState).moves[:0], s.moves...)
}
func (s *netTestState) Returns(dst []float64) { dst[0], dst[1] = 0, 0 }
func (s *netTestState) Hash() uint64          { return uint64(len(s.moves)) }
func (s *netTestState) Observation(p int, dst []float32) {
	clear(dst)
	for i, a := range s.moves {
		plane := 0
		if i%2 != p {
			plane = 1
		}
		dst[plane*6+int(a)] = 1
	}
}
func (s *netTestState) MoveNumber() int                    { return len(s.moves) }
func (s *netTestState) ActionString(a games.Action) string { return fmt.Sprint(int(a)) }
func (s *netTestState) ParseAction(str string) (games.Action, error) {
	var a int
	_, err := fmt.Sscan(str, &a)
	return games.Action(a), err
}
func (s *netTestState) String() string {
	var b strings.Builder
	for _, a := range s.moves {
		b.WriteByte(byte('0' + a))
	}
	return b.String()
}

func init() {
	games.Register(games.Registration{Name: "nettest", Summary: "tiny game for the net CLI tests",
		New: func(*spec.Spec) (games.Game, error) { return netTestGame{}, nil }})
}

func TestNetCLI(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "n.safetensors")
	code, out, errs := runCLI(t, "", "net", "init", "--preset", "megazero", "--game", "nettest", "--out", f, "--seed", "3")
	if code != 0 || !strings.Contains(out, "wrote") {
		t.Fatalf("init: %d %q %q", code, out, errs)
	}
	code, out, errs = runCLI(t, "", "net", "info", f, "--json")
	if code != 0 {
		t.Fatalf("info: %d %q", code, errs)
	}
	var info struct {
		Config nets.Config
		Params int
		Flops  int64
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatalf("info JSON: %v\n%s", err, out)
	}
	if info.Config.Channels != 128 || info.Config.Blocks != 6 || info.Config.InputPlanes != 2 || info.Config.PolicySize != 5 || info.Params < 6*2*9*128*128 {
		t.Errorf("info: %+v", info)
	}
	if code, out, _ := runCLI(t, "", "net", "info", f); code != 0 || !strings.Contains(out, "parameters") {
		t.Errorf("info text: %d %q", code, out)
	}

	code, out, errs = runCLI(t, "", "net", "eval", "--net", f, "--moves", "02", "--json")
	if code != 0 {
		t.Fatalf("eval: %d %q", code, errs)
	}
	var ev struct {
		Player int
		Value  float64
		Policy []struct {
			Action string
			ID     int
			Prob   float64
		}
	}
	if err := json.Unmarshal([]byte(out), &ev); err != nil {
		t.Fatalf("eval JSON: %v\n%s", err, out)
	}
	sum := 0.0
	for _, p := range ev.Policy {
		sum += p.Prob
		if p.ID == 0 || p.ID == 2 {
			t.Errorf("illegal action %d in policy", p.ID)
		}
	}
	if len(ev.Policy) != 3 || math.Abs(sum-1) > 1e-5 || ev.Value < -1 || ev.Value > 1 || ev.Player != 0 {
		t.Errorf("eval: %+v (sum %v)", ev, sum)
	}
	// The CLI agrees with the library on the same position.
	net, err := nets.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := netTestGame{}.ParseState("02")
	obs := make([]float32, net.InputSize())
	st.Observation(0, obs)
	lg, v := make([]float32, 5), make([]float32, 1)
	net.Forward(1, obs, lg, v)
	if math.Abs(float64(v[0])-ev.Value) > 1e-6 {
		t.Errorf("CLI value %v, library %v", ev.Value, v[0])
	}
	if code, out, _ := runCLI(t, "", "net", "eval", "--net", f); code != 0 || !strings.Contains(out, "value") {
		t.Errorf("eval text: %d %q", code, out)
	}
}

func TestNetCLIErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.safetensors")
	os.WriteFile(bad, []byte("not a net"), 0o644)
	good := filepath.Join(dir, "good.safetensors")
	if code, _, errs := runCLI(t, "", "net", "init", "--out", good); code != 0 {
		t.Fatalf("init connect4: %q", errs)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"net"}, 2, "subcommand"},
		{[]string{"net", "frob"}, 2, "frob"},
		{[]string{"net", "init", "--preset", "nope", "--out", good}, 2, "nope"},
		{[]string{"net", "init"}, 2, "--out"},
		{[]string{"net", "init", "--out", filepath.Join(dir, "no", "x")}, 1, "no"},
		{[]string{"net", "info", bad}, 1, bad},
		{[]string{"net", "info", filepath.Join(dir, "missing")}, 2, "missing"},
		{[]string{"net", "info"}, 2, "one file"},
		{[]string{"net", "eval", "--net", bad, "--game", "nettest"}, 1, "bad.safetensors"},
		{[]string{"net", "eval", "--net", good, "--game", "nettest"}, 2, "made for connect4, not nettest"},
		{[]string{"net", "eval", "--net", good, "--game", "nosuchgame"}, 2, "nosuchgame"},
		{[]string{"net", "eval"}, 2, "--net"},
	} {
		code, _, errs := runCLI(t, "", c.args...)
		lines := strings.Count(strings.TrimSpace(errs), "\n") + 1
		if code != c.code || !strings.Contains(errs, c.want) || (code == 1 && lines != 1) {
			t.Errorf("%v: status %d (want %d), stderr %q (want one line mentioning %q)", c.args, code, c.code, errs, c.want)
		}
	}
	m := filepath.Join(dir, "m.safetensors")
	if code, _, errs := runCLI(t, "", "net", "init", "--preset", "megazero", "--game", "nettest", "--out", m); code != 0 {
		t.Fatalf("megazero: %q", errs)
	}
	if code, _, errs := runCLI(t, "", "net", "eval", "--net", m, "--moves", "0123"); code != 1 || !strings.Contains(errs, "no player") {
		t.Errorf("terminal: %d %q", code, errs)
	}
	if code, _, errs := runCLI(t, "", "net", "eval", "--net", m, "--moves", "00"); code != 2 || !strings.Contains(errs, "moves") {
		t.Errorf("bad moves: %d %q", code, errs)
	}
}

// Every preset that names a game is shaped for that game's default spec:
// `net init --preset P` then `net eval` on the game works, and the preset's
// own static shape (where it has one) is the game's.
func TestNetPresetsEvaluateOnTheirGames(t *testing.T) {
	dir := t.TempDir()
	for _, name := range nets.Presets() {
		cfg, err := nets.Preset(name)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Game == "" {
			continue
		}
		g, err := games.New(cfg.Game)
		if err != nil {
			t.Fatalf("preset %s names game %q: %v", name, cfg.Game, err)
		}
		if cfg.Normalize() == nil {
			shaped, err := cfg.ForGame(g)
			if err != nil || shaped.InputSize() != cfg.InputSize() || shaped.PolicySize != cfg.PolicySize {
				t.Errorf("preset %s: static shape %dx%dx%d/%d differs from game %s's %dx%dx%d/%d (%v)", name,
					cfg.InputPlanes, cfg.Height, cfg.Width, cfg.PolicySize, g.Spec(),
					shaped.InputPlanes, shaped.Height, shaped.Width, shaped.PolicySize, err)
			}
		}
		f := filepath.Join(dir, name+".safetensors")
		if code, _, errs := runCLI(t, "", "net", "init", "--preset", name, "--out", f); code != 0 {
			t.Errorf("init --preset %s: %d %q", name, code, errs)
			continue
		}
		for _, args := range [][]string{{"--game", cfg.Game}, nil} {
			a := append([]string{"net", "eval", "--net", f, "--json"}, args...)
			code, out, errs := runCLI(t, "", a...)
			var ev struct {
				Game   string
				Policy []struct{ Prob float64 }
			}
			if code != 0 || json.Unmarshal([]byte(out), &ev) != nil || ev.Game != g.Spec() || len(ev.Policy) == 0 {
				t.Errorf("%v: %d %q %q", a, code, errs, clip(out))
			}
		}
	}
	// The research variant of Sequence (no jacks) has 99 planes; --game
	// reshapes the preset for it.
	f := filepath.Join(dir, "seq99.safetensors")
	if code, out, errs := runCLI(t, "", "net", "init", "--preset", "sequence", "--game", "sequence:jacks=false", "--out", f); code != 0 || !strings.Contains(out, "99x10x10") {
		t.Errorf("sequence:jacks=false: %d %q %q", code, out, errs)
	}
}

// --game without --preset picks the game's built-in net (what selfplay
// uses without --net) and says which preset that is.
func TestNetInitGameWithoutPreset(t *testing.T) {
	dir := t.TempDir()
	for _, spec := range []string{"strands:size=6", "connect4", "tictactoe"} {
		g := games.MustNew(spec)
		want, err := nets.DefaultConfig(g)
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, strings.NewReplacer(":", "_", "=", "_").Replace(spec)+".safetensors")
		code, out, errs := runCLI(t, "", "net", "init", "--game", spec, "--out", f)
		if code != 0 || !strings.Contains(out, "preset "+want.Preset+":") || !strings.Contains(out, "built-in net for "+g.Spec()) {
			t.Errorf("init --game %s: %d %q %q (want preset %s named)", spec, code, out, errs, want.Preset)
			continue
		}
		if spec != "connect4" && strings.Contains(out, "connect4") {
			t.Errorf("init --game %s mentions connect4: %q", spec, out)
		}
		net, err := nets.Load(f)
		if err != nil {
			t.Fatal(err)
		}
		if got := net.Config(); got.JSON() != want.JSON() {
			t.Errorf("init --game %s: config %s, want the built-in %s", spec, got.JSON(), want.JSON())
		}
	}
	// No --game: the default preset, shaped for its game.
	f := filepath.Join(dir, "default.safetensors")
	if code, out, _ := runCLI(t, "", "net", "init", "--out", f); code != 0 || !strings.Contains(out, "preset connect4:") || !strings.Contains(out, "default preset") {
		t.Errorf("init without --preset or --game: %d %q", code, out)
	}
	if code, _, errs := runCLI(t, "", "net", "init", "--game", "nosuchgame", "--out", f); code != 2 || !strings.Contains(errs, "nosuchgame") {
		t.Errorf("init --game nosuchgame: %d %q", code, errs)
	}
}

// A start at a chance node (Sequence deals) is dealt with --seed, and the
// deal is printed and reproducible.
func TestNetEvalDealsChance(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "seq.safetensors")
	if code, _, errs := runCLI(t, "", "net", "init", "--game", "sequence", "--out", f); code != 0 {
		t.Fatalf("init: %q", errs)
	}
	eval := func(seed string) (int, string, string) {
		return runCLI(t, "", "net", "eval", "--net", f, "--seed", seed, "--json")
	}
	code, out, errs := eval("3")
	var ev struct {
		Chance []string
		Seed   uint64
		Player int
		Policy []struct{ Prob float64 }
	}
	if code != 0 || json.Unmarshal([]byte(out), &ev) != nil {
		t.Fatalf("eval: %d %q %q", code, errs, clip(out))
	}
	g := games.MustNew("sequence").(interface{ HandSize() int })
	if len(ev.Chance) != 2*g.HandSize() || ev.Seed != 3 || ev.Player != 0 || len(ev.Policy) == 0 {
		t.Errorf("eval: chance %v, seed %d, player %d, %d actions", ev.Chance, ev.Seed, ev.Player, len(ev.Policy))
	}
	if _, again, _ := eval("3"); again != out {
		t.Error("same --seed, different result")
	}
	if _, other, _ := eval("4"); other == out {
		t.Error("--seed 4 dealt the same as --seed 3")
	}
	code, text, _ := runCLI(t, "", "net", "eval", "--net", f, "--seed", "3")
	if code != 0 || !strings.Contains(text, "sampled 14 chance events with --seed 3: "+strings.Join(ev.Chance, " ")) {
		t.Errorf("text: %d %q", code, clip(text))
	}
	// At a simultaneous move every player chooses: --player says whose
	// choice (default 0), and the policy is over that player's legal
	// actions (the cards in its own hand).
	s := filepath.Join(dir, "sushi.safetensors")
	if code, _, errs := runCLI(t, "", "net", "init", "--game", "sushigo", "--out", s); code != 0 {
		t.Fatalf("init sushigo: %q", errs)
	}
	g2 := games.MustNew("sushigo")
	for _, p := range []int{0, 1} {
		code, out, errs := runCLI(t, "", "net", "eval", "--net", s, "--player", fmt.Sprint(p), "--json")
		var sv struct {
			Player       int
			Simultaneous bool
			State        string
			Policy       []struct{ Action string }
		}
		if code != 0 || json.Unmarshal([]byte(out), &sv) != nil || sv.Player != p || !sv.Simultaneous {
			t.Fatalf("sushigo --player %d: %d %q %q", p, code, errs, clip(out))
		}
		st, err := g2.ParseState(sv.State)
		if err != nil {
			t.Fatal(err)
		}
		legal := games.NewMask(g2.NumActions())
		games.LegalOf(st, p, legal)
		var want []string
		for a := range legal.All() {
			want = append(want, st.ActionString(a))
		}
		var got []string
		for _, a := range sv.Policy {
			got = append(got, a.Action)
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("sushigo --player %d: policy over %v, want player %d's legal actions %v", p, got, p, want)
		}
	}
	if code, _, errs := runCLI(t, "", "net", "eval", "--net", s, "--player", "9"); code != 2 || !strings.Contains(errs, "has players 0..") {
		t.Errorf("sushigo --player 9: %d %q", code, errs)
	}
	if code, _, errs := runCLI(t, "", "net", "eval", "--net", f, "--seed", "3", "--player", "1"); code != 2 || !strings.Contains(errs, "player 0 is to move") {
		t.Errorf("sequence --player 1 when player 0 moves: %d %q", code, errs)
	}
}

func TestBenchNetCLI(t *testing.T) {
	code, out, errs := runCLI(t, "", "bench", "net", "--game", "tictactoe", "--batches", "1,4", "--seconds", "0.05", "--json", "--quiet")
	if code != 0 {
		t.Fatalf("bench net: %d %q", code, errs)
	}
	var r struct {
		Game, Net, Choice string
		Backend           string
		InputSize         int `json:"input_size"`
		Rows              []struct {
			Batch       int
			Calls       int
			EvalsPerSec float64 `json:"evals_per_sec"`
			P50         float64 `json:"ms_per_batch_p50"`
			P99         float64 `json:"ms_per_batch_p99"`
		}
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("JSON: %v\n%s", err, out)
	}
	if r.Game != "tictactoe" || !strings.Contains(r.Net, "built-in") || !strings.Contains(r.Choice, "using "+r.Backend) ||
		strings.Contains(r.Choice, "\n") || len(r.Rows) != 2 || r.Rows[1].Batch != 4 {
		t.Fatalf("result %+v", r)
	}
	for _, row := range r.Rows {
		if row.Calls < 1 || row.EvalsPerSec <= 0 || row.P99 < row.P50 {
			t.Errorf("row %+v", row)
		}
	}
	code, out, _ = runCLI(t, "", "bench", "net", "--game", "tictactoe", "--backend", "cpu:threads=1", "--batches", "2", "--seconds", "0.02", "--quiet")
	if code != 0 || !strings.Contains(out, "backend: using cpu:threads=1 (requested)") || !strings.Contains(out, "evals/CPU-s") {
		t.Errorf("text: %d %q", code, out)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--batches", ""}, 2, "--batches"},
		{[]string{"--batches", " , "}, 2, "--batches"},
		{[]string{"--batches", "0"}, 2, "--batches"},
		{[]string{"--batches", "1,-8"}, 2, "-8"},
		{[]string{"--batches", "100000"}, 2, "4096"},
		{[]string{"--batches", "eight"}, 2, "eight"},
		{[]string{"--seconds", "0"}, 2, "--seconds"},
		{[]string{"--backend", "nope"}, 2, "available"},
		{[]string{"--backend", "cpu:threads=0"}, 2, "threads"},
		{[]string{"--backend", "cpu:bogus=1"}, 2, "bogus"},
		{[]string{"--game", "nosuchgame"}, 2, "nosuchgame"},
		{[]string{"--net", filepath.Join(t.TempDir(), "missing")}, 2, "missing"},
		{[]string{"extra"}, 2, "extra"},
	} {
		a := append([]string{"bench", "net", "--game", "tictactoe", "--seconds", "0.01", "--quiet"}, c.args...)
		code, _, errs := runCLI(t, "", a...)
		if code != c.code || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 1 {
			t.Errorf("%v: status %d (want %d), stderr %q (want %q)", c.args, code, c.code, errs, c.want)
		}
	}
	if code, _, errs := runCLI(t, "", "bench", "net", "--help"); code != 0 || !strings.Contains(errs, "cpu") || !strings.Contains(errs, "threads=1..64") {
		t.Errorf("help: %d %q", code, errs)
	}
}

func TestBackendsCommand(t *testing.T) {
	code, out, errs := runCLI(t, "", "backends", "--probe")
	if code != 0 || !strings.Contains(out, "threads=1..64") || !strings.Contains(out, "precision=fp32|tf32|fp16|bf16") ||
		!strings.Contains(out, "auto here: ") {
		t.Errorf("backends: %d %q %q", code, out, errs)
	}
	code, out, _ = runCLI(t, "", "backends", "--json")
	var r struct {
		Backends []struct {
			Name    string
			Options []struct{ Key, Allowed string }
		}
	}
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || len(r.Backends) < 3 {
		t.Errorf("backends --json: %d %q", code, out)
	}
}

// A network with one value per player (three-player Tetris Link) is
// evaluated, not refused for its value head's width: "value" is the
// mover's and "values" every player's by seat, the head's outputs (mover
// first, nets.Config.ValuePlayers) rotated back, as the backend gives them
// here directly. A scalar head prints no "values".
func TestNetEvalPerPlayerValues(t *testing.T) {
	f := filepath.Join(t.TempDir(), "tl3.safetensors")
	if code, _, errs := runCLI(t, "", "net", "init", "--game", "tetrislink:players=3", "--out", f); code != 0 {
		t.Fatalf("init: %q", errs)
	}
	const moves = "players=3;L0@9" // player 1 to move
	code, out, errs := runCLI(t, "", "net", "eval", "--net", f, "--moves", moves, "--json")
	var ev struct {
		Player int
		Value  float64
		Values []float64
	}
	if code != 0 || json.Unmarshal([]byte(out), &ev) != nil {
		t.Fatalf("eval: %d %q %q", code, errs, clip(out))
	}
	net, err := nets.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	g := games.MustNew("tetrislink:players=3")
	st, err := g.ParseState(moves)
	if err != nil {
		t.Fatal(err)
	}
	mover := st.CurrentPlayer()
	obs := make([]float32, net.InputSize())
	st.Observation(mover, obs)
	be, err := nets.NewCPUBackend(net, nets.BackendOptions{MaxBatch: 1})
	if err != nil {
		t.Fatal(err)
	}
	raw := make([]float32, 3)
	if err := be.Evaluate(t.Context(), 1, obs, make([]float32, net.PolicySize()), raw); err != nil {
		t.Fatal(err)
	}
	if ev.Player != 1 || mover != 1 || len(ev.Values) != 3 {
		t.Fatalf("player %d (game: %d), values %v; want player 1 and 3 values", ev.Player, mover, ev.Values)
	}
	for i, v := range raw {
		if got := ev.Values[(mover+i)%3]; math.Abs(got-float64(v)) > 1e-6 {
			t.Errorf("values[%d] = %v, want the head's output %d, %v", (mover+i)%3, got, i, v)
		}
	}
	if ev.Value != ev.Values[mover] {
		t.Errorf("value %v, want the mover's %v", ev.Value, ev.Values[mover])
	}
	code, text, errs := runCLI(t, "", "net", "eval", "--net", f, "--moves", moves)
	if code != 0 || !strings.Contains(text, "values by seat:") {
		t.Errorf("text: %d %q %q", code, clip(text), errs)
	}
	// The same network exported to ONNX evaluates as it is, its game read
	// from the model's metadata.
	o := filepath.Join(t.TempDir(), "tl3.onnx")
	if code, _, errs := runCLI(t, "", "net", "export", f, "--onnx", o); code != 0 {
		t.Fatalf("export: %q", errs)
	}
	code, out, errs = runCLI(t, "", "net", "eval", "--net", o, "--moves", moves, "--json")
	var ox struct {
		Player int
		Values []float64
	}
	if code != 0 || json.Unmarshal([]byte(out), &ox) != nil || ox.Player != 1 || len(ox.Values) != 3 {
		t.Fatalf("eval of the ONNX export: %d %q %q", code, errs, clip(out))
	}
	for p, v := range ox.Values {
		if math.Abs(v-ev.Values[p]) > 1e-5 {
			t.Errorf("ONNX values[%d] = %v, the .safetensors file's %v", p, v, ev.Values[p])
		}
	}
	scalar := filepath.Join(t.TempDir(), "c4.safetensors")
	if code, _, errs := runCLI(t, "", "net", "init", "--game", "connect4", "--out", scalar); code != 0 {
		t.Fatalf("init: %q", errs)
	}
	if code, out, errs := runCLI(t, "", "net", "eval", "--net", scalar, "--json"); code != 0 || strings.Contains(out, `"values"`) {
		t.Errorf("scalar head: %d %q %q", code, clip(out), errs)
	}
	// A shipped network by name, as agents and net export take it.
	if code, out, errs := runCLI(t, "", "net", "eval", "--net", "connect4-zero", "--moves", "4453"); code != 0 || !strings.Contains(out, "player 0 to move") {
		t.Errorf("shipped name: %d %q %q", code, clip(out), errs)
	}
}

// bench net and selfplay without --game play the game their --net was
// made for (as net eval and net export do), not connect4; a --game given
// still decides, and a mismatch is refused as before.
func TestNetGameDefault(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "tl3.safetensors")
	if code, _, errs := runCLI(t, "", "net", "init", "--game", "tetrislink:players=3", "--out", f); code != 0 {
		t.Fatalf("init: %q", errs)
	}
	code, out, errs := runCLI(t, "", "bench", "net", "--net", f, "--batches", "1", "--seconds", "0.05", "--backend", "cpu", "--json", "--quiet")
	var b struct{ Game string }
	if code != 0 || json.Unmarshal([]byte(out), &b) != nil || b.Game != "tetrislink:players=3" {
		t.Errorf("bench net: %d, game %q, stderr %q", code, b.Game, errs)
	}
	sp := filepath.Join(dir, "sp")
	if code, _, errs := runCLI(t, "", "selfplay", "--net", f, "--games", "1", "--sims", "4", "--trees", "1", "--backend", "cpu", "--out", sp, "--quiet"); code != 0 {
		t.Fatalf("selfplay: %q", errs)
	}
	var m struct{ Game string }
	if buf, err := os.ReadFile(filepath.Join(sp, "manifest.json")); err != nil || json.Unmarshal(buf, &m) != nil || m.Game != "tetrislink:players=3" {
		t.Errorf("selfplay manifest: game %q (%v)", m.Game, err)
	}
	if code, _, errs := runCLI(t, "", "bench", "net", "--net", f, "--game", "connect4", "--batches", "1", "--seconds", "0.05", "--quiet"); code != 2 || !strings.Contains(errs, "tetrislink:players=3") {
		t.Errorf("bench net --game connect4 with a Tetris Link net: %d %q", code, errs)
	}
}
