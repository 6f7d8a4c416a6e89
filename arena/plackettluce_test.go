package arena

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// sampleDavidsonLuce draws a finishing order of the seated agents from the
// Davidson-Luce process with log-strengths beta and tie prevalences
// delta[d] (d players tied; delta[1] is taken as 1, missing or zero sizes
// never happen): at each stage every subset T of the players not yet
// placed, of a size with positive prevalence, takes the next place with
// probability proportional to delta[|T|] exp(mean of beta over T).
// Returns are minus the place, tied players sharing theirs.
func sampleDavidsonLuce(rng *rand.Rand, beta, delta []float64, seats []int) Outcome {
	ret := make([]float64, len(seats))
	left := slices.Clone(seats) // seat indices not yet placed
	for i := range left {
		left[i] = i
	}
	place := 0.0
	for len(left) > 0 {
		var subsets []int // bitmasks over left
		var weights []float64
		total := 0.0
		for m := 1; m < 1<<len(left); m++ {
			d, sum := 0, 0.0
			for i := range left {
				if m&(1<<i) != 0 {
					d++
					sum += beta[seats[left[i]]]
				}
			}
			w := 1.0
			if d >= 2 {
				if d >= len(delta) || delta[d] <= 0 {
					continue
				}
				w = delta[d]
			}
			w *= math.Exp(sum / float64(d))
			subsets = append(subsets, m)
			weights = append(weights, w)
			total += w
		}
		u := rng.Float64() * total
		pick := len(subsets) - 1
		for i, w := range weights {
			if u < w {
				pick = i
				break
			}
			u -= w
		}
		var rest []int
		for i, s := range left {
			if subsets[pick]&(1<<i) != 0 {
				ret[s] = -place
			} else {
				rest = append(rest, s)
			}
		}
		place++
		left = rest
	}
	return Outcome{Agents: slices.Clone(seats), Returns: ret}
}

// mixedTournament plays n games among len(beta) agents, each at a table
// of 3 to 5 agents drawn at random, seats in random order.
func mixedTournament(beta, delta []float64, n int, seed uint64) []Outcome {
	rng := games.NewRand(seed)
	outs := make([]Outcome, n)
	for g := range outs {
		seats := rng.Perm(len(beta))[:min(len(beta), 3+rng.IntN(3))]
		outs[g] = sampleDavidsonLuce(rng, beta, delta, seats)
	}
	return outs
}

func agentNames(k int) []string {
	out := make([]string, k)
	for i := range out {
		out[i] = string(rune('a' + i))
	}
	return out
}

// checkFinite fails on a NaN or infinite rating or interval, or an
// interval that does not contain its estimate.
func checkFinite(t *testing.T, name string, fit *PLFit) {
	t.Helper()
	for _, r := range fit.Ratings {
		for _, x := range []float64{r.Value, r.Lo, r.Hi} {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Fatalf("%s: %s rated %v [%v, %v]", name, r.Agent, r.Value, r.Lo, r.Hi)
			}
		}
		if !(r.Lo <= r.Value && r.Value <= r.Hi) {
			t.Errorf("%s: %s rated %v outside its interval [%v, %v]", name, r.Agent, r.Value, r.Lo, r.Hi)
		}
	}
	for _, d := range fit.Ties {
		if !(d.Lo <= d.Delta && d.Delta <= d.Hi) || math.IsNaN(d.Delta) || math.IsInf(d.Hi, 0) {
			t.Errorf("%s: δ_%d = %v [%v, %v]", name, d.Players, d.Delta, d.Lo, d.Hi)
		}
	}
}

// Two agents: Davidson's model has the closed-form maximum-likelihood
// estimate α_a/α_b = w/l, δ_2 = t/√(wl) (multinomial probabilities
// matched to the counts). Without draws the information on β_a - β_b is
// n p(1-p) = wl/n, so its variance is 1/w + 1/l.
func TestPLTwoAgentsByHand(t *testing.T) {
	names := []string{"a", "b"}
	fit, err := FitPlackettLuce(names, twoPlayer(0, 1, 30, 20, 10), PLOptions{PriorSD: math.Inf(1)})
	if err != nil {
		t.Fatal(err)
	}
	checkFinite(t, "30-20-10", fit)
	if d := fit.Ratings[0].Value - fit.Ratings[1].Value; math.Abs(d-EloPerNat*math.Log(3)) > 1e-6 {
		t.Errorf("30 wins, 20 draws, 10 losses: Elo difference %.6f, want 400 log10(3) = %.6f", d, EloPerNat*math.Log(3))
	}
	if math.Abs(fit.Ratings[0].Value+fit.Ratings[1].Value) > 1e-9 {
		t.Errorf("ratings %v do not have mean 0", fit.Ratings)
	}
	if len(fit.Ties) != 1 || fit.Ties[0].Players != 2 || math.Abs(fit.Ties[0].Delta-20/math.Sqrt(300)) > 1e-6 {
		t.Errorf("ties %+v, want δ_2 = 20/√300 = %.6f", fit.Ties, 20/math.Sqrt(300))
	}
	if !fit.Connected || fit.Ratings[0].Flag != "" || fit.Ties[0].Flag {
		t.Errorf("flags set on informative data: %+v", fit)
	}
	if _, err := json.Marshal(fit); err != nil || fit.PriorSD != 0 {
		t.Errorf("no prior: prior_sd %v, JSON error %v", fit.PriorSD, err)
	}

	// No draws, anchored at b: a's rating is the whole difference, its
	// half-width 1.96 √(1/30 + 1/10) in natural log units.
	fit, err = FitPlackettLuce(names, twoPlayer(0, 1, 30, 0, 10), PLOptions{PriorSD: math.Inf(1), Anchor: "b"})
	if err != nil {
		t.Fatal(err)
	}
	a, b := fit.Ratings[0], fit.Ratings[1]
	wantH := 1.959963984540054 * math.Sqrt(1.0/30+1.0/10) * EloPerNat
	if math.Abs(a.Value-EloPerNat*math.Log(3)) > 1e-6 || math.Abs(a.Hi-a.Value-wantH) > 1e-6 || math.Abs(a.Value-a.Lo-wantH) > 1e-6 {
		t.Errorf("a anchored at b: %+v, want %.4f ± %.4f", a, EloPerNat*math.Log(3), wantH)
	}
	if b.Value != 0 || b.Lo != 0 || b.Hi != 0 || len(fit.Ties) != 0 {
		t.Errorf("anchor b: %+v, ties %v; want 0 [0, 0] and no tie parameter", b, fit.Ties)
	}
	// Mean 0: each rating is half the difference, with half the width.
	fit, err = FitPlackettLuce(names, twoPlayer(0, 1, 30, 0, 10), PLOptions{PriorSD: math.Inf(1)})
	if err != nil {
		t.Fatal(err)
	}
	if a := fit.Ratings[0]; math.Abs(a.Value-EloPerNat*math.Log(3)/2) > 1e-6 || math.Abs(a.Hi-a.Value-wantH/2) > 1e-6 {
		t.Errorf("a, mean 0: %+v, want %.4f ± %.4f", a, EloPerNat*math.Log(3)/2, wantH/2)
	}
	// The default weak prior moves this estimate by under an Elo point.
	fit, err = FitPlackettLuce(names, twoPlayer(0, 1, 30, 0, 10), PLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d := fit.Ratings[0].Value - fit.Ratings[1].Value; d > EloPerNat*math.Log(3) || d < EloPerNat*math.Log(3)-1 {
		t.Errorf("weak prior: difference %.3f, want just below %.3f", d, EloPerNat*math.Log(3))
	}
}

// Without ties, two-player games are Bradley-Terry: the same numbers as
// FitElo's maximum-likelihood fit (a separate Newton solver over the
// pairwise table), and on multi-player orders the same as ILSR's spectral
// fixed point, a different algorithm for the same estimate.
func TestPLWithoutTiesMatchesBradleyTerryAndILSR(t *testing.T) {
	truth := []float64{0.5, -0.3, 0.9, 0, -1.1}
	names := agentNames(len(truth))
	pairs := synthetic(t, truth, 2, 40, 5)
	for _, o := range pairs {
		if o.Returns[0] == o.Returns[1] {
			t.Fatal("synthetic two-player data has a draw")
		}
	}
	fit, err := FitPlackettLuce(names, pairs, PLOptions{PriorSD: math.Inf(1)})
	if err != nil {
		t.Fatal(err)
	}
	elo, err := FitElo(len(truth), pairs, math.Inf(1))
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range fit.Ratings {
		if math.Abs(r.Value-elo[i]) > 1e-6 {
			t.Errorf("two players, agent %d: Plackett-Luce %.6f, Elo %.6f", i, r.Value, elo[i])
		}
	}
	multi := mixedTournament(truth, nil, 300, 9)
	fit, err = FitPlackettLuce(names, multi, PLOptions{PriorSD: math.Inf(1)})
	if err != nil {
		t.Fatal(err)
	}
	ilsr, err := FitILSR(len(truth), multi, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range fit.Ratings {
		if math.Abs(r.Value-EloPerNat*ilsr[i]) > 1e-5 {
			t.Errorf("3-5 players, agent %d: Plackett-Luce %.6f, ILSR %.6f", i, r.Value, EloPerNat*ilsr[i])
		}
	}
	if len(fit.Ties) != 0 || !fit.Connected {
		t.Errorf("ties %v, connected %v; want none, true", fit.Ties, fit.Connected)
	}
}

// Calibration on synthetic tournaments with known strengths: 8 agents,
// 2000 games at tables of 3 to 5 drawn at random, orders from the
// Davidson-Luce process (with and without ties). Over the replicates the
// 95% intervals must cover the true centred ratings about 95% of the time,
// and the standardised errors (estimate - truth)/se must have a standard
// deviation near 1: intervals neither too narrow nor too wide. Bounds:
// 8 agents x 12 replicates = 96 intervals per case, binomial sd of the
// coverage 2.2%, of the standardised sd about 7%.
func TestPLCalibration(t *testing.T) {
	truth := []float64{1.2, 0.8, 0.4, 0.1, 0, -0.3, -0.7, -1.5}
	want := centred(truth)
	names := agentNames(len(truth))
	reps := 12
	if testing.Short() {
		reps = 6
	}
	for _, tc := range []struct {
		name  string
		delta []float64
	}{
		{"no ties", nil},
		{"ties of 2 and 3", []float64{0, 1, 0.4, 0.15}},
	} {
		covered, total, tieCovered, tieTotal := 0, 0, 0, 0
		var z2 float64
		for r := range reps {
			outs := mixedTournament(truth, tc.delta, 2000, uint64(100+r))
			fit, err := FitPlackettLuce(names, outs, PLOptions{})
			if err != nil {
				t.Fatal(err)
			}
			checkFinite(t, tc.name, fit)
			if !fit.Connected {
				t.Fatalf("%s: comparison graph not strongly connected", tc.name)
			}
			for i, rt := range fit.Ratings {
				w := EloPerNat * want[i]
				total++
				if rt.Lo <= w && w <= rt.Hi {
					covered++
				}
				se := (rt.Hi - rt.Lo) / (2 * 1.959963984540054)
				z2 += (rt.Value - w) * (rt.Value - w) / (se * se)
			}
			for _, d := range fit.Ties {
				if d.Players >= len(tc.delta) {
					t.Fatalf("%s: fitted a tie of %d players, which the process never makes", tc.name, d.Players)
				}
				tieTotal++
				if d.Lo <= tc.delta[d.Players] && tc.delta[d.Players] <= d.Hi {
					tieCovered++
				}
			}
			if tc.delta != nil && len(fit.Ties) != 2 {
				t.Errorf("%s: fitted ties %+v, want sizes 2 and 3", tc.name, fit.Ties)
			}
		}
		cov := float64(covered) / float64(total)
		zsd := math.Sqrt(z2 / float64(total))
		t.Logf("%s: coverage %d/%d, sd of standardised errors %.3f, tie coverage %d/%d", tc.name, covered, total, zsd, tieCovered, tieTotal)
		if cov < 0.87 || cov > 0.995 {
			t.Errorf("%s: 95%% intervals covered the truth %.1f%% of the time", tc.name, 100*cov)
		}
		if zsd < 0.8 || zsd > 1.2 {
			t.Errorf("%s: standardised errors have sd %.3f, want about 1", tc.name, zsd)
		}
		if tieTotal > 0 && tieCovered < tieTotal*3/4 {
			t.Errorf("%s: tie prevalence intervals covered the truth %d/%d times", tc.name, tieCovered, tieTotal)
		}
	}
}

// Hand expansion of the stages of one game with a tie: returns (5, 5, 2, 1)
// for agents 3, 1, 0, 2 are the stages {1,3} from {0,1,2,3}, then {0}
// from {0,2}; the last player has no stage.
func TestPLStages(t *testing.T) {
	outs := []Outcome{{Agents: []int{3, 1, 0, 2}, Returns: []float64{5, 5, 2, 1}}}
	alts, obs, err := plAlternatives([]int{0, 1, 2, 3}, []int{1, 3}, []int{2}, 5)
	if err != nil {
		t.Fatal(err)
	}
	// 4 singletons and 6 pairs; {1,3} is the fifth pair in lexicographic
	// order: (0,1) (0,2) (0,3) (1,2) (1,3) (2,3).
	if len(alts) != 10 || obs != 4+4 {
		t.Fatalf("%d alternatives, observed %d; want 10 and 8", len(alts), obs)
	}
	if x := alts[obs]; !slices.Equal(x, []float64{0, 0.5, 0, 0.5, 1}) {
		t.Errorf("feature vector of the tie {1,3}: %v", x)
	}
	fit, err := FitPlackettLuce(agentNames(4), outs, PLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkFinite(t, "one game", fit)
	// One game: 1 and 3 only finished ahead of (or tied with each other),
	// 2 never ahead of anyone, 0 in between.
	flags := []string{PLFlagMiddle, PLFlagTop, PLFlagBottom, PLFlagTop}
	for i, r := range fit.Ratings {
		if r.Flag != flags[i] {
			t.Errorf("one game: agent %d flag %q, want %q", i, r.Flag, flags[i])
		}
	}
	// δ_2: one tie in two chances (the last stage could have been one).
	if fit.Connected || len(fit.Ties) != 1 || fit.Ties[0].Flag {
		t.Errorf("one game: connected %v, ties %+v; want false and δ_2 not flagged", fit.Connected, fit.Ties)
	}
	r := fit.Ratings
	if !(r[1].Value > r[0].Value && r[0].Value > r[2].Value) || math.Abs(r[1].Value-r[3].Value) > 1e-9 {
		t.Errorf("one game: ratings %+v, want 1 = 3 > 0 > 2", r)
	}
}

// Degenerate records: an agent that wins (or loses) every game gets a
// finite rating with a wide interval and a flag; agents that never met
// are an error; a match of draws only is finite with δ_2 flagged.
func TestPLDegenerate(t *testing.T) {
	truth := []float64{0, 0.3, -0.3, 0.1}
	names := agentNames(4)
	outs := mixedTournament(truth, nil, 200, 3)
	for i := range outs {
		for s, a := range outs[i].Agents {
			if a == 0 {
				outs[i].Returns[s] = 10 // agent 0 wins every game it plays
			}
		}
	}
	fit, err := FitPlackettLuce(names, outs, PLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkFinite(t, "always wins", fit)
	if fit.Ratings[0].Flag != PLFlagTop || fit.Connected {
		t.Errorf("always wins: %+v", fit.Ratings[0])
	}
	for _, r := range fit.Ratings[1:] {
		if r.Flag != PLFlagBottom {
			t.Errorf("always wins: the others' flags %+v, want bottom (below agent 0 by an unbounded margin)", r)
		}
		if fit.Ratings[0].Lo <= r.Value {
			t.Errorf("always wins: agent 0 %+v not clearly above %+v", fit.Ratings[0], r)
		}
	}
	if w := fit.Ratings[0].Hi - fit.Ratings[0].Lo; w < 500 {
		t.Errorf("always wins: interval width %.0f Elo, want wide (bounded by the prior only)", w)
	}
	for i := range outs {
		for s, a := range outs[i].Agents {
			if a == 0 {
				outs[i].Returns[s] = -10 // and now loses every game
			}
		}
	}
	fit, err = FitPlackettLuce(names, outs, PLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkFinite(t, "always loses", fit)
	if fit.Ratings[0].Flag != PLFlagBottom || fit.Ratings[1].Flag != PLFlagTop {
		t.Errorf("always loses: flags %+v", fit.Ratings)
	}
	if _, err := FitPlackettLuce(names, outs, PLOptions{PriorSD: math.Inf(1)}); !errors.Is(err, errNoMLE) {
		t.Errorf("always loses without a prior: error %v, want that the MLE does not exist", err)
	}

	// Two pairs that never met.
	split := append(twoPlayer(0, 1, 3, 1, 2), twoPlayer(2, 3, 1, 0, 4)...)
	if _, err := FitPlackettLuce(names, split, PLOptions{}); !errors.Is(err, ErrDisconnected) {
		t.Errorf("disconnected: error %v, want ErrDisconnected", err)
	}
	// An agent that never played.
	if _, err := FitPlackettLuce(names[:3], twoPlayer(0, 1, 3, 0, 2), PLOptions{}); !errors.Is(err, ErrDisconnected) {
		t.Errorf("agent without games: error %v, want ErrDisconnected", err)
	}
	// Draws only.
	fit, err = FitPlackettLuce(names[:2], twoPlayer(0, 1, 0, 7, 0), PLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	checkFinite(t, "draws only", fit)
	if len(fit.Ties) != 1 || !fit.Ties[0].Flag || math.Abs(fit.Ratings[0].Value) > 1e-9 || fit.Ratings[0].Flag != "" {
		t.Errorf("draws only: %+v", fit)
	}
}

func TestPLErrors(t *testing.T) {
	good := twoPlayer(0, 1, 2, 0, 1)
	for _, tc := range []struct {
		name  string
		names []string
		outs  []Outcome
		opt   PLOptions
		want  string
	}{
		{"one agent", []string{"a"}, nil, PLOptions{}, "at least 2 agents"},
		{"negative prior", []string{"a", "b"}, good, PLOptions{PriorSD: -1}, "prior standard deviation"},
		{"NaN prior", []string{"a", "b"}, good, PLOptions{PriorSD: math.NaN()}, "prior standard deviation"},
		{"unknown anchor", []string{"a", "b"}, good, PLOptions{Anchor: "c"}, `anchor "c"`},
		{"agent out of range", []string{"a", "b"}, []Outcome{{Agents: []int{0, 2}, Returns: []float64{1, 0}}}, PLOptions{}, "game 1: outcome: agent index 2"},
		{"NaN return", []string{"a", "b"}, []Outcome{{Agents: []int{0, 1}, Returns: []float64{1, math.NaN()}}}, PLOptions{}, "NaN"},
		{"no games", []string{"a", "b"}, nil, PLOptions{}, "never met"},
	} {
		_, err := FitPlackettLuce(tc.names, tc.outs, tc.opt)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
}

// cholInverse against a hand-inverted matrix: [[4, 2], [2, 3]]⁻¹ =
// [[3, -2], [-2, 4]]/8, and a 3×3 one checked by multiplying back.
func TestCholInverse(t *testing.T) {
	inv, ok := cholInverse(2, []float64{4, 2, 2, 3})
	want := []float64{3.0 / 8, -2.0 / 8, -2.0 / 8, 4.0 / 8}
	for i := range want {
		if !ok || math.Abs(inv[i]-want[i]) > 1e-15 {
			t.Fatalf("inverse %v (ok %v), want %v", inv, ok, want)
		}
	}
	a := []float64{5, 1, 2, 1, 4, 1, 2, 1, 6}
	inv, ok = cholInverse(3, a)
	for i := range 3 {
		for j := range 3 {
			s := 0.0
			for p := range 3 {
				s += a[i*3+p] * inv[p*3+j]
			}
			if want := float64(min(1, max(0, 1-abs(i-j)))); !ok || math.Abs(s-want) > 1e-14 {
				t.Errorf("(a a⁻¹)[%d][%d] = %v, want %v", i, j, s, want)
			}
		}
	}
	if _, ok := cholInverse(2, []float64{1, 2, 2, 1}); ok {
		t.Error("indefinite matrix inverted")
	}
}

func abs(x int) int { return max(x, -x) }

// Rate reports the Plackett-Luce fit beside the other columns, and when
// the played games leave agents that never met (a partial tournament),
// the reason instead of failing.
func TestRatePlackettLuce(t *testing.T) {
	names := agentNames(4)
	outs := mixedTournament([]float64{0.5, 0, -0.2, 0.1}, []float64{0, 1, 0.3}, 60, 4)
	results := make([]GameResult, len(outs))
	for i, o := range outs {
		results[i] = GameResult{Seats: o.Agents, Returns: o.Returns, Length: 10}
	}
	res, err := Rate("x", names, results, RateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.PlackettLuce == nil || len(res.PlackettLuce.Ratings) != 4 || res.PlackettLuceError != "" {
		t.Fatalf("Plackett-Luce %+v, error %q", res.PlackettLuce, res.PlackettLuceError)
	}
	checkFinite(t, "Rate", res.PlackettLuce)
	split := []GameResult{{Seats: []int{0, 1}, Returns: []float64{1, 0}}, {Seats: []int{2, 3}, Returns: []float64{0, 1}}}
	res, err = Rate("x", names, split, RateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.PlackettLuce != nil || !strings.Contains(res.PlackettLuceError, "never met") || len(res.Elo) != 4 {
		t.Errorf("disconnected games: Plackett-Luce %+v, error %q, Elo %v", res.PlackettLuce, res.PlackettLuceError, res.Elo)
	}
}

// BenchmarkPlackettLuce fits 8 agents from 2800 games at tables of 4
// (the FFA benchmark's data), without ties and with ties of 2 and 3.
func BenchmarkPlackettLuce(b *testing.B) {
	truth := []float64{0, 0.5, 1, -0.5, 0.2, -1, 0.8, 0.1}
	sched, _ := Schedule(4, len(truth), 40)
	for _, bc := range []struct {
		name  string
		delta []float64
	}{{"noties", nil}, {"ties", []float64{0, 1, 0.4, 0.15}}} {
		b.Run(bc.name, func(b *testing.B) {
			rng := games.NewRand(1)
			outs := make([]Outcome, len(sched))
			for i, seats := range sched {
				outs[i] = sampleDavidsonLuce(rng, truth, bc.delta, seats)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := FitPlackettLuce(agentNames(len(truth)), outs, PLOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(outs)), "games")
		})
	}
}

func TestBinomial(t *testing.T) {
	for _, tc := range [][3]int{{5, 2, 10}, {30, 29, 30}, {30, 15, maxPLAlternatives + 1}, {1000, 500, maxPLAlternatives + 1}, {4, 5, 0}, {6, 0, 1}} {
		if got := binomial(tc[0], tc[1]); got != tc[2] {
			t.Errorf("binomial(%d, %d) = %d, want %d", tc[0], tc[1], got, tc[2])
		}
	}
	// A 40-seat game where 20 tie for first: C(40, 20) possible first
	// stages, an error rather than a hang.
	n := 40
	o := Outcome{Agents: make([]int, n), Returns: make([]float64, n)}
	for i := range o.Agents {
		o.Agents[i] = i
		o.Returns[i] = float64(min(i, 20))
	}
	if _, err := FitPlackettLuce(make([]string, n), []Outcome{o}, PLOptions{}); err == nil || !strings.Contains(err.Error(), "too many possible stages") {
		t.Errorf("40 seats tied: error %v", err)
	}
}

// FuzzPlackettLuce: any small set of games among up to 5 agents, returns
// drawn from a few values so that ties are common, gives either an error
// or finite ratings inside their intervals.
func FuzzPlackettLuce(f *testing.F) {
	f.Add([]byte{3, 0, 1, 2, 2, 1, 0})
	f.Add([]byte{2, 0, 1, 1, 1, 2, 3, 4, 0, 0, 0})
	f.Add([]byte{5, 0, 1, 2, 3, 4, 1, 2, 0, 3, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		const k = 5
		var outs []Outcome
		for len(data) > 0 {
			n := 2 + int(data[0])%4
			data = data[1:]
			if len(data) < n {
				break
			}
			perm := games.NewRand(uint64(data[0])).Perm(k)[:n]
			o := Outcome{Agents: perm, Returns: make([]float64, n)}
			for s := range n {
				o.Returns[s] = float64(data[s] % 3)
			}
			data = data[n:]
			outs = append(outs, o)
		}
		fit, err := FitPlackettLuce(agentNames(k), outs, PLOptions{})
		if err != nil {
			if !errors.Is(err, ErrDisconnected) {
				t.Fatalf("%v on %v", err, outs)
			}
			return
		}
		checkFinite(t, "fuzz", fit)
	})
}

// A hand-solved three-player case where δ_2 is shared by two kinds of
// stage. Base games among agents 0, 1, 2 (then under all 6 relabellings,
// so that by symmetry every β is equal): 6 games with a sole winner, the
// other two tied in 3 of them (t2 = 3) and not in 3 (d2 = 3); 4 games
// with two tied for first (t1 = 4). With equal strengths a first stage is
// a tie with probability δ/(1+δ) (3 pairs against 3 singletons), a
// second one with δ/(2+δ), so the log-likelihood in u = log δ is
// T u - A log(1+e^u) - B log(2+e^u), T = t1+t2 = 7, A = 6+t1 = 10,
// B = 6, per relabelling. Its derivative vanishes where
// (T-A-B)δ² + (3T-2A-B)δ + 2T = -9δ² - 5δ + 14 = 0: δ = 1. The second
// derivative there is -A/4 - 2B/9 = -23/6 per relabelling, -23 in all,
// and the β are orthogonal to u at equal strengths, so log δ has
// standard error 1/√23.
func TestPLSharedTieByHand(t *testing.T) {
	var base []Outcome
	add := func(n int, returns ...float64) {
		for range n {
			base = append(base, Outcome{Agents: []int{0, 1, 2}, Returns: returns})
		}
	}
	add(1, 2, 1, 1) // sole winner, then a tie
	add(1, 1, 2, 1)
	add(1, 1, 1, 2)
	add(1, 2, 1, 0) // sole winner, then decisive
	add(1, 0, 2, 1)
	add(1, 1, 0, 2)
	add(2, 1, 1, 0) // two tied for first
	add(1, 1, 0, 1)
	add(1, 0, 1, 1)
	var outs []Outcome
	for _, p := range [][]int{{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}} {
		for _, o := range base {
			outs = append(outs, Outcome{Agents: []int{p[0], p[1], p[2]}, Returns: o.Returns})
		}
	}
	fit, err := FitPlackettLuce(agentNames(3), outs, PLOptions{PriorSD: math.Inf(1)})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range fit.Ratings {
		if math.Abs(r.Value) > 1e-6 {
			t.Errorf("rating %+v, want 0 by symmetry", r)
		}
	}
	h := 1.959963984540054 / math.Sqrt(23)
	if len(fit.Ties) != 1 || math.Abs(fit.Ties[0].Delta-1) > 1e-9 ||
		math.Abs(fit.Ties[0].Lo-math.Exp(-h)) > 1e-9 || math.Abs(fit.Ties[0].Hi-math.Exp(h)) > 1e-9 {
		t.Errorf("ties %+v, want δ_2 = 1 [%.6f, %.6f]", fit.Ties, math.Exp(-h), math.Exp(h))
	}
}
