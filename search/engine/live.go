package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search"
)

// Live analysis on the engine: the Searcher's jobs run in increments of
// simulations. A job whose increment is spent has no leaf in flight and no
// virtual loss left in its tree, so the statistics are read between
// increments without locks, and the next increment re-queues the job
// with a new budget and its prepared root (no second root evaluation).
// Increments are sized by the speed of the previous one to last about the
// requested interval; cancelling a search in the middle of a lock-step
// would leave virtual losses behind, so the interval is never enforced by
// a deadline.

// AnalyzeLive searches s for player as Analyze does, and calls report
// with a search.Snapshot about every interval while the search runs and
// once more, Final, when its budget is spent. An error from report stops
// the search and is returned; so is ctx's error when it ends first. The
// snapshot and its slices are reused by the next call of report. Like
// Analyze, it leaves its statistics for an Act on the same position
// right after it. Under Gumbel root search (whose sequential halving
// plans the whole budget) only the final snapshot is reported.
func (a *AZ) AnalyzeLive(ctx context.Context, s games.State, player int, interval time.Duration, report func(*search.Snapshot) error) error {
	st, err := a.s.searchLive(ctx, s, player, interval, report)
	if err != nil {
		return err
	}
	a.stats = append(a.stats[:0], st...)
	a.analyzed, a.anKey = a.stats, [3]uint64{s.Hash(), uint64(s.MoveNumber()), uint64(player)}
	return nil
}

// firstIncrement is the budget of the first increment, which also
// evaluates the root: small, so that the first snapshot comes soon and
// times the engine for the next.
const firstIncrement = 8

// searchLive is Search in increments; see AZ.AnalyzeLive.
func (s *Searcher) searchLive(ctx context.Context, st games.State, player int, interval time.Duration, report func(*search.Snapshot) error) ([]search.ActionStat, error) {
	if interval <= 0 {
		return nil, fmt.Errorf("engine: live analysis every %v: want a positive interval", interval)
	}
	if s.opt.Gumbel.M > 0 {
		stats, err := s.Search(ctx, st, player)
		if err != nil {
			return nil, err
		}
		snap := &search.Snapshot{Stats: stats, Final: true, Values: s.RootValues()}
		for _, x := range stats {
			snap.Sims += x.Visits
		}
		return stats, report(snap)
	}
	if st.IsTerminal() {
		return nil, fmt.Errorf("engine: the game is over")
	}
	if p := st.CurrentPlayer(); !(p == player && p >= 0 || p == games.SimultaneousPlayer && player >= 0 && player < s.g.NumPlayers()) {
		return nil, fmt.Errorf("engine: asked for player %d but %s is to move", player, playerName(p))
	}
	total := s.opt.Search.Sims // per job
	n := min(firstIncrement, total)
	snap := &search.Snapshot{}
	for spent := 0; ; {
		s.left = len(s.jobs)
		for _, j := range s.jobs {
			if spent == 0 {
				if s.det {
					st.(games.Resampler).Resample(player, s.rng, j.root)
				} else {
					st.CloneInto(j.root)
				}
				s.w.Start(j, n)
				continue
			}
			j.sims = int64(n) // a continuation: same tree and root, new budget
			j.budget.Store(j.sims)
			s.w.queue(j)
		}
		s.w.Reset()
		rows := int64(len(s.jobs) * len(s.jobs[0].walkers))
		start := time.Now()
		s.e.running(rows)
		err := s.w.Loop(ctx)
		s.e.stopped(rows)
		took := time.Since(start)
		if err != nil {
			return nil, err
		}
		if s.left != 0 {
			return nil, fmt.Errorf("engine: %d searches did not finish", s.left)
		}
		spent += n
		snap.Sims = spent * len(s.jobs)
		snap.Final = spent >= total
		s.stats, s.merged = MergeRootStats(s.jobs, player, s.stats, s.merged)
		search.SortStats(s.merged)
		snap.Stats = s.merged
		snap.Values = s.RootValues()
		snap.PV = snap.PV[:0]
		if !s.det { // a determinized tree's variation would show sampled hidden information
			snap.PV = s.jobs[0].tree.PV(snap.PV, search.MaxPV)
		}
		if err := report(snap); err != nil {
			return nil, err
		}
		if snap.Final {
			return s.merged, nil
		}
		n = min(nextIncrement(n, took, interval), total-spent)
	}
}

// nextIncrement sizes an increment to last about interval, from the last
// one's n simulations in took; it at most quadruples from one increment
// to the next (the first one also evaluated the root).
func nextIncrement(n int, took, interval time.Duration) int {
	if took <= 0 {
		return 4 * n
	}
	next := int(float64(n) * float64(interval) / float64(took))
	return min(max(next, 1), 4*n)
}
