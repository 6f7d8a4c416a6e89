package search

import (
	"math"
	"sort"

	"github.com/canopy-go/canopy/games"
)

// ActionStat is the root statistics of one action.
type ActionStat struct {
	Action games.Action
	Visits int
	Q      float64 // mean value for the choosing player, in [-1, 1]; 0 when unvisited
	Prior  float32 // prior (PUCT) or heuristic value (progressive bias)
	// AmafVisits and AmafQ are the AMAF statistics (RAVE family).
	AmafVisits int
	AmafQ      float64
	// Strategy is the player's average strategy for this action at a
	// simultaneous root searched with simsel=exp3/rm (the probabilities
	// of the player's actions sum to 1); 0 otherwise.
	Strategy float64
}

// MeanQ is the value of the node whose actions stats describes, for the
// player who chooses there: the visit-weighted mean of the actions' Q,
// clamped to [-1, 1]; ok is false when no action was visited.
func MeanQ(stats []ActionStat) (q float64, ok bool) {
	var sum, n float64
	for _, x := range stats {
		sum += x.Q * float64(x.Visits)
		n += float64(x.Visits)
	}
	if n == 0 {
		return 0, false
	}
	return max(-1, min(1, sum/n)), true
}

// RootStats appends the statistics of player's actions at the root to dst
// (player is ignored at sequential nodes), sorted by decreasing visits.
// Call it after Search, not concurrently with it.
func (t *Tree) RootStats(player int, dst []ActionStat) []ActionStat {
	if t.root == NilNode {
		return dst
	}
	nd := &t.a.nodes[t.root]
	if nd.state != expanded {
		return dst
	}
	first, cnt := nd.firstEdge, nd.numEdges
	var strat float64 // sum of the cumulative strategy (bandit roots)
	if nd.player == games.SimultaneousPlayer {
		first, cnt = simSegment(t.a, nd, player, t.players)
		if t.opt.SimSel != SimUCB {
			for i := first; i < first+cnt; i++ {
				strat += float64(t.a.ext[i].amafW)
			}
		}
	}
	start := len(dst)
	for i := first; i < first+cnt; i++ {
		h := &t.a.hot[i]
		st := ActionStat{Action: t.a.edges[i].action, Visits: int(h.n), Prior: h.prior}
		if h.n > 0 {
			st.Q = float64(h.w) / valueScale / float64(h.n)
		}
		if len(t.a.ext) > 0 {
			x := &t.a.ext[i]
			st.AmafVisits = int(x.amafN)
			if x.amafN > 0 {
				st.AmafQ = float64(x.amafW) / valueScale / float64(x.amafN)
			}
			if strat > 0 {
				st.Strategy = float64(x.amafW) / strat
			}
		}
		dst = append(dst, st)
	}
	sortStats(dst[start:])
	return dst
}

// SortStats sorts root statistics by decreasing visits, then value, then
// action id (the order RootStats and Agent.Stats return).
func SortStats(s []ActionStat) { sortStats(s) }

func sortStats(s []ActionStat) {
	sort.SliceStable(s, func(i, j int) bool {
		if s[i].Visits != s[j].Visits {
			return s[i].Visits > s[j].Visits
		}
		if s[i].Q != s[j].Q {
			return s[i].Q > s[j].Q
		}
		return s[i].Action < s[j].Action
	})
}

// Choose picks the move to play from root statistics. When the stats carry
// an average strategy (a simultaneous root under simsel=exp3/rm) the move
// is sampled from it (SimFinalSample) or is its most probable action
// (SimFinalMax, ties by visits then lowest id). Otherwise: for positions with
// moveNumber < TempPlies it samples proportionally to visits^(1/Temp);
// else the most visited action (ties by Q, then lowest id), or with
// FinalValue the best Q among visited actions.
func (t *Tree) Choose(stats []ActionStat, moveNumber int) games.Action {
	if len(stats) == 0 {
		return games.NoAction
	}
	o := &t.opt
	var strat float64
	for _, s := range stats {
		strat += s.Strategy
	}
	if strat > 0 {
		if o.SimFinal == SimFinalSample {
			r := t.rng.Float64() * strat
			last := 0
			for i, s := range stats {
				if s.Strategy > 0 {
					last = i
					if r -= s.Strategy; r < 0 {
						return s.Action
					}
				}
			}
			return stats[last].Action
		}
		best := 0
		for i, s := range stats {
			b := stats[best]
			if s.Strategy > b.Strategy || (s.Strategy == b.Strategy && (s.Visits > b.Visits || (s.Visits == b.Visits && s.Action < b.Action))) {
				best = i
			}
		}
		return stats[best].Action
	}
	if moveNumber < o.TempPlies && o.Temp > 0 {
		var sum float64
		for _, s := range stats {
			sum += math.Pow(float64(s.Visits), 1/o.Temp)
		}
		if sum > 0 {
			r := t.rng.Float64() * sum
			for _, s := range stats {
				r -= math.Pow(float64(s.Visits), 1/o.Temp)
				if r < 0 {
					return s.Action
				}
			}
		}
	}
	best := 0
	for i, s := range stats {
		b := stats[best]
		if o.Final == FinalValue {
			if s.Visits > 0 && (b.Visits == 0 || s.Q > b.Q || (s.Q == b.Q && s.Visits > b.Visits)) {
				best = i
			}
			continue
		}
		if s.Visits > b.Visits || (s.Visits == b.Visits && (s.Q > b.Q || (s.Q == b.Q && s.Action < b.Action))) {
			best = i
		}
	}
	return stats[best].Action
}

// addNoise mixes Dirichlet(alpha) noise into the root priors:
// P = (1-eps)*P + eps*eta.
func (t *Tree) addNoise(nd *node) {
	o := &t.opt
	edges := t.a.hot[nd.firstEdge : nd.firstEdge+nd.numEdges]
	var sum float64
	if cap(t.noise) < len(edges) {
		t.noise = make([]float64, t.game.NumActions())
	}
	noise := t.noise[:len(edges)]
	for i := range noise {
		noise[i] = gamma(t.rng, o.DirichletA)
		sum += noise[i]
	}
	if sum <= 0 {
		return
	}
	for i := range edges {
		edges[i].prior = float32((1-o.DirichletEps)*float64(edges[i].prior) + o.DirichletEps*noise[i]/sum)
	}
}

// gamma draws from Gamma(alpha, 1) (Marsaglia & Tsang 2000; alpha < 1 by
// the boost Gamma(a) = Gamma(a+1) * U^(1/a)).
func gamma(rng interface {
	Float64() float64
	NormFloat64() float64
}, alpha float64) float64 {
	if alpha < 1 {
		return gamma(rng, alpha+1) * math.Pow(rng.Float64(), 1/alpha)
	}
	d := alpha - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := rng.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}
