package multi_test

import (
	"context"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/canopy-go/canopy/agent"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/nets"
	"github.com/canopy-go/canopy/search/engine" // eval=NET: the network evaluator resolver
	"github.com/canopy-go/canopy/search/multi"
)

// tinyNet writes a small random network for g (1 block of 4 channels)
// and returns it with its weights file.
func tinyNet(t *testing.T, g games.Game) (*nets.Net, string) {
	t.Helper()
	cfg, err := nets.DefaultConfig(g)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Channels, cfg.Blocks, cfg.ValueHidden = 4, 1, 8
	n, err := nets.New(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tiny.safetensors")
	if err := n.Save(path); err != nil {
		t.Fatal(err)
	}
	return n, path
}

// netPolicy computes the network's masked softmax at s directly (no
// engine, no search), for the mover.
func netPolicy(n *nets.Net, s games.State) []float32 {
	g := s.Game()
	in := make([]float32, n.InputSize())
	s.Observation(s.CurrentPlayer(), in)
	logits, v := make([]float32, g.NumActions()), make([]float32, 1)
	n.Forward(1, in, logits, v)
	mask := games.NewMask(g.NumActions())
	s.Legal(mask)
	probs := make([]float32, g.NumActions())
	mx := math.Inf(-1)
	for a := range mask.All() {
		mx = math.Max(mx, float64(logits[a]))
	}
	var sum float64
	for a := range mask.All() {
		sum += math.Exp(float64(logits[a]) - mx)
	}
	for a := range mask.All() {
		probs[a] = float32(math.Exp(float64(logits[a])-mx) / sum)
	}
	return probs
}

// netPool is the engine pool of this file's network agents (their
// agent.Env carries it).
var netPool = engine.NewPool(engine.PoolOptions{})

// evals returns the number of network rows evaluated by netPool's
// engines so far.
func evals() int64 {
	var n int64
	for _, u := range netPool.Usage() {
		n += u.Evals
	}
	return n
}

// The variants evaluate leaves with a network through eval=NET (the
// pooled batched engine of search/engine): the network's policy is what
// they read, every evaluation is one network row, exactly the budget,
// and closing the agents releases the engine.
func TestNetworkEvaluation(t *testing.T) {
	g := games.MustNew("connect4d")
	n, path := tinyNet(t, g)
	s := g.NewInitialState()
	for _, a := range []games.Action{3, 10, 17, 24, 31, 2, 9, 16, 23, 30} { // a turn each: x in column d, o in column c
		s.Apply(a)
	}
	ctx := context.Background()

	// EMCTS-V with the budget of its root sequence only (5 policy calls,
	// no EMCTS-SEARCH simulation): with itemp=0 the turn is the
	// network's greedy sequence, and Explain's priors are its policy.
	want := []games.Action{}
	c := s.Clone()
	var wantPri []float32
	for range 5 {
		p := netPolicy(n, c)
		best := games.NoAction
		for a := range p {
			if p[a] > 0 && (best == games.NoAction || p[a] > p[best]) {
				best = games.Action(a)
			}
		}
		want = append(want, best)
		wantPri = append(wantPri, p[best])
		c.Apply(best)
	}
	for _, tc := range []struct {
		spec string
		sims int
	}{
		{"emcts:itemp=0,sims=5,eval=" + path, 5},
		{"emcts:sims=200,eval=" + path, 200},
		{"emcts:sims=200,horizon=2,eval=" + path, 200},
		{"emcts:sims=200,bb=true,eval=" + path, 200},
		{"mcts-v:sel=puct,sims=200,eval=" + path, 200},
		{"mcts-bb:sel=puct,sims=200,eval=" + path, 200},
		{"oep:sims=200,reeval=false,eval=" + path, 200},
	} {
		ag, err := agent.New(g, tc.spec, agent.Env{Seed: 1}.With(netPool))
		if err != nil {
			t.Fatal(tc.spec, err)
		}
		before := evals()
		rows, err := ag.(agent.Analyzer).Analyze(ctx, s, 0)
		if err != nil {
			t.Fatal(tc.spec, err)
		}
		if got := evals() - before; got != int64(tc.sims) {
			t.Errorf("%s: %d network evaluations, want exactly %d", tc.spec, got, tc.sims)
		}
		turn := make([]games.Action, len(rows))
		for i, r := range rows {
			turn[i] = r.Action
		}
		c := s.Clone()
		for _, a := range turn {
			if err := games.ApplyChecked(c, a); err != nil {
				t.Fatalf("%s: turn %v: %v", tc.spec, turn, err)
			}
		}
		if len(turn) != 5 || c.(games.MultiActionState).TurnNumber() != 3 {
			t.Errorf("%s: turn %v is not one whole turn", tc.spec, turn)
		}
		if tc.sims == 5 {
			for i := range want {
				if turn[i] != want[i] || math.Abs(rows[i].Prior-float64(wantPri[i])) > 1e-4 {
					t.Errorf("%s: action %d: %d with prior %.5f; the network's greedy choice is %d with %.5f",
						tc.spec, i, turn[i], rows[i].Prior, want[i], wantPri[i])
				}
			}
		}
		if tc.spec[:4] == "mcts" { // the first action's prior is the root policy
			if p := netPolicy(n, s)[turn[0]]; math.Abs(rows[0].Prior-float64(p)) > 1e-4 {
				t.Errorf("%s: first action %d has prior %.5f, the network says %.5f", tc.spec, turn[0], rows[0].Prior, p)
			}
		}
		if err := ag.(io.Closer).Close(); err != nil {
			t.Error(err)
		}
	}
	if k := netPool.Open(); k != 0 {
		t.Errorf("%d engines still open after closing every agent", k)
	}
	var _ multi.Explainer = (*multi.OEP)(nil)
}

// TestEMCTSTargetAgreementNet is the network half of the harness
// TestEMCTSTargetAgreement: with the network CANOPY_EMCTS_NET as
// evaluator (EMCTS-V and EMCTS-BB, 250 evaluations, seeds 1-6, each from
// the position after 5*(seed%3) random actions) it prints how often the
// played action is the argmax of its target row, and the mean target mass
// on it, under each counting. For example
//
//	CANOPY_STUDIES=1 CANOPY_EMCTS_NET=runs/studies/megazero/connect4d-emcts-v-code/checkpoints/iter-0017.safetensors \
//	  go test -run 'TestEMCTSTargetAgreementNet' -v ./search/multi/
func TestEMCTSTargetAgreementNet(t *testing.T) {
	net := os.Getenv("CANOPY_EMCTS_NET")
	if os.Getenv("CANOPY_STUDIES") == "" || net == "" {
		t.Skip("a harness for docs/RESULTS.md: set CANOPY_STUDIES=1 and CANOPY_EMCTS_NET to a connect4d:d=5 network")
	}
	g := games.MustNew("connect4d:d=5")
	n := g.NumActions()
	for _, hist := range []string{"paper", "code", "node", "evals"} {
		for _, bb := range []string{"false", "true"} {
			agree, total := 0, 0
			var mass float64
			for seed := uint64(1); seed <= 6; seed++ {
				ag, err := agent.New(g, "emcts:sims=250,bb="+bb+",hist="+hist+",eval="+net, agent.Env{Seed: seed}.With(netPool))
				if err != nil {
					t.Fatal(err)
				}
				e := ag.(*multi.Agent).Planner().(*multi.EMCTS)
				s := g.NewInitialState()
				rng := games.NewRand(seed)
				m := games.NewMask(n)
				for range 5 * int(seed%3) {
					s.Legal(m)
					s.Apply(m.Random(rng))
				}
				turn, err := e.PlanTurn(context.Background(), s, nil)
				if err != nil {
					t.Fatal(err)
				}
				rows := e.PolicyHistory(nil)
				agree += multi.ArgmaxAgreement(rows, turn, n)
				for i, a := range turn {
					mass += float64(rows[i*n+int(a)])
				}
				total += len(turn)
				if err := e.Close(); err != nil {
					t.Fatal(err)
				}
			}
			t.Logf("hist=%s bb=%s: argmax = played action in %d of %d rows, mean mass on it %.2f", hist, bb, agree, total, mass/float64(total))
		}
	}
}
