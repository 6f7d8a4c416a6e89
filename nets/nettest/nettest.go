// Package nettest holds helpers for tests that compare two ways of
// evaluating a network (float32 against bfloat16, CPU against GPU) on
// positions from real games.
package nettest

import (
	"context"
	"math"
	"os"
	"strconv"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/connect4"
	_ "github.com/canopy-go/canopy/games/connect4d"
	_ "github.com/canopy-go/canopy/games/tetrislink"
	"github.com/canopy-go/canopy/nets"
	_ "github.com/canopy-go/canopy/nets/zoo"
)

// Shipped is one network shipped in the binary with decision positions
// of its game (see DecisionPositions).
type Shipped struct {
	Name  string
	Net   *nets.Net
	In    []float32
	Legal []games.Mask
}

// ShippedNets opens shipped networks that have a residual tower,
// connect4-zero, connect4d-zero (Connect4d with d = 5) and
// tetrislink4-zero (four values a row: a per-player value head), each
// with at least limit positions of seeded random games.
func ShippedNets(t testing.TB, limit int) []Shipped {
	t.Helper()
	var out []Shipped
	for _, c := range []struct{ net, game string }{{"connect4-zero", "connect4"}, {"connect4d-zero", "connect4d:d=5"}, {"tetrislink4-zero", "tetrislink:players=4"}} {
		g := games.MustNew(c.game)
		net, _, err := nets.OpenNet(c.net, g)
		if err != nil {
			t.Fatal(err)
		}
		in, legal := DecisionPositions(t, g, net, limit, 20)
		out = append(out, Shipped{Name: c.net, Net: net, In: in, Legal: legal})
	}
	return out
}

// PositionLimit returns how many positions a comparison test should use:
// 2,000, or 150 with -short, or the CANOPY_BF16_POSITIONS environment
// variable when set (a positive integer; anything else fails the test).
func PositionLimit(t testing.TB) int {
	t.Helper()
	limit := 2000
	if testing.Short() {
		limit = 150
	}
	if v := os.Getenv("CANOPY_BF16_POSITIONS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("CANOPY_BF16_POSITIONS=%q: want a positive number of positions", v)
		}
		limit = n
	}
	return limit
}

// DecisionPositions returns every decision position of seeded random
// games of g until it has at least limit of them, each encoded for the
// player to move in net's input encoding, with its legal actions.
func DecisionPositions(t testing.TB, g games.Game, net *nets.Net, limit int, seed uint64) (in []float32, legal []games.Mask) {
	t.Helper()
	encoding, err := nets.EncodingFor(g, net.InputSize())
	if err != nil {
		t.Fatal(err)
	}
	enc, err := nets.NewEncoder(g, encoding)
	if err != nil {
		t.Fatal(err)
	}
	rng := games.NewRand(seed)
	m := games.NewMask(g.NumActions())
	for len(legal) < limit {
		s := g.NewInitialState()
		for !s.IsTerminal() {
			if p := s.CurrentPlayer(); p >= 0 {
				l := games.NewMask(g.NumActions())
				s.Legal(l)
				x := make([]float32, net.InputSize())
				enc.Encode(s, p, l, x)
				in = append(in, x...)
				legal = append(legal, l)
			}
			games.RandomStep(s, rng, m, nil)
		}
	}
	return in, legal
}

// Agreement is how closely one backend's outputs follow another's.
type Agreement struct {
	Positions int
	SameMove  int     // positions where both rank the same legal action first
	MeanValue float64 // mean absolute value difference
	MaxValue  float64 // largest absolute value difference
}

// Share returns SameMove / Positions.
func (a Agreement) Share() float64 { return float64(a.SameMove) / float64(a.Positions) }

// Meets reports whether the agreement is consistent with the bar, a share
// of positions such as 0.99. With 1,000 positions or more the share itself
// must reach the bar. A smaller sample (the -short runs) cannot resolve a
// bar that close to 1: at 150 positions each one moves the share by 0.7
// points, so two near-ties decide the outcome. There the bar fails only
// when the sample rejects it: when as many misses as seen, or more, have
// a probability below 1% at the miss rate the bar allows (a one-sided
// binomial test). A backend that truly agrees on 96% of positions still
// fails most such samples.
func (a Agreement) Meets(bar float64) bool {
	if a.Positions >= 1000 {
		return a.Share() >= bar
	}
	return BinomialTail(a.Positions, a.Positions-a.SameMove, 1-bar) >= 0.01
}

// BinomialTail returns P(X >= k) for X ~ Binomial(n, q).
func BinomialTail(n, k int, q float64) float64 {
	if k <= 0 {
		return 1
	}
	if k > n {
		return 0
	}
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	p := 0.0
	for i := k; i <= n; i++ {
		p += math.Exp(lg(n) - lg(i) - lg(n-i) + float64(i)*math.Log(q) + float64(n-i)*math.Log1p(-q))
	}
	return min(p, 1)
}

// Compare evaluates the positions in (inputSize values each) with both
// backends in batches of batch and reports how often got's most probable
// legal action is want's, and how far its values are (every value of a
// per-player head's rows; both backends must give the same number).
func Compare(t testing.TB, want, got nets.Backend, inputSize, policySize int, in []float32, legal []games.Mask, batch int) Agreement {
	t.Helper()
	n, P := len(legal), policySize
	V := nets.ValueSize(want) // values per row: 1, or a per-player head's
	if g := nets.ValueSize(got); g != V {
		t.Fatalf("nettest.Compare: %s gives %d values a row, %s %d", want.Name(), V, got.Name(), g)
	}
	wantP, gotP := make([]float32, n*P), make([]float32, n*P)
	wantV, gotV := make([]float32, n*V), make([]float32, n*V)
	for lo := 0; lo < n; lo += batch {
		k := min(batch, n-lo)
		x := in[lo*inputSize : (lo+k)*inputSize]
		if err := want.Evaluate(context.Background(), k, x, wantP[lo*P:(lo+k)*P], wantV[lo*V:(lo+k)*V]); err != nil {
			t.Fatal(err)
		}
		if err := got.Evaluate(context.Background(), k, x, gotP[lo*P:(lo+k)*P], gotV[lo*V:(lo+k)*V]); err != nil {
			t.Fatal(err)
		}
	}
	a := Agreement{Positions: n}
	var sum float64
	for i := range n {
		if LegalArgmax(wantP[i*P:(i+1)*P], legal[i]) == LegalArgmax(gotP[i*P:(i+1)*P], legal[i]) {
			a.SameMove++
		}
		for j := i * V; j < (i+1)*V; j++ {
			d := math.Abs(float64(gotV[j]) - float64(wantV[j]))
			sum += d
			a.MaxValue = max(a.MaxValue, d)
		}
	}
	a.MeanValue = sum / float64(n*V)
	return a
}

// LegalArgmax returns the legal action with the largest logit (the first
// on ties).
func LegalArgmax(logits []float32, legal games.Mask) games.Action {
	best, bestV := games.Action(-1), float32(math.Inf(-1))
	for a := range legal.All() {
		if logits[a] > bestV {
			best, bestV = a, logits[a]
		}
	}
	return best
}
