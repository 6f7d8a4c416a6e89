package search

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/canopy-go/canopy/games"
)

// Live analysis: a search run in increments on the same tree, its root
// statistics and principal variation read between increments. Between two
// increments no simulation is in flight (Continue joins its goroutines
// before it returns), so the reads need no locks and see consistent
// counts; the search pays one pause per increment (goroutines joined and
// restarted, a few microseconds every ~200 ms) and nothing per simulation.
// A tree searched in increments builds the same kind of tree as one
// Search; with one goroutine and a simulation budget, exactly the same
// tree, since the walkers and their random streams are the tree's own.

// Snapshot is a search in progress, as seen between two increments.
type Snapshot struct {
	// Sims is the number of simulations run on the position so far.
	Sims int
	// Stats are the root statistics of the analysed player, merged over
	// the searcher's trees and sorted by decreasing visits (SortStats).
	Stats []ActionStat
	// PV is the principal variation: from the root, the most visited
	// edge of each decision node (ties as in SortStats), down to a node not expanded yet, a
	// chance, simultaneous or terminal node, or MaxPV plies. Empty where
	// it would be computed on sampled hidden information (determinized
	// searches).
	PV []games.Action
	// Final marks the last snapshot of a search: its budget is spent or
	// its context ended.
	Final bool
	// Values is every player's value of the root, in [-1, 1] (the mean of
	// the value vectors the search backed up: under MaxN each player's
	// own estimate), or nil where the searcher does not keep them.
	Values []float64
}

// MaxPV bounds the length of Snapshot.PV.
const MaxPV = 12

// Continue runs up to n more simulations (n <= 0: no limit) from the
// tree's current root, as Prepare (or a previous Search) left it,
// keeping its statistics. It stops early when ctx ends or, with
// StopWhenFull, when the arena is full, and returns the number of
// simulations run. With Threads > 1 that many goroutines share the tree.
// Like Search, it must not run concurrently with other methods of t; the
// result methods (RootStats, PV) may be called between two Continues.
func (t *Tree) Continue(ctx context.Context, n int) int {
	if t.root == NilNode || t.a.nodes[t.root].player == games.TerminalPlayer {
		return 0
	}
	start := atomic.LoadInt64(&t.sims)
	threads := max(t.opt.Threads, 1)
	ws := t.Walkers(threads)
	if threads == 1 {
		t.shared = false
		t.extend(ctx, ws[0], n, nil)
	} else {
		t.shared = true
		var claimed atomic.Int64
		var wg sync.WaitGroup
		for _, w := range ws {
			wg.Go(func() { t.extend(ctx, w, n, &claimed) })
		}
		wg.Wait()
		t.shared = false
	}
	return int(atomic.LoadInt64(&t.sims) - start)
}

// extend is one goroutine's loop of Continue: n simulations in all
// (claimed through the shared counter when claimed is not nil).
func (t *Tree) extend(ctx context.Context, w *Walker, n int, claimed *atomic.Int64) {
	for i := 0; ; i++ {
		if n > 0 {
			if claimed == nil {
				if i >= n {
					return
				}
			} else if claimed.Add(1) > int64(n) {
				return
			}
		}
		// As in run, ctx is polled every 16 simulations; never before
		// the first, so every increment makes progress.
		if i&15 == 0 && i > 0 && ctx.Err() != nil {
			return
		}
		if t.opt.StopWhenFull && t.full.Load() {
			return
		}
		t.simulate(w)
	}
}

// PV appends to dst the principal variation of the tree (see
// Snapshot.PV), at most limit actions. Call it between searches.
func (t *Tree) PV(dst []games.Action, limit int) []games.Action {
	return t.pvFrom(t.root, dst, limit)
}

// pvFrom appends the principal variation below node ni to dst.
func (t *Tree) pvFrom(ni int32, dst []games.Action, limit int) []games.Action {
	for k := 0; k < limit && ni != NilNode; k++ {
		nd := &t.a.nodes[ni]
		if atomic.LoadUint32(&nd.state) != expanded || nd.player < 0 {
			break
		}
		// The order of SortStats: most visits, then the best value
		// (equal visits: the larger sum), then the lowest action.
		best := NilEdge
		for i := nd.firstEdge; i < nd.firstEdge+nd.numEdges; i++ {
			h := &t.a.hot[i]
			if h.n == 0 {
				continue
			}
			if best == NilEdge {
				best = i
				continue
			}
			b := &t.a.hot[best]
			if h.n > b.n || h.n == b.n && (h.w > b.w || h.w == b.w && t.a.edges[i].action < t.a.edges[best].action) {
				best = i
			}
		}
		if best == NilEdge {
			break
		}
		dst = append(dst, t.a.edges[best].action)
		ni = t.a.edges[best].child
	}
	return dst
}

// AnalyzeLive searches s for player as Analyze does, and calls report
// with a Snapshot about every interval while the search runs and once
// more, Final, at its end (the budget spent or ctx ended). An error from
// report stops the search and is returned. The snapshot and its slices
// are reused by the next call of report. Like Analyze, it leaves its
// statistics for an Act on the same position right after it.
//
// Single trees and root parallelism (root=) are searched in increments
// (Continue). With determinizations (det=, K trees searched one after
// another on sampled deals) only the final snapshot is reported.
func (a *Agent) AnalyzeLive(ctx context.Context, s games.State, player int, interval time.Duration, report func(*Snapshot) error) error {
	if interval <= 0 {
		return fmt.Errorf("mcts: live analysis every %v: want a positive interval", interval)
	}
	if a.opt.Determinize > 0 {
		st, err := a.Stats(ctx, s, player)
		if err != nil {
			return err
		}
		a.remember(st, s, player)
		snap := &Snapshot{Stats: st, Final: true}
		for _, x := range st {
			snap.Sims += x.Visits
		}
		return report(snap)
	}
	if s.IsTerminal() {
		return fmt.Errorf("mcts: the game is over")
	}
	if p := s.CurrentPlayer(); p != player && p != games.SimultaneousPlayer {
		return fmt.Errorf("mcts: asked for player %d but player %d is to move", player, p)
	}
	for _, t := range a.trees {
		if t.ismcts {
			t.observer = player
			t.obsRoot = s
		}
		t.Prepare(s)
	}
	o := a.trees[0].opt // per tree: Sims is already split over root trees
	var deadline time.Time
	if o.Time > 0 {
		deadline = time.Now().Add(o.Time)
	}
	left := make([]int, len(a.trees)) // simulations each tree has yet to run
	for i := range left {
		left[i] = o.Sims
	}
	snap := &Snapshot{}
	ran := make([]int, len(a.trees))
	for {
		next := time.Now().Add(interval)
		if !deadline.IsZero() && deadline.Before(next) {
			next = deadline
		}
		ictx, cancel := context.WithDeadline(ctx, next)
		a.continueTrees(ictx, left, ran)
		cancel()
		progress := false
		for i, n := range ran {
			snap.Sims += n
			progress = progress || n > 0
			if o.Sims > 0 {
				left[i] = max(left[i]-n, 0)
			}
		}
		spent := o.Sims > 0
		for _, l := range left {
			spent = spent && l == 0
		}
		snap.Final = spent || ctx.Err() != nil ||
			(!deadline.IsZero() && !time.Now().Before(deadline)) ||
			(!progress && ictx.Err() == nil) // nothing left to search (full arena, terminal root)
		snap.Stats = a.mergeRoots(s, player)
		snap.PV = a.pv(snap.PV[:0], snap.Stats)
		if snap.Final {
			a.remember(snap.Stats, s, player)
		}
		if err := report(snap); err != nil || snap.Final {
			return err
		}
	}
}

// continueTrees runs one increment on every tree (in parallel under root
// parallelism), recording the simulations each ran in ran.
func (a *Agent) continueTrees(ctx context.Context, left, ran []int) {
	one := func(i int) {
		ran[i] = 0
		if a.trees[i].opt.Sims > 0 && left[i] == 0 {
			return
		}
		ran[i] = a.trees[i].Continue(ctx, left[i])
	}
	if len(a.trees) == 1 {
		one(0)
		return
	}
	var wg sync.WaitGroup
	for i := range a.trees {
		wg.Go(func() { one(i) })
	}
	wg.Wait()
}

// mergeRoots returns the root statistics of player's legal actions merged
// over the agent's trees (visits add up, Q is visit-weighted), sorted.
func (a *Agent) mergeRoots(s games.State, player int) []ActionStat {
	for i := range a.acc {
		a.acc[i] = ActionStat{Action: games.Action(i)}
	}
	for _, t := range a.trees {
		a.stats = t.RootStats(player, a.stats[:0])
		for _, st := range a.stats {
			m := &a.acc[st.Action]
			m.Q = (m.Q*float64(m.Visits) + st.Q*float64(st.Visits)) / float64(max(m.Visits+st.Visits, 1))
			m.Visits += st.Visits
			m.Prior = st.Prior
			m.AmafVisits += st.AmafVisits
			m.AmafQ = st.AmafQ
			m.Strategy += st.Strategy
		}
	}
	return a.legalStats(s, player)
}

// pv returns the principal variation: the merged best action, then the
// variation below it in the tree that visited it most (the only tree
// without root parallelism, where this is Tree.PV).
func (a *Agent) pv(dst []games.Action, merged []ActionStat) []games.Action {
	if len(merged) == 0 {
		return dst
	}
	first := merged[0].Action
	var best *Tree
	child, bestN := NilNode, int32(-1)
	for _, t := range a.trees {
		nd := &t.a.nodes[t.root]
		if nd.state != expanded || nd.player < 0 {
			return dst // a simultaneous root: no single line
		}
		for i := nd.firstEdge; i < nd.firstEdge+nd.numEdges; i++ {
			if t.a.edges[i].action == first && t.a.hot[i].n > bestN {
				best, child, bestN = t, t.a.edges[i].child, t.a.hot[i].n
			}
		}
	}
	if best == nil || bestN == 0 {
		return dst
	}
	return best.pvFrom(child, append(dst, first), MaxPV-1)
}

// remember keeps st as the statistics an Act on s right after uses.
func (a *Agent) remember(st []ActionStat, s games.State, player int) {
	a.analyzed, a.anKey = append([]ActionStat(nil), st...), [3]uint64{s.Hash(), uint64(s.MoveNumber()), uint64(player)}
}
