package engine

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"testing"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
)

// legalPlaneNet saves a small fresh Connect Four PPO net with study 002's
// three input planes (own, opponent, legal moves) and returns it and its
// path.
func legalPlaneNet(t *testing.T) (*nets.Net, string) {
	t.Helper()
	cfg := nets.Config{Head: nets.HeadPPO, InputPlanes: 3, Height: 6, Width: 7, PolicySize: 7,
		ConvChannels: []int{4}, Dense: 8}
	net, err := nets.New(cfg, 11)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "three.safetensors")
	if err := net.Save(path); err != nil {
		t.Fatal(err)
	}
	return net, path
}

// threePlanes builds the three-plane input of a Connect Four position by
// hand, without nets.Encoder or the legal mask: the game's two planes,
// then a plane that is 1 over every column with an empty cell.
func threePlanes(s games.State) []float32 {
	const h, w = 6, 7
	x := make([]float32, 3*h*w)
	s.Observation(s.CurrentPlayer(), x[:2*h*w])
	for c := range w {
		filled := 0
		for r := range h {
			if x[r*w+c] != 0 || x[h*w+r*w+c] != 0 {
				filled++
			}
		}
		if filled < h {
			for r := range h {
				x[2*h*w+r*w+c] = 1
			}
		}
	}
	return x
}

// A net trained with the legal-move plane plays through the engine: the
// policy agent's priors (Engine.Evaluate) and the az agent's root priors
// (the worker's batched path) are the net's softmax on the hand-built
// three-plane input, and a whole game against random completes.
func TestLegalPlaneNetPlays(t *testing.T) {
	g := games.MustNew("connect4")
	net, path := legalPlaneNet(t)
	ctx := context.Background()
	pol, err := agent.New(g, "policy:backend=cpu,net="+path, testEnv(1))
	if err != nil {
		t.Fatal(err)
	}
	defer pol.(*Policy).Close()
	if enc := pol.(*Policy).lease.Encoding(); !enc.LegalPlane {
		t.Fatalf("engine encoding %+v for a 3-plane net, want the legal-move plane", enc)
	}
	az, err := agent.New(g, "az:backend=cpu,sims=16,dirfrac=0,net="+path, testEnv(1))
	if err != nil {
		t.Fatal(err)
	}
	defer az.(*AZ).Close()

	s := g.NewInitialState()
	for _, a := range []games.Action{3, 3, 3, 3, 3, 3, 2, 4} { // column 3 full
		s.Apply(a)
	}
	logits, val := make([]float32, 7), make([]float32, 1)
	net.Forward(1, threePlanes(s), logits, val)
	mask := games.NewMask(7)
	s.Legal(mask)
	want := make([]float32, 7)
	nets.MaskedSoftmax(logits, mask, want)
	spread := false
	for _, a := range []agent.Agent{pol, az} {
		rows, err := a.(agent.Analyzer).Analyze(ctx, s, s.CurrentPlayer())
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 6 {
			t.Fatalf("%T: %d actions analysed, want 6", a, len(rows))
		}
		for _, r := range rows {
			if math.Abs(r.Prior-float64(want[r.Action])) > 1e-6 {
				t.Errorf("%T action %d: prior %v, the net on the hand-built input gives %v", a, r.Action, r.Prior, want[r.Action])
			}
			spread = spread || math.Abs(r.Prior-1.0/6) > 1e-3
		}
	}
	if !spread {
		t.Fatal("the test net's policy is uniform: the check proves nothing")
	}
	// With the third plane cleared the net would give other priors: the
	// match above depends on the plane being there.
	x := threePlanes(s)
	clear(x[84:])
	other := make([]float32, 7)
	net.Forward(1, x, other, val)
	if other[0] == logits[0] && other[1] == logits[1] {
		t.Fatal("the legal-move plane does not change the test net's output: the check proves nothing")
	}

	rnd, err := agent.New(g, "random", testEnv(2))
	if err != nil {
		t.Fatal(err)
	}
	s = g.NewInitialState()
	players := []agent.Agent{pol, rnd}
	for !s.IsTerminal() {
		p := s.CurrentPlayer()
		m, err := players[p].Act(ctx, s, p)
		if err != nil {
			t.Fatalf("move %d: %v", s.MoveNumber(), err)
		}
		s.Apply(m)
	}
}

// A net whose input is neither the observation nor the observation with
// the legal-move plane is refused with a message naming both sizes.
func TestEngineRejectsOtherInputSizes(t *testing.T) {
	g := games.MustNew("connect4")
	be := nets.NewRandomBackend(84+42+1, 7, 1, nets.BackendOptions{})
	if _, err := New(g, be, Options{}); err == nil || !contains(err.Error(), "126 with the legal-move plane") {
		t.Fatalf("error %v, want it to name the legal-move plane's size", err)
	}
}

// Concurrent Engine.Evaluate calls on a legal-plane net each encode their
// own position's legal moves (each call takes its own scratch mask).
func TestLegalPlaneConcurrentEvaluate(t *testing.T) {
	g := games.MustNew("connect4")
	net, path := legalPlaneNet(t)
	l, err := testPool.Acquire(g, path, "cpu")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	const workers = 4
	errs := make(chan error, workers)
	for w := range workers {
		go func() {
			s := g.NewInitialState()
			for range 6 { // column w full: different legal moves per worker
				s.Apply(games.Action(w))
			}
			got := make([]float32, 7)
			want, val := make([]float32, 7), make([]float32, 1)
			net.Clone().Forward(1, threePlanes(s), want, val)
			for range 50 {
				if _, err := l.Evaluate(context.Background(), s, s.CurrentPlayer(), got); err != nil {
					errs <- err
					return
				}
				for a := range got {
					if math.Abs(float64(got[a]-want[a])) > 1e-5 {
						errs <- fmt.Errorf("worker %d: logit %d = %v, want %v", w, a, got[a], want[a])
						return
					}
				}
			}
			errs <- nil
		}()
	}
	for range workers {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
