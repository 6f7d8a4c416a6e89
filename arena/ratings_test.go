package arena

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
)

// twoPlayer returns n outcomes of a game between agents a and b with the
// given numbers of wins for a, draws and wins for b (seats alternate).
func twoPlayer(a, b, winsA, draws, winsB int) []Outcome {
	var out []Outcome
	add := func(ra, rb float64, n int) {
		for i := range n {
			if i%2 == 0 {
				out = append(out, Outcome{Agents: []int{a, b}, Returns: []float64{ra, rb}})
			} else {
				out = append(out, Outcome{Agents: []int{b, a}, Returns: []float64{rb, ra}})
			}
		}
	}
	add(1, -1, winsA)
	add(0, 0, draws)
	add(-1, 1, winsB)
	return out
}

// 75% score <=> odds 3 <=> Elo difference 400*log10(3) = 190.848...
var elo75 = 400 * math.Log10(3)

func TestEloTwoAgentsByHand(t *testing.T) {
	for _, tc := range []struct {
		name                string
		winsA, draws, winsB int
	}{
		{"75 wins 25 losses", 75, 0, 25},
		{"50 wins 50 draws", 50, 50, 0},
		{"3 wins 1 loss", 3, 0, 1},
	} {
		outs := twoPlayer(0, 1, tc.winsA, tc.draws, tc.winsB)
		r, err := FitElo(2, outs, math.Inf(1))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if d := r[0] - r[1]; math.Abs(d-elo75) > 1e-6 {
			t.Errorf("%s: MLE Elo difference %.6f, want %.6f", tc.name, d, elo75)
		}
		if math.Abs(r[0]+r[1]) > 1e-9 {
			t.Errorf("%s: ratings %v do not have mean 0", tc.name, r)
		}
		// Bradley-Terry (no prior) and ILSR treat a draw as half a win each
		// way too, so both give log-odds ln 3 between the two.
		bt, err := FitBradleyTerry([]string{"a", "b"}, outs, math.Inf(1))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		il, err := FitILSR(2, outs, 0)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if d := bt[0].Value - bt[1].Value; math.Abs(d-math.Log(3)) > 1e-6 {
			t.Errorf("%s: Bradley-Terry difference %.6f, want ln 3", tc.name, d)
		}
		if d := il[0] - il[1]; math.Abs(d-math.Log(3)) > 1e-6 {
			t.Errorf("%s: ILSR difference %.6f, want ln 3", tc.name, d)
		}
	}
	// The default weak prior moves the 100-game estimate by well under an
	// Elo point (hand estimate: 0.15).
	r, err := FitElo(2, twoPlayer(0, 1, 75, 0, 25), EloPriorSD)
	if err != nil {
		t.Fatal(err)
	}
	if d := r[0] - r[1]; d > elo75 || d < elo75-0.5 {
		t.Errorf("weak-prior Elo difference %.3f, want just below %.3f", d, elo75)
	}
}

// Three agents whose pairwise scores fit Bradley-Terry exactly (A-B 75%,
// B-C 75%, A-C 90% = odds 9 = 3*3): the MLE reproduces them exactly, so
// Elo is (+190.8, 0, -190.8) and log-strengths (ln 3, 0, -ln 3).
func consistentThree() []Outcome {
	var outs []Outcome
	outs = append(outs, twoPlayer(0, 1, 75, 0, 25)...)
	outs = append(outs, twoPlayer(1, 2, 150, 0, 50)...)
	outs = append(outs, twoPlayer(0, 2, 90, 0, 10)...)
	return outs
}

func TestConsistentThreeByHand(t *testing.T) {
	outs := consistentThree()
	elo, err := FitElo(3, outs, math.Inf(1))
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{elo75, 0, -elo75}
	for i := range want {
		if math.Abs(elo[i]-want[i]) > 1e-6 {
			t.Errorf("Elo %v, want %v", elo, want)
			break
		}
	}
	names := []string{"a", "b", "c"}
	bt, err := FitBradleyTerry(names, outs, math.Inf(1))
	if err != nil {
		t.Fatal(err)
	}
	ilsr, err := FitILSR(3, outs, 0)
	if err != nil {
		t.Fatal(err)
	}
	ln3 := math.Log(3)
	for i, w := range []float64{ln3, 0, -ln3} {
		if math.Abs(bt[i].Value-w) > 1e-6 {
			t.Errorf("Bradley-Terry MLE %d = %.8f, want %.8f", i, bt[i].Value, w)
		}
		if math.Abs(ilsr[i]-w) > 1e-6 {
			t.Errorf("ILSR %d = %.8f, want %.8f", i, ilsr[i], w)
		}
	}
}

// Laplace interval, two agents, no prior: the Fisher information of the
// log-odds d from n games at p = 3/4 is n p (1-p) = 100*3/16 = 18.75, and
// b_0 = d/2, so sd(b_0) = 1/(2*sqrt(18.75)) = 0.11547.
func TestLaplaceIntervalByHand(t *testing.T) {
	bt, err := FitBradleyTerry([]string{"a", "b"}, twoPlayer(0, 1, 75, 0, 25), math.Inf(1))
	if err != nil {
		t.Fatal(err)
	}
	half := 1.959963984540054 / (2 * math.Sqrt(18.75))
	if got := bt[0].Hi - bt[0].Value; math.Abs(got-half) > 1e-6 {
		t.Errorf("interval half-width %.6f, want %.6f", got, half)
	}
	// With a prior sd s the MAP solves 75 - 100 sigma(2b) - b/s^2 = 0;
	// for s = 0.5 the estimate must lie strictly between 0 and ln(3)/2.
	bt, err = FitBradleyTerry([]string{"a", "b"}, twoPlayer(0, 1, 75, 0, 25), 0.5)
	if err != nil {
		t.Fatal(err)
	}
	b := bt[0].Value
	if g := 75 - 100/(1+math.Exp(-2*b)) - b/0.25; math.Abs(g) > 1e-6 || b <= 0 || b >= math.Log(3)/2 {
		t.Errorf("MAP b = %v, gradient %v", b, g)
	}
}

// samplePL draws a Plackett-Luce ranking of the seated agents with the
// Gumbel-max construction (rank by strength + Gumbel noise), returning
// returns = minus the rank.
func samplePL(rng *rand.Rand, beta []float64, seats []int) Outcome {
	ret := make([]float64, len(seats))
	key := make([]float64, len(seats))
	for s, a := range seats {
		key[s] = beta[a] - math.Log(-math.Log(rng.Float64()))
	}
	for s := range seats {
		for o := range seats {
			if key[o] > key[s] {
				ret[s]--
			}
		}
	}
	return Outcome{Agents: slices.Clone(seats), Returns: ret}
}

func synthetic(t *testing.T, beta []float64, n, perTable int, seed uint64) []Outcome {
	sched, err := Schedule(n, len(beta), perTable)
	if err != nil {
		t.Fatal(err)
	}
	rng := games.NewRand(seed)
	outs := make([]Outcome, len(sched))
	for i, seats := range sched {
		outs[i] = samplePL(rng, beta, seats)
	}
	return outs
}

func centred(x []float64) []float64 {
	m := 0.0
	for _, v := range x {
		m += v / float64(len(x))
	}
	out := make([]float64, len(x))
	for i, v := range x {
		out[i] = v - m
	}
	return out
}

// Ground truth recovery: data sampled from known log-strengths, each
// method must recover every centred log-strength within tol (about five
// standard errors: with ~2000+ comparisons per agent at p ≈ 0.3..0.7 the
// standard error is ≈ 1/sqrt(2000*0.2) = 0.05) and the true ordering.
func TestRecoverGroundTruth(t *testing.T) {
	truth := []float64{0, 0.5, 1.2, -0.7, 0.2}
	names := []string{"a", "b", "c", "d", "e"}
	want := centred(truth)
	for _, tc := range []struct {
		name     string
		players  int
		perTable int
	}{
		{"bradley-terry 2 players", 2, 600},
		{"plackett-luce 3 players", 3, 210},
		{"plackett-luce 4 players", 4, 400},
	} {
		outs := synthetic(t, truth, tc.players, tc.perTable, 7)
		const tol = 0.25
		elo, err := FitElo(len(truth), outs, EloPriorSD)
		if err != nil {
			t.Fatal(err)
		}
		bt, err := FitBradleyTerry(names, outs, BTPriorSD)
		if err != nil {
			t.Fatal(err)
		}
		ilsr, err := FitILSR(len(truth), outs, ILSRAlpha)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][]float64{"elo": make([]float64, len(truth)), "bt": make([]float64, len(truth)), "ilsr": ilsr}
		for i := range truth {
			got["elo"][i] = elo[i] / EloPerNat
			got["bt"][i] = bt[i].Value
		}
		for method, est := range got {
			for i := range want {
				if math.Abs(est[i]-want[i]) > tol {
					t.Errorf("%s, %s: agent %d log-strength %.3f, truth %.3f", tc.name, method, i, est[i], want[i])
				}
				for j := range want {
					if want[i] > want[j]+0.25 && est[i] <= est[j] {
						t.Errorf("%s, %s: agents %d and %d out of order (%v)", tc.name, method, i, j, est)
					}
				}
			}
		}
	}
}

// ILSR's fixed point is the Plackett-Luce maximum-likelihood estimate, so
// on the same data it must agree with the Newton MLE to high precision.
func TestILSRMatchesPlackettLuceMLE(t *testing.T) {
	truth := []float64{0.3, -0.2, 0.8, 0, -1}
	outs := synthetic(t, truth, 4, 12, 11)
	// Add some ties, to exercise tie expansion in both.
	for i := 0; i < len(outs); i += 5 {
		outs[i].Returns[1] = outs[i].Returns[2]
	}
	bt, err := FitBradleyTerry(make([]string, 5), outs, math.Inf(1))
	if err != nil {
		t.Fatal(err)
	}
	ilsr, err := FitILSR(5, outs, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ilsr {
		if math.Abs(ilsr[i]-bt[i].Value) > 1e-7 {
			t.Errorf("agent %d: ILSR %.9f, Newton MLE %.9f", i, ilsr[i], bt[i].Value)
		}
	}
}

// Hand expansion of a three-player outcome with a tie for first place:
// orders (0,1,2) and (1,0,2) with weight 1/2 each.
func TestTieExpansion(t *testing.T) {
	var cs choiceSet
	addRanking(&cs, Outcome{Agents: []int{0, 1, 2}, Returns: []float64{1, 1, 0}}, 1)
	want := map[string]float64{"0,0,1,2": 0.5, "1,1,2": 0.5, "1,0,1,2": 0.5, "0,0,2": 0.5}
	if len(cs.list) != len(want) {
		t.Fatalf("got %d choices %v, want %d", len(cs.list), cs.list, len(want))
	}
	for key, w := range want {
		i, ok := cs.idx[key]
		if !ok || cs.list[i].w != w {
			t.Errorf("choice %s: got %v (present %v), want weight %v", key, cs.list, ok, w)
		}
	}
	// All three tied: six orders, each first-stage winner has weight 1/3.
	cs = choiceSet{}
	addRanking(&cs, Outcome{Agents: []int{4, 5, 6}, Returns: []float64{2, 2, 2}}, 1)
	total := 0.0
	for _, c := range cs.list {
		total += c.w
		if len(c.set) == 3 && math.Abs(c.w-1.0/3) > 1e-12 {
			t.Errorf("first-stage choice %v weight %v, want 1/3", c.set, c.w)
		}
	}
	if math.Abs(total-2) > 1e-12 { // two stages per order
		t.Errorf("total weight %v, want 2", total)
	}
}

// The Laplace intervals of the Bayesian model must cover the true
// (centred) log-strengths about 95% of the time over repeated synthetic
// tournaments; the bounds allow for Monte Carlo error (binomial sd ≈ 1.5%
// at 200 trials x 4 agents) and the mild effect of the prior.
func TestLaplaceCoverage(t *testing.T) {
	truth := []float64{0.4, -0.4, 0.9, -0.9}
	want := centred(truth)
	reps := 200
	if testing.Short() {
		reps = 60
	}
	covered, total := 0, 0
	for r := range reps {
		outs := synthetic(t, truth, 2, 30, uint64(1000+r))
		bt, err := FitBradleyTerry(make([]string, 4), outs, BTPriorSD)
		if err != nil {
			t.Fatal(err)
		}
		for i, b := range bt {
			total++
			if b.Lo <= want[i] && want[i] <= b.Hi {
				covered++
			}
		}
	}
	t.Logf("coverage %d/%d", covered, total)
	if f := float64(covered) / float64(total); f < 0.88 || f > 0.995 {
		t.Errorf("Laplace 95%% intervals covered the truth %.1f%% of the time", 100*f)
	}
}

// Bootstrap percentile intervals for Elo: they contain the estimate, are
// reproducible from the seed, and cover the truth about 95% of the time.
func TestBootstrapElo(t *testing.T) {
	truth := []float64{0.6, 0, -0.6}
	want := centred(truth)
	names := []string{"a", "b", "c"}
	outs := synthetic(t, truth, 2, 40, 3)
	r1, err := BootstrapElo(names, outs, EloPriorSD, 200, 9)
	if err != nil {
		t.Fatal(err)
	}
	r2, _ := BootstrapElo(names, outs, EloPriorSD, 200, 9)
	if !slices.Equal(r1, r2) {
		t.Errorf("bootstrap not reproducible: %v vs %v", r1, r2)
	}
	for _, r := range r1 {
		if !(r.Lo < r.Value && r.Value < r.Hi) {
			t.Errorf("interval %+v does not contain the estimate", r)
		}
		// 120 games: the Elo standard error is about 60-80 points, so the
		// interval is a few hundred points wide at most.
		if r.Hi-r.Lo < 80 || r.Hi-r.Lo > 500 {
			t.Errorf("implausible interval width %+v", r)
		}
	}
	if testing.Short() {
		return
	}
	covered, total := 0, 0
	for rep := range 100 {
		outs := synthetic(t, truth, 2, 40, uint64(5000+rep))
		rs, err := BootstrapElo(names, outs, EloPriorSD, 200, uint64(rep))
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range rs {
			total++
			if w := want[i] * EloPerNat; r.Lo <= w && w <= r.Hi {
				covered++
			}
		}
	}
	t.Logf("coverage %d/%d", covered, total)
	if f := float64(covered) / float64(total); f < 0.85 || f > 0.995 {
		t.Errorf("bootstrap 95%% intervals covered the truth %.1f%% of the time", 100*f)
	}
}

// Elo intervals by hand. Two agents, a beat b 3 times and lost once,
// no prior: the difference is ln 3 nats, each centred rating half of it,
// ±95.42 Elo; the Fisher information of the difference is n·p·(1-p) =
// 4·3/4·1/4 = 0.75, so a centred rating has variance 1/(4·0.75) = 1/3
// nat², a 95% half-width of 1.96·sqrt(1/3)·173.72 = 196.58 Elo.
//
// Two games, both won by a (the "+311 [+311, +311]"): with the
// 1000-Elo prior the maximum x of 2·log σ(2x) - x²/s² (s = 1000 Elo in
// nats) is 311.24 Elo, and the Laplace half-width from the 2x2 Hessian
// 2·p·(1-p)·[[1,-1],[-1,1]] + I/s² is 654.31 Elo (worked in numpy). The
// bootstrap alone gives zero width there (every resample is 2-0).
func TestEloIntervalsByHand(t *testing.T) {
	names := []string{"a", "b"}
	won := Outcome{Agents: []int{0, 1}, Returns: []float64{1, -1}}
	lost := Outcome{Agents: []int{1, 0}, Returns: []float64{1, -1}}
	near := func(x, want, tol float64) bool { return math.Abs(x-want) <= tol }
	r, err := LaplaceElo(names, []Outcome{won, won, won, lost}, math.Inf(1))
	if err != nil {
		t.Fatal(err)
	}
	if !near(r[0].Value, 95.424, 0.01) || !near(r[0].Hi-r[0].Value, 196.577, 0.01) || !near(r[0].Value-r[0].Lo, 196.577, 0.01) || !near(r[1].Value, -95.424, 0.01) {
		t.Errorf("3-1 without prior: %+v; want a at 95.42 ± 196.58 Elo", r)
	}
	two := []Outcome{won, won}
	r, err = BootstrapElo(names, two, EloPriorSD, 200, 1)
	if err != nil {
		t.Fatal(err)
	}
	if !near(r[0].Value, 311.238, 0.05) || !near(r[0].Lo, 311.238-654.311, 0.05) || !near(r[0].Hi, 311.238+654.311, 0.05) {
		t.Errorf("2-0 with the 1000-Elo prior: %+v; want 311.24 in [-343.07, 965.55]", r[0])
	}
	if r[1].Hi-r[1].Lo <= 0 {
		t.Errorf("2-0: b's interval %+v has zero width", r[1])
	}
}

func TestPairwiseTable(t *testing.T) {
	outs := twoPlayer(0, 1, 6, 2, 2)
	// A three-player game: agent 2 first, 0 and 1 tied.
	outs = append(outs, Outcome{Agents: []int{0, 1, 2}, Returns: []float64{0, 0, 1}})
	tab, err := PairwiseTable(3, outs)
	if err != nil {
		t.Fatal(err)
	}
	p := tab[0][1]
	if p.Games != 11 || p.Wins != 6 || p.Draws != 3 || p.Losses != 2 {
		t.Errorf("0 vs 1: %+v", p)
	}
	if q := tab[1][0]; q.Wins != 2 || q.Losses != 6 || q.Draws != 3 {
		t.Errorf("1 vs 0: %+v", q)
	}
	if want := Wilson(7.5, 11); *p.Score != want {
		t.Errorf("score %v, want %v", *p.Score, want)
	}
	if q := tab[2][0]; q.Games != 1 || q.Wins != 1 {
		t.Errorf("2 vs 0: %+v", q)
	}
	if tab[1][1].Score != nil || tab[1][1].Games != 0 {
		t.Errorf("diagonal: %+v", tab[1][1])
	}
}

func TestRatingErrors(t *testing.T) {
	perfect := twoPlayer(0, 1, 10, 0, 0)
	if _, err := FitElo(2, perfect, math.Inf(1)); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("MLE of a perfect record: err = %v", err)
	}
	if _, err := FitILSR(2, perfect, 0); err == nil {
		t.Error("ILSR without regularisation on a perfect record: no error")
	}
	// Finite priors / regularisation keep it finite, with the winner on top.
	elo, err := FitElo(2, perfect, EloPriorSD)
	if err != nil || !(elo[0] > 300) {
		t.Errorf("perfect record with prior: %v, %v", elo, err)
	}
	il, err := FitILSR(2, perfect, ILSRAlpha)
	if err != nil || !(il[0] > 2) {
		t.Errorf("perfect record with alpha: %v, %v", il, err)
	}
	bad := []Outcome{
		{Agents: []int{0, 0}, Returns: []float64{1, 0}},
		{Agents: []int{0, 5}, Returns: []float64{1, 0}},
		{Agents: []int{0}, Returns: []float64{1}},
		{Agents: []int{0, 1}, Returns: []float64{math.NaN(), 0}},
	}
	for _, o := range bad {
		if _, err := FitBradleyTerry([]string{"a", "b"}, []Outcome{o}, 1); err == nil {
			t.Errorf("outcome %+v accepted", o)
		}
		if _, err := PairwiseTable(2, []Outcome{o}); err == nil {
			t.Errorf("outcome %+v accepted by PairwiseTable", o)
		}
	}
	if _, err := FitBradleyTerry([]string{"a", "b"}, perfect, 0); err == nil {
		t.Error("prior sd 0 accepted")
	}
}

func BenchmarkBradleyTerryFFA(b *testing.B) {
	truth := []float64{0, 0.5, 1, -0.5, 0.2, -1, 0.8, 0.1}
	sched, _ := Schedule(4, len(truth), 40)
	rng := games.NewRand(1)
	outs := make([]Outcome, len(sched))
	for i, seats := range sched {
		outs[i] = samplePL(rng, truth, seats)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := FitBradleyTerry(make([]string, len(truth)), outs, BTPriorSD); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(outs)), "games")
}

// Tens of thousands of lopsided games (as an interrupted arena of onestep
// against random gives) still rate: the Newton fit stops where rounding
// stalls it instead of reporting that no estimate exists.
func TestRateManyLopsidedGames(t *testing.T) {
	g := games.MustNew("tictactoe")
	res, err := Tournament(context.Background(), g, TournamentConfig{Agents: []string{"random", "onestep"}, Games: 61441, Seed: 1, Parallel: 2, Bootstrap: 10})
	if err != nil {
		t.Fatal(err)
	}
	if !(res.Elo[1].Value > res.Elo[0].Value+300) {
		t.Errorf("Elo %+v: want onestep far ahead of random", res.Elo)
	}
}
