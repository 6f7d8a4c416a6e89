package engine

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/sequence"
	"github.com/canopy-go/canopy/nets"
)

// smallRecurrentFile saves a small CNN-LSTM for g and returns it and its
// path.
func smallRecurrentFile(t *testing.T, g games.Game) (*nets.Recurrent, string) {
	t.Helper()
	cfg, _ := nets.RecurrentPreset("sequence-lstm")
	cfg.ConvChannels, cfg.BoardDense, cfg.FlatDense, cfg.Hidden = []int{4}, 8, 8, 6
	cfg, err := cfg.ForGame(g)
	if err != nil {
		t.Fatal(err)
	}
	net, err := nets.NewRecurrent(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "lstm.safetensors")
	if err := net.Save(path); err != nil {
		t.Fatal(err)
	}
	return net, path
}

// The policy agent on a recurrent net carries the LSTM state from move to
// move: each move is the argmax of the net stepped from the state its
// previous moves left (computed here with the net's own Step, one step per
// agent move), and a new game starts from zero state again.
func TestRecurrentPolicyKeepsState(t *testing.T) {
	g := games.MustNew("sequence:jacks=false")
	net, path := smallRecurrentFile(t, g)
	a, err := agent.New(g, "policy:net="+path, testEnv(1))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := a.(*RecurrentPolicy); !ok {
		t.Fatalf("policy agent on a recurrent file is a %T", a)
	}
	rnd, _ := agent.New(g, "random", testEnv(2))
	H := net.Hidden()
	in := make([]float32, net.InputSize())
	logits, val := make([]float32, net.PolicySize()), make([]float32, 1)
	mask := games.NewMask(g.NumActions())
	ctx := context.Background()
	for game := range 2 {
		h, c := make([]float32, H), make([]float32, H)
		s := g.NewInitialState()
		rng := games.NewRand(uint64(7 + game))
		moves, differs := 0, false
		for !s.IsTerminal() && moves < 30 {
			p := s.CurrentPlayer()
			switch {
			case p == games.ChancePlayer:
				s.Apply(s.(games.ChanceState).SampleChance(rng))
			case p == 0:
				s.(nets.FeatureState).Features(p, in)
				// What a stateless net would play: from zero state.
				z0, z1 := make([]float32, H), make([]float32, H)
				zl := make([]float32, len(logits))
				if err := net.Step(1, in, z0, z1, nil, zl, val); err != nil {
					t.Fatal(err)
				}
				if err := net.Step(1, in, h, c, nil, logits, val); err != nil {
					t.Fatal(err)
				}
				s.Legal(mask)
				want, zero := games.NoAction, games.NoAction
				for m := range mask.All() {
					if want == games.NoAction || logits[m] > logits[want] {
						want = m
					}
					if zero == games.NoAction || zl[m] > zl[zero] {
						zero = m
					}
				}
				differs = differs || want != zero
				got, err := a.Act(ctx, s, p)
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Fatalf("game %d move %d: the agent plays %d, the net stepped from the carried state %d", game, s.MoveNumber(), got, want)
				}
				s.Apply(got)
				moves++
			default:
				m, err := rnd.Act(ctx, s, p)
				if err != nil {
					t.Fatal(err)
				}
				s.Apply(m)
			}
		}
		if !differs {
			t.Errorf("game %d: the carried state never changed the move: the check proves nothing", game)
		}
	}
}

// A recurrent net for another game is refused with a clear error.
func TestRecurrentPolicyWrongGame(t *testing.T) {
	_, path := smallRecurrentFile(t, games.MustNew("sequence:jacks=false"))
	if _, err := agent.New(games.MustNew("sequence"), "policy:net="+path, testEnv(1)); err == nil || !contains(err.Error(), "features") {
		t.Fatalf("error %v, want one naming the feature sizes", err)
	}
	if _, err := agent.New(games.MustNew("connect4"), "policy:net="+path, testEnv(1)); err == nil {
		t.Fatal("a Sequence recurrent net accepted for connect4")
	}
}
