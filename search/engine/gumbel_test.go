package engine

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search"
)

// banditGame is a one-player, one-move game: action a ends the game with
// return ret[a]. Every root child is terminal, so Q(a) = ret[a] exactly
// and the search's statistics depend only on how the root actions are
// chosen.
type banditGame struct{ ret []float64 }

type banditState struct {
	g    *banditGame
	done bool
	a    games.Action
}

func (g *banditGame) Type() games.Type {
	return games.Type{Name: "bandit", Dynamics: games.Sequential, Chance: games.Deterministic,
		Information: games.PerfectInformation, Utility: games.GeneralSum, MinPlayers: 1, MaxPlayers: 1, MinReturn: -1, MaxReturn: 1}
}
func (g *banditGame) Spec() string                 { return "bandit" }
func (g *banditGame) NumPlayers() int              { return 1 }
func (g *banditGame) NumActions() int              { return len(g.ret) }
func (g *banditGame) MaxGameLength() int           { return 1 }
func (g *banditGame) ObservationShape() []int      { return []int{1} }
func (g *banditGame) NewInitialState() games.State { return &banditState{g: g} }
func (g *banditGame) ParseState(string) (games.State, error) {
	return nil, fmt.Errorf("bandit: no notation")
}
func (s *banditState) Game() games.Game                   { return s.g }
func (s *banditState) IsTerminal() bool                   { return s.done }
func (s *banditState) Apply(a games.Action)               { s.done, s.a = true, a }
func (s *banditState) Clone() games.State                 { c := *s; return &c }
func (s *banditState) CloneInto(dst games.State)          { *dst.(*banditState) = *s }
func (s *banditState) Hash() uint64                       { return uint64(s.a) + 1 }
func (s *banditState) Observation(_ int, dst []float32)   { dst[0] = 0 }
func (s *banditState) ActionString(a games.Action) string { return strconv.Itoa(int(a)) }
func (s *banditState) ParseAction(x string) (games.Action, error) {
	n, err := strconv.Atoi(x)
	return games.Action(n), err
}
func (s *banditState) String() string        { return fmt.Sprint(s.done, s.a) }
func (s *banditState) Returns(dst []float64) { dst[0] = s.g.ret[s.a] }
func (s *banditState) CurrentPlayer() int {
	if s.done {
		return games.TerminalPlayer
	}
	return 0
}
func (s *banditState) MoveNumber() int {
	if s.done {
		return 1
	}
	return 0
}
func (s *banditState) Legal(dst games.Mask) {
	dst.Clear()
	if !s.done {
		for a := range s.g.ret {
			dst.Set(games.Action(a))
		}
	}
}

// fixedNet is a backend with the same policy logits and value for every
// input.
type fixedNet struct {
	logits []float32
	value  float32
}

func (f *fixedNet) Name() string        { return "fixed" }
func (f *fixedNet) Shape() (int, int)   { return 1, len(f.logits) }
func (f *fixedNet) PreferredBatch() int { return 8 }
func (f *fixedNet) MaxBatch() int       { return 64 }
func (f *fixedNet) Evaluate(_ context.Context, batch int, _, policy, value []float32) error {
	for i := range batch {
		copy(policy[i*len(f.logits):], f.logits)
		value[i] = f.value
	}
	return nil
}

// The bandit's 16 arms: returns (exact in fixed point) and network logits.
var (
	banditRet    = []float64{-1, 0.75, 0.5, -0.25, 1, -0.5, 0, 0.25, -0.75, 0.875, -0.125, 0.375, -0.875, 0.625, 0.125, -0.375}
	banditLogits = []float32{0.3, -0.2, 1.1, 0, -0.7, 0.5, 0.9, -1.3, 0.2, -0.4, 0.6, 0.1, -0.9, 0.4, -0.1, 0.7}
	banditValue  = float32(0.25)
)

// gumbelSearch runs one Gumbel search of the bandit with budget n over m
// sampled actions (leaves in flight per step) and returns the searcher.
func gumbelSearch(t *testing.T, m, n, leaves int, seed uint64) *Searcher {
	t.Helper()
	g := &banditGame{ret: banditRet}
	e, err := New(g, &fixedNet{logits: banditLogits, value: banditValue}, Options{Workers: 1, Batch: 8, Wait: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	o := search.DefaultOptions()
	o.Rule, o.Sims, o.ExpandVisits = search.PUCT, n, 0
	s, err := NewSearcher(e, SearchOptions{Search: o, Leaves: leaves, Gumbel: GumbelOptions{M: m}}, seed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Search(context.Background(), g.NewInitialState(), 0); err != nil {
		t.Fatal(err)
	}
	return s
}

// paperHalving is the test's own sequential halving (Danihelka et al.
// 2022, Algorithm 2 with mctx's visit schedule) on the bandit, from the
// Gumbel noise gn: the visits per arm, the arm played, and the improved
// policy softmax(logits + sigma(completed Q)).
func paperHalving(gn []float64, m, n int) (visits []int, played int, improved []float64) {
	K := len(banditRet)
	logits := make([]float64, K) // log softmax of the network's logits
	var z float64
	for _, l := range banditLogits {
		z += math.Exp(float64(l))
	}
	pi := make([]float64, K)
	for a, l := range banditLogits {
		pi[a] = math.Exp(float64(l)) / z
		logits[a] = math.Log(pi[a])
	}
	visits = make([]int, K)
	sigma := func() []float64 {
		N, maxN := 0, 0
		var piSum, piQ float64
		for a, v := range visits {
			if v > 0 {
				N += v
				maxN = max(maxN, v)
				piSum += pi[a]
				piQ += pi[a] * banditRet[a]
			}
		}
		vmix := float64(banditValue)
		if N > 0 {
			vmix = (vmix + float64(N)*piQ/piSum) / float64(N+1)
		}
		cq := make([]float64, K)
		lo, hi := math.Inf(1), math.Inf(-1)
		for a := range cq {
			cq[a] = vmix
			if visits[a] > 0 {
				cq[a] = banditRet[a]
			}
			lo, hi = math.Min(lo, cq[a]), math.Max(hi, cq[a])
		}
		out := make([]float64, K)
		for a := range out {
			out[a] = (50 + float64(maxN)) * 1.0 * (cq[a] - lo) / math.Max(hi-lo, 1e-8)
		}
		return out
	}
	byScore := func(acts []int, score func(a int) float64) {
		slices.SortStableFunc(acts, func(a, b int) int {
			if sa, sb := score(a), score(b); sa != sb {
				if sa > sb {
					return -1
				}
				return 1
			}
			return a - b
		})
	}
	rem := make([]int, K)
	for a := range rem {
		rem[a] = a
	}
	byScore(rem, func(a int) float64 { return gn[a] + logits[a] })
	rem = rem[:m]
	log2m := int(math.Ceil(math.Log2(float64(m))))
	used := 0
	for used < n {
		per := n
		if m > 1 {
			per = max(1, n/(log2m*len(rem)))
		}
		for range per {
			for _, a := range rem {
				if used < n {
					visits[a]++
					used++
				}
			}
		}
		if used == n {
			break
		}
		s := sigma()
		byScore(rem, func(a int) float64 { return gn[a] + logits[a] + s[a] })
		if len(rem) > 2 {
			rem = rem[:max(2, len(rem)/2)]
		}
	}
	s := sigma()
	byScore(rem, func(a int) float64 { return gn[a] + logits[a] + s[a] })
	most := 0
	for _, a := range rem {
		most = max(most, visits[a])
	}
	for _, a := range rem {
		if visits[a] == most {
			played = a
			break
		}
	}
	improved = make([]float64, K)
	var sum float64
	for a := range improved {
		improved[a] = math.Exp(logits[a] + s[a])
		sum += improved[a]
	}
	for a := range improved {
		improved[a] /= sum
	}
	return visits, played, improved
}

// Sequential halving gives every arm exactly the visits of the paper's
// schedule and plays the argmax of g + logits + sigma(q), both computed
// independently from the Gumbel noise the search drew.
func TestGumbelSequentialHalving(t *testing.T) {
	changed := false
	for _, c := range []struct{ m, n, leaves int }{
		{16, 100, 1}, {16, 100, 4}, {16, 64, 1}, {8, 200, 3}, {4, 7, 1}, {5, 50, 2}, {2, 33, 1},
	} {
		for seed := uint64(1); seed <= 6; seed++ {
			s := gumbelSearch(t, c.m, c.n, c.leaves, seed)
			gb := s.jobs[0].gumbel
			wantV, wantA, _ := paperHalving(gb.g, c.m, c.n)
			stats := s.jobs[0].tree.RootStats(0, nil)
			got := make([]int, len(banditRet))
			for _, x := range stats {
				got[x.Action] = x.Visits
			}
			if !slices.Equal(got, wantV) {
				t.Errorf("m=%d n=%d leaves=%d seed %d: visits %v, want %v", c.m, c.n, c.leaves, seed, got, wantV)
			}
			a := s.Choose(stats, 0)
			if int(a) != wantA {
				t.Errorf("m=%d n=%d leaves=%d seed %d: played %d, want %d", c.m, c.n, c.leaves, seed, a, wantA)
			}
			top := 0
			for b := range banditRet {
				if gb.g[b]+gb.logits[b] > gb.g[top]+gb.logits[top] {
					top = b
				}
			}
			changed = changed || int(a) != top
		}
	}
	if !changed {
		t.Error("the search always played argmax(g + logits): the Q term never mattered")
	}
}

// The phase schedule of m = 16 over 100 simulations (mctx's
// get_sequence_of_considered_visits): 16 x 1, 8 x 3, 4 x 6, then 2 x 12
// twice, the last phase cut to 12 simulations.
func TestGumbelPhaseVisits(t *testing.T) {
	var got []int
	k, used := 16, 0
	for used < 100 {
		per := phaseVisits(100, 4, k)
		got = append(got, per)
		used += per * k
		k = max(2, k/2)
	}
	if want := []int{1, 3, 6, 12, 12}; !slices.Equal(got, want) {
		t.Errorf("visits per action by phase %v, want %v", got, want)
	}
	if phaseVisits(1000, 0, 1) != 1000 {
		t.Error("m = 1: the one action must take the whole budget")
	}
}

// With m = 1 the search spends the whole budget on argmax(g + logits)
// and plays it, whatever the arms' returns.
func TestGumbelSingleAction(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		s := gumbelSearch(t, 1, 5000, 2, seed)
		gb := s.jobs[0].gumbel
		top := 0
		for b := range banditRet {
			if gb.g[b]+gb.logits[b] > gb.g[top]+gb.logits[top] {
				top = b
			}
		}
		stats := s.jobs[0].tree.RootStats(0, nil)
		if stats[0].Action != games.Action(top) || stats[0].Visits != 5000 {
			t.Errorf("seed %d: %d visits on %d, want all 5000 on %d", seed, stats[0].Visits, stats[0].Action, top)
		}
		if a := s.Choose(stats, 0); a != games.Action(top) {
			t.Errorf("seed %d: played %d, want %d", seed, a, top)
		}
	}
}

// The improved policy is softmax(logits + sigma(completed Q)) with v_mix
// for unvisited arms: it sums to 1 and matches the hand computation.
func TestGumbelImprovedPolicy(t *testing.T) {
	for _, m := range []int{4, 16} {
		s := gumbelSearch(t, m, 40, 1, 3)
		gb := s.jobs[0].gumbel
		_, _, want := paperHalving(gb.g, m, 40)
		got := make([]float32, len(banditRet))
		if !s.jobs[0].ImprovedPolicy(got) {
			t.Fatal("ImprovedPolicy reports no Gumbel search")
		}
		var sum float64
		for a := range got {
			sum += float64(got[a])
			if math.Abs(float64(got[a])-want[a]) > 1e-5 {
				t.Errorf("m=%d: improved[%d] = %v, want %v", m, a, got[a], want[a])
			}
		}
		if math.Abs(sum-1) > 1e-5 {
			t.Errorf("m=%d: improved policy sums to %v", m, sum)
		}
	}
}

// K trees: the merged improved policy is the mean of the trees' and the
// move is the majority choice (ties: the larger merged policy).
func TestMergeGumbel(t *testing.T) {
	var jobs []*Job
	for seed := uint64(1); seed <= 3; seed++ {
		jobs = append(jobs, gumbelSearch(t, 4, 24, 1, seed).jobs[0])
	}
	K := len(banditRet)
	mean := make([]float64, K)
	votes := make([]int, K)
	one := make([]float32, K)
	for _, j := range jobs {
		j.ImprovedPolicy(one)
		for a, p := range one {
			mean[a] += float64(p) / 3
		}
		a, _ := j.GumbelAction()
		votes[a]++
	}
	pol := make([]float32, K)
	got, ok := MergeGumbel(jobs, pol)
	if !ok {
		t.Fatal("MergeGumbel: not ok")
	}
	for a := range pol {
		if math.Abs(float64(pol[a])-mean[a]) > 1e-6 {
			t.Errorf("merged policy[%d] = %v, want %v", a, pol[a], mean[a])
		}
	}
	best := 0
	for a := range votes {
		if votes[a] > votes[best] || (votes[a] == votes[best] && mean[a] > mean[best]) {
			best = a
		}
	}
	if int(got) != best {
		t.Errorf("merged move %d, want %d (votes %v)", got, best, votes)
	}
}

// Gumbel search refuses tree reuse, and Settings turn it on with
// gumbelm 0 meaning 16 and root Dirichlet noise off.
func TestGumbelSettings(t *testing.T) {
	st := DefaultSettings()
	if st.Gumbel || st.SearchOptions().Gumbel.M != 0 {
		t.Fatal("gumbel must be off by default")
	}
	st.Gumbel, st.Dir = true, 0.3
	o := st.SearchOptions()
	if o.Gumbel.M != DefaultGumbelM || o.Search.DirichletA != 0 {
		t.Errorf("gumbel settings: M %d, Dirichlet alpha %v", o.Gumbel.M, o.Search.DirichletA)
	}
	g := &banditGame{ret: banditRet}
	e, err := New(g, &fixedNet{logits: banditLogits}, Options{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	o.Search.Reuse = true
	if _, err := NewSearcher(e, o, 1); err == nil {
		t.Error("gumbel with reuse: no error")
	}
}
