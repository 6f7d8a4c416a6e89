package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
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
		{[]string{"net", "info", filepath.Join(dir, "missing")}, 1, "missing"},
		{[]string{"net", "info"}, 2, "one file"},
		{[]string{"net", "eval", "--net", bad, "--game", "nettest"}, 1, "bad.safetensors"},
		{[]string{"net", "eval", "--net", good, "--game", "nettest"}, 1, "inputs"},
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
