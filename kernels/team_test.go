package kernels

import (
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"
)

// peakTask records the most parts running at once.
type peakTask struct{ now, peak atomic.Int32 }

func (c *peakTask) RunPart(int) {
	n := c.now.Add(1)
	for {
		old := c.peak.Load()
		if n <= old || c.peak.CompareAndSwap(old, n) {
			break
		}
	}
	time.Sleep(2 * time.Millisecond) // long enough for the other threads to pick parts up
	c.now.Add(-1)
}

// A team's budget bounds its own calls, whatever the package default,
// and leaves the default (and other teams) alone.
func TestTeamBudget(t *testing.T) {
	defer SetThreads(SetThreads(4))
	for _, tc := range []struct{ team, want int }{{1, 1}, {2, 2}, {3, 3}} {
		team := NewTeam(tc.team)
		if team.Threads() != tc.team {
			t.Errorf("NewTeam(%d).Threads() = %d", tc.team, team.Threads())
		}
		c := &peakTask{}
		team.Parallel(16, c)
		if p := int(c.peak.Load()); p > tc.want {
			t.Errorf("team of %d: %d parts ran at once", tc.team, p)
		}
		if Threads() != 4 {
			t.Fatalf("a team changed the package default to %d", Threads())
		}
	}
	// The zero team follows the package default.
	if (Team{}).Threads() != 4 || NewTeam(0).Threads() != 4 {
		t.Errorf("zero team: %d threads, want the default 4", Team{}.Threads())
	}
	if NewTeam(1000).Threads() != maxThreads {
		t.Errorf("NewTeam(1000) = %d threads, want the cap %d", NewTeam(1000).Threads(), maxThreads)
	}
}

// A team's kernels compute what the package functions compute: the
// budget only changes how the work is split (whose results do not depend
// on it).
func TestTeamKernelsMatch(t *testing.T) {
	defer SetThreads(SetThreads(4))
	rng := rand.New(rand.NewPCG(1, 2))
	fill := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = rng.Float32()*2 - 1
		}
		return x
	}
	const batch, cin, h, w, cout = 8, 32, 8, 8, 32
	src, wts, bias := fill(batch*h*w*cin), fill(9*cin*cout), fill(cout)
	u := make([]float32, 16*cin*cout)
	WinogradWeights(wts, cin, cout, u)
	m := batch * h * w
	want := make([]float32, m*cout)
	Conv3x3BiasAct(src, batch, cin, h, w, wts, cout, bias, nil, true, want)
	wantW := make([]float32, m*cout)
	Conv3x3Winograd(src, batch, cin, h, w, u, cout, bias, nil, true, wantW)
	a, b := fill(m*cin), fill(cin*cout)
	wantG := make([]float32, m*cout)
	GemmBiasAct(m, cout, cin, a, cin, b, cout, bias, nil, true, wantG, cout)
	for _, n := range []int{1, 2, 3} {
		team := NewTeam(n)
		got := make([]float32, m*cout)
		team.Conv3x3BiasAct(src, batch, cin, h, w, wts, cout, bias, nil, true, got)
		same(t, "Conv3x3BiasAct", n, got, want)
		team.Conv3x3Winograd(src, batch, cin, h, w, u, cout, bias, nil, true, got)
		same(t, "Conv3x3Winograd", n, got, wantW)
		team.GemmBiasAct(m, cout, cin, a, cin, b, cout, bias, nil, true, got, cout)
		same(t, "GemmBiasAct", n, got, wantG)
	}
}

func same(t *testing.T, fn string, n int, got, want []float32) {
	t.Helper()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%s on a team of %d: [%d] = %g, package function %g", fn, n, i, got[i], want[i])
		}
	}
}
