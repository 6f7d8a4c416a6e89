package engine

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search"
)

// SearchOptions configure a Searcher: PUCT with network priors and
// values, K determinizations for hidden information, optional rollout
// blending.
type SearchOptions struct {
	// Search is the tree configuration. Rule should be PUCT-like
	// (ExpandVisits is forced to 0: nodes expand when their evaluation
	// comes back, with the network's priors). Sims is the total per move,
	// split over the determinizations.
	Search search.Options
	// Determinize is K: the number of sampled deals per move in
	// hidden-information games (each a tree with Sims/K simulations).
	// 0 means 1; ignored (1) for perfect-information games.
	Determinize int
	// Leaves is the number of leaves each tree keeps in flight.
	Leaves int
	// BlendWeight is the weight of the network value against a rollout
	// of BlendTurns turns (1 = network only).
	BlendWeight float64
	BlendTurns  int
	// BlendCut and BlendCutScale score the rollout where BlendTurns cuts
	// it off (search.NewCut; "" is "zero", 0 for everyone).
	BlendCut      string
	BlendCutScale float64
	// NetVisits is the visit on which a leaf goes to the network; the
	// visits before are valued by the blend's rollout alone
	// (Job.SetNetVisits). 0 and 1: every leaf on its first visit. Above 1
	// it needs a rollout (BlendWeight < 1).
	NetVisits int
	// Gumbel turns on Gumbel root search with sequential halving in every
	// tree (gumbel.go); the zero value keeps PUCT at the root.
	Gumbel GumbelOptions
	// Backup is BackupMaxN ("" too) or BackupParanoid (Job.SetBackup).
	Backup string
}

// Searcher runs batched PUCT searches of single positions on the
// caller's goroutine through a (possibly shared) Engine: it is the search
// behind network agents. Many Searchers on many goroutines share the
// engine's batches. A Searcher is not safe for concurrent use.
type Searcher struct {
	e      *Engine
	g      games.Game
	opt    SearchOptions
	w      *Worker
	jobs   []*Job
	det    bool // resample hidden information per tree
	rng    *rand.Rand
	left   int
	stats  []search.ActionStat
	merged []search.ActionStat
	gpol   []float32 // Gumbel: the merged improved policy
	values []float64 // RootValues
}

// NewSearcher returns a searcher over e with trees seeded from seed.
func NewSearcher(e *Engine, o SearchOptions, seed uint64) (*Searcher, error) {
	g := e.game
	so := o.Search
	so.ExpandVisits = 0
	so.Time = 0
	so.Eval = search.Uniform{} // never called: the engine evaluates
	k := max(o.Determinize, 1)
	_, isRes := g.NewInitialState().(games.Resampler)
	det := isRes && g.Type().Information == games.ImperfectInformation
	if !det {
		k = 1
	}
	if o.Gumbel.M > 0 && so.Reuse {
		return nil, fmt.Errorf("engine: gumbel and reuse exclude each other (sequential halving needs a fresh root)")
	}
	if so.Sims < k {
		return nil, fmt.Errorf("engine: sims = %d, want at least one per determinization (det = %d)", so.Sims, k)
	}
	so.Sims = so.Sims / k
	leaves := max(o.Leaves, 1)
	if so.MaxNodes <= 0 {
		so.MaxNodes = so.Sims + leaves + 16
		if so.Reuse {
			so.MaxNodes = 4*so.Sims + leaves + 16
		}
	}
	s := &Searcher{e: e, g: g, opt: o, det: det, rng: games.NewRand(seed ^ 0x5eed5eed)}
	s.opt.Search = so
	s.w = e.NewWorker()
	ro, err := BlendRollout(g, o)
	if err != nil {
		return nil, err
	}
	for q := range k {
		// Tree q is seeded as the mcts agent seeds its trees, so that an
		// az search and an mcts:sel=puct search with an equivalent
		// evaluator build the same tree.
		t, err := search.New(g, so, seed+uint64(q)*0x632be59bd9b4e019)
		if err != nil {
			return nil, err
		}
		j := s.w.NewJob(leaves, s.jobDone)
		j.SetTree(t, 0)
		j.SetBlend(o.BlendWeight, ro)
		j.SetNetVisits(o.NetVisits)
		j.SetBackup(o.Backup)
		j.SetGumbel(o.Gumbel, seed^uint64(q+1)*0x243f6a8885a308d3)
		s.jobs = append(s.jobs, j)
	}
	return s, nil
}

// BlendRollout returns the rollout that o blends into network values:
// nil when o.BlendWeight is 1, else BlendTurns player turns of random play
// scored by o.BlendCut where they stop.
//
// It is also where o's leaf valuation is checked: NetVisits above 1 needs
// the rollout, and is refused without one.
func BlendRollout(g games.Game, o SearchOptions) (*search.Rollout, error) {
	if !(o.BlendWeight < 1) {
		if o.NetVisits > 1 {
			return nil, fmt.Errorf("engine: netvisits=%d values leaves by the blend's rollout before the network sees them, but blend=1 has no rollout: set blend below 1 (e.g. blend=0.25), or netvisits=1", o.NetVisits)
		}
		return nil, nil
	}
	kind := o.BlendCut
	if kind == "" {
		kind = "zero"
	}
	cut, err := search.NewCut(g, kind, o.BlendCutScale)
	if err != nil {
		return nil, fmt.Errorf("engine: blend: %w", err)
	}
	return &search.Rollout{Turns: o.BlendTurns, Cut: cut}, nil
}

func (s *Searcher) jobDone(*Worker, *Job) { s.left-- }

// RootValues returns every player's value of the last search's root
// (MergeRootValues over the determinizations), or nil before a search.
// The slice is reused by the next call.
func (s *Searcher) RootValues() []float64 {
	if len(s.values) == 0 {
		s.values = make([]float64, s.g.NumPlayers())
	}
	if !MergeRootValues(s.jobs, s.values) {
		return nil
	}
	return s.values
}

// Tree returns the first determinization's tree (for inspection).
func (s *Searcher) Tree() *search.Tree { return s.jobs[0].tree }

// Search searches st for player (who must be to move, or one of the
// players choosing at a simultaneous state: decoupled PUCT, each player's
// priors from its own view, the deals resampled from player's) and
// returns player's root statistics merged over the determinizations,
// sorted by decreasing visits. The returned slice is reused by the next call.
func (s *Searcher) Search(ctx context.Context, st games.State, player int) ([]search.ActionStat, error) {
	if st.IsTerminal() {
		return nil, fmt.Errorf("engine: the game is over")
	}
	if p := st.CurrentPlayer(); !(p == player && p >= 0 || p == games.SimultaneousPlayer && player >= 0 && player < s.g.NumPlayers()) {
		return nil, fmt.Errorf("engine: asked for player %d but %s is to move", player, playerName(p))
	}
	s.left = len(s.jobs)
	for _, j := range s.jobs {
		if s.det {
			st.(games.Resampler).Resample(player, s.rng, j.root)
		} else {
			st.CloneInto(j.root)
		}
		s.w.Start(j, s.opt.Search.Sims)
	}
	s.w.Reset()
	rows := int64(len(s.jobs) * len(s.jobs[0].walkers))
	s.e.running(rows)
	err := s.w.Loop(ctx)
	s.e.stopped(rows)
	if err != nil {
		return nil, err
	}
	if s.left != 0 {
		return nil, fmt.Errorf("engine: %d searches did not finish", s.left)
	}
	s.stats, s.merged = MergeRootStats(s.jobs, player, s.stats, s.merged)
	search.SortStats(s.merged)
	return s.merged, nil
}

// Choose picks the move from stats (as returned by Search) with the
// first tree's final-move rule (visits or value, temperature schedule),
// or under Gumbel search the move of the last search's sequential halving
// (MergeGumbel).
func (s *Searcher) Choose(stats []search.ActionStat, moveNumber int) games.Action {
	if s.opt.Gumbel.M > 0 {
		if len(s.gpol) == 0 {
			s.gpol = make([]float32, s.g.NumActions())
		}
		if a, ok := MergeGumbel(s.jobs, s.gpol); ok {
			return a
		}
	}
	return s.jobs[0].tree.Choose(stats, moveNumber)
}

// MergeRootStats merges the root statistics of jobs' trees for player
// into merged (reused): visits add up, Q is visit-weighted and priors are
// averaged. scratch is reused too; both are returned. With one job the
// merged statistics are that tree's own.
func MergeRootStats(jobs []*Job, player int, scratch, merged []search.ActionStat) (_, _ []search.ActionStat) {
	merged = merged[:0]
	if len(jobs) == 1 {
		merged = jobs[0].tree.RootStats(player, merged)
		return scratch, merged
	}
	for _, j := range jobs {
		scratch = j.tree.RootStats(player, scratch[:0])
		for _, x := range scratch {
			k := -1
			for i := range merged {
				if merged[i].Action == x.Action {
					k = i
					break
				}
			}
			if k < 0 {
				merged = append(merged, search.ActionStat{Action: x.Action})
				k = len(merged) - 1
			}
			m := &merged[k]
			if x.Visits > 0 {
				m.Q = (m.Q*float64(m.Visits) + x.Q*float64(x.Visits)) / float64(m.Visits+x.Visits)
			}
			m.Visits += x.Visits
			m.Prior += x.Prior / float32(len(jobs))
		}
	}
	return scratch, merged
}

func playerName(p int) string {
	switch p {
	case games.ChancePlayer:
		return "chance"
	case games.SimultaneousPlayer:
		return "every player (simultaneous)"
	case games.TerminalPlayer:
		return "nobody (terminal)"
	}
	return fmt.Sprintf("player %d", p)
}
