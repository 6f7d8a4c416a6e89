package zero

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/search/engine"
	"github.com/canopy-go/canopy/selfplay"
)

// Match is one evaluation game: the agents by seat (names such as
// "iter-0003" or a baseline spec) and the returns by seat.
type Match struct {
	Seats   []string  `json:"seats"`
	Returns []float64 `json:"returns"`
}

// Score is a result of the new network against one opponent.
type Score struct {
	Opponent string  `json:"opponent"`
	Games    int     `json:"games"`
	Score    float64 `json:"score"` // wins + draws/2, per game
	Lo       float64 `json:"lo"`    // 95% Wilson interval
	Hi       float64 `json:"hi"`
}

// evaluate plays iteration i's network against the network self-play
// used (prev) and against the baselines, and scores it on the solver set.
func (r *runner) evaluate(ctx context.Context, i, prev int) (EvalRecord, error) {
	out := EvalRecord{Accepted: true, Previous: iterName(prev)}
	t0 := time.Now()
	if r.cfg.EvalGames > 0 {
		opponents := append([]string{iterName(prev)}, r.cfg.Baselines...)
		var fleetRes []matchResult
		if r.fleetEval() {
			var err error
			if fleetRes, err = r.fleetMatches(ctx, i, opponents); err != nil {
				return out, err
			}
		}
		for k, opp := range opponents {
			var sc Score
			var ms []Match
			if fleetRes != nil {
				sc, ms = fleetRes[k].sc, fleetRes[k].ms
			} else {
				var err error
				if sc, ms, err = r.match(ctx, i, iterName(i), opp); err != nil {
					return out, err
				}
			}
			out.Scores = append(out.Scores, sc)
			out.Matches = append(out.Matches, ms...)
			r.logf("  %s vs %s: %.1f%% [%.1f, %.1f] over %d games", iterName(i), opp, 100*sc.Score, 100*sc.Lo, 100*sc.Hi, sc.Games)
		}
		if r.cfg.Gate > 0 && out.Scores[0].Score < r.cfg.Gate {
			out.Accepted = false
			r.logf("  gate: %.1f%% < %.1f%%: self-play keeps %s", 100*out.Scores[0].Score, 100*r.cfg.Gate, iterName(prev))
		}
	}
	if r.cfg.EvalPolicyGames > 0 {
		_, net := r.checkpoint(i)
		for _, opp := range r.cfg.Baselines {
			sc, _, err := r.play(ctx, i, 1<<21, [2]string{"policy:net=" + net, opp}, [2]string{iterName(i) + " alone", opp}, r.cfg.EvalPolicyGames)
			if err != nil {
				return out, err
			}
			out.Alone = append(out.Alone, sc)
			r.logf("  %s alone (no search) vs %s: %.1f%% [%.1f, %.1f] over %d games", iterName(i), opp, 100*sc.Score, 100*sc.Lo, 100*sc.Hi, sc.Games)
		}
	}
	if ref := r.opt.Reference; ref != nil && r.g.Spec() == ref.Game && r.cfg.SolverPositions > 0 {
		_, net := r.checkpoint(i)
		pol, srch, rnd, err := r.solverAccuracy(ctx, net)
		if err != nil {
			return out, err
		}
		out.SolverPolicy, out.SolverSearch, out.SolverRandom = &pol, &srch, &rnd
		r.logf("  solver set: network alone %.1f%% optimal, with %d simulations %.1f%% (random moves %.1f%%)", 100*pol, r.cfg.SolverSims, 100*srch, 100*rnd)
	}
	out.Seconds = time.Since(t0).Seconds()
	return out, nil
}

// spec turns an evaluation entrant's name into an agent spec: a network
// iteration becomes an az agent on its checkpoint that searches as
// self-play does (evalSearch) with EvalSims simulations.
func (r *runner) spec(name string) string {
	if it, ok := netIter(name); ok {
		_, net := r.checkpoint(it)
		return r.azSpec(net)
	}
	return name
}

// netIter returns the iteration of an evaluation entrant that is a
// network ("iter-0003"), and whether it is one.
func netIter(name string) (int, bool) {
	var it int
	n, _ := fmt.Sscanf(name, "iter-%04d", &it)
	return it, n == 1
}

// azSpec is the spec of an evaluation's network agent on file net.
func (r *runner) azSpec(net string) string {
	return fmt.Sprintf("az:net=%s,sims=%d,tempplies=%d%s", net, r.cfg.EvalSims, r.cfg.EvalTempPlies, evalSearch(r.g, &r.cfg.SelfPlay))
}

// evalSearch returns the az options (",key=value...") through which
// evaluation searches as self-play does: its PUCT constants and
// objective, and in
// hidden-information games its determinizations and rollout blend. Root
// noise, temperature and the budget are evaluation's own. Options at the
// az agent's defaults are left out, so that the specs of runs that never
// changed them read as they always did.
func evalSearch(g games.Game, sp *selfplay.Settings) string {
	def := engine.DefaultSettings()
	var b strings.Builder
	add := func(key string, v, d any) {
		if v != d {
			fmt.Fprintf(&b, ",%s=%v", key, v)
		}
	}
	add("c", sp.C, def.C)
	add("fpu", sp.FPU, def.FPU)
	if g.Type().Information == games.ImperfectInformation {
		add("det", sp.Det, def.Det)
	}
	add("objective", sp.Objective, def.Objective)
	add("blend", sp.Blend, def.Blend)
	if sp.Blend < 1 {
		add("turns", sp.Turns, def.Turns)
		add("cut", sp.Cut, def.Cut)
		add("cutscale", sp.CutScale, def.CutScale)
	}
	return b.String()
}

// match plays EvalGames games of a against b (seats alternating), all at
// once so that the network agents' leaves share batches.
func (r *runner) match(ctx context.Context, i int, a, b string) (Score, []Match, error) {
	return r.play(ctx, i, 1<<20, [2]string{r.spec(a), r.spec(b)}, [2]string{a, b}, r.cfg.EvalGames)
}

// play plays n games between the agents specs (seats rotating, all at
// once), named names in the matches and the score; the seed is derived
// from the run's, salt and iteration i. In a game of P > 2 players the
// first agent plays against P-1 copies of the second, and the score is
// its pooled pairwise score against the copies: the share of (game,
// copy) comparisons it finished ahead of, ties counting half (0.5 is
// parity at every player count; the interval treats the comparisons of
// one game as independent, so it is somewhat too narrow).
func (r *runner) play(ctx context.Context, i int, salt uint64, specs, names [2]string, n int) (Score, []Match, error) {
	a, b := names[0], names[1]
	agents, seatNames := seatAgents(r.g.NumPlayers(), specs, names)
	res, err := arena.Tournament(ctx, r.g, arena.TournamentConfig{
		Agents: agents, Env: r.opt.Agents, Games: n, Parallel: n,
		Seed: games.DeriveSeed(r.cfg.Seed, salt+uint64(i)), Bootstrap: -1,
		Progress: func(done int) {
			r.opt.Status(fmt.Sprintf("iteration %d evaluation: %s vs %s, %d/%d games", i, a, b, done, n))
		},
	})
	if err != nil {
		return Score{}, nil, err
	}
	sc, ms := score(res, seatNames, b, n)
	return sc, ms, nil
}

// seatAgents returns the agents of a match of the first agent against
// the second in a game of players players (the second in every other
// seat), and their names by agent index.
func seatAgents(players int, specs, names [2]string) (agents, seatNames []string) {
	agents, seatNames = []string{specs[0]}, []string{names[0]}
	for range max(players-1, 1) {
		agents, seatNames = append(agents, specs[1]), append(seatNames, names[1])
	}
	return agents, seatNames
}

// score turns a match's tournament result into the first agent's score
// against opponent (n games a table) and the matches by seat names.
func score(res *arena.TournamentResult, seatNames []string, opponent string, n int) (Score, []Match) {
	var ms []Match
	for _, gr := range res.Games {
		m := Match{Returns: gr.Returns}
		for _, s := range gr.Seats {
			m.Seats = append(m.Seats, seatNames[s])
		}
		ms = append(ms, m)
	}
	var pooled arena.PairStats
	for _, p := range res.Pairwise[0][1:] {
		pooled.Games += p.Games
		pooled.Wins += p.Wins
		pooled.Draws += p.Draws
	}
	sc := Score{Opponent: opponent, Games: n}
	if pooled.Games > 0 {
		w := arena.Wilson(float64(pooled.Wins)+float64(pooled.Draws)/2, pooled.Games)
		sc.Score, sc.Lo, sc.Hi = w.Value, w.Lo, w.Hi
	}
	return sc, ms
}

// solverAccuracy returns the share of the first SolverPositions
// solver-labelled positions where the network alone (its most probable
// legal move) and the network with search play a move that keeps the
// position's value.
func (r *runner) solverAccuracy(ctx context.Context, net string) (policy, search, random float64, err error) {
	rep, err := SolverScore(ctx, engine.PoolOf(r.opt.Agents), r.opt.Reference, net, r.cfg.SolverPositions, r.cfg.SolverSims)
	return rep.Policy, rep.Search, rep.Random, err
}

// SolverReport is a network's score on the solver-labelled set: shares of
// optimal moves (moves that keep the position's win/draw/loss value) of
// the network alone, of the network with Sims simulations, and what
// uniformly random moves would score, over all positions and by group.
type SolverReport struct {
	Positions, Sims        int
	Policy, Search, Random float64
	Groups                 []SolverGroup // by ply range, then by value
}

// SolverGroup is the score on one group of the positions.
type SolverGroup struct {
	Name                   string // "plies 8-13", ..., "won", "drawn", "lost"
	Positions              int
	Policy, Search, Random float64
}

// solverPlyGroups are the ply ranges of SolverReport.Groups and their
// names; the labelled set spans plies 8-30.
var solverPlyGroups = []struct {
	name   string
	lo, hi int
}{{"plies 8-13", 0, 13}, {"plies 14-19", 14, 19}, {"plies 20-25", 20, 25}, {"plies 26-30", 26, 42}}

// solverGroups groups per-position results (pol[i], srch[i]: the move
// played in labels[i] was optimal) by ply range and by the position's
// value; empty groups are left out.
func solverGroups(labels []Labelled, pol, srch []bool) []SolverGroup {
	var out []SolverGroup
	add := func(name string, in func(Labelled) bool) {
		gr := SolverGroup{Name: name}
		for i, l := range labels {
			if !in(l) {
				continue
			}
			gr.Positions++
			gr.Random += l.RandomShare()
			if pol[i] {
				gr.Policy++
			}
			if srch[i] {
				gr.Search++
			}
		}
		if gr.Positions == 0 {
			return
		}
		n := float64(gr.Positions)
		gr.Policy, gr.Search, gr.Random = gr.Policy/n, gr.Search/n, gr.Random/n
		out = append(out, gr)
	}
	for _, r := range solverPlyGroups {
		add(r.name, func(l Labelled) bool { n := len(l.Line()); return n >= r.lo && n <= r.hi })
	}
	for _, v := range []struct {
		name string
		sign int
	}{{"won", 1}, {"drawn", 0}, {"lost", -1}} {
		add(v.name, func(l Labelled) bool { return l.Outcome() == v.sign })
	}
	return out
}

// SolverScore scores a network (a reference as nets.OpenNet takes) on the
// first positions of the reference set ref (for Connect Four, the
// solver-labelled set): the share of optimal moves of the network alone
// (its most probable legal move) and of the az agent with sims
// simulations, and what uniformly random moves would score, over all
// positions and by group. The network agents run on engines of pool p
// (with its backend).
func SolverScore(ctx context.Context, p *engine.Pool, ref *Reference, net string, positions, sims int) (SolverReport, error) {
	if ref == nil {
		return SolverReport{}, fmt.Errorf("solver score: no reference set of labelled positions")
	}
	g, err := games.New(ref.Game)
	if err != nil {
		return SolverReport{}, err
	}
	labels, err := ref.Positions()
	if err != nil {
		return SolverReport{}, err
	}
	if positions < 1 || sims < 1 {
		return SolverReport{}, fmt.Errorf("solver score: positions = %d and sims = %d must be at least 1", positions, sims)
	}
	labels = labels[:min(len(labels), positions)]
	st := engine.DefaultSettings()
	st.Sims = sims
	pol, err := optimalMoves(ctx, g, labels, func() (actor, error) { return engine.NewPolicy(p, g, net, "auto", 0, 1) })
	if err != nil {
		return SolverReport{}, err
	}
	srch, err := optimalMoves(ctx, g, labels, func() (actor, error) { return engine.NewAZ(p, g, net, "auto", st, false, 1) })
	if err != nil {
		return SolverReport{}, err
	}
	rep := SolverReport{Positions: len(labels), Sims: sims}
	for i, l := range labels {
		rep.Random += l.RandomShare() / float64(len(labels))
		if pol[i] {
			rep.Policy++
		}
		if srch[i] {
			rep.Search++
		}
	}
	rep.Policy /= float64(len(labels))
	rep.Search /= float64(len(labels))
	rep.Groups = solverGroups(labels, pol, srch)
	return rep, nil
}

type actor interface {
	Act(ctx context.Context, s games.State, player int) (games.Action, error)
	Close() error
}

// optimalMoves plays one move in each labelled position with agents from
// mk (several positions at once, so that their network requests share
// batches) and reports, per position, whether the move was optimal.
func optimalMoves(ctx context.Context, g games.Game, labels []Labelled, mk func() (actor, error)) ([]bool, error) {
	const workers = 32
	var (
		mu       sync.Mutex
		firstErr error
		wg       sync.WaitGroup
	)
	ok := make([]bool, len(labels))
	next := make(chan int)
	for range min(workers, len(labels)) {
		a, err := mk()
		if err != nil {
			close(next)
			wg.Wait()
			return nil, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer a.Close()
			for i := range next {
				l := labels[i]
				s := g.NewInitialState()
				var err error
				for _, m := range l.Line() {
					if err == nil {
						err = applyText(s, m)
					}
				}
				var act games.Action
				if err == nil {
					act, err = a.Act(ctx, s, s.CurrentPlayer())
				}
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("position %s: %w", strings.Join(l.Line(), " "), err)
					}
					mu.Unlock()
					continue
				}
				ok[i] = l.Optimal(int(act)) // each i is written by one worker only
			}
		}()
	}
	for i := range labels {
		next <- i
	}
	close(next)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return ok, nil
}

// applyText plays one move given in the game's notation, if it is legal
// (a reference's line comes from outside: a game's Apply assumes a legal
// action).
func applyText(s games.State, text string) error {
	a, err := s.ParseAction(text)
	if err != nil {
		return err
	}
	legal := games.NewMask(s.Game().NumActions())
	s.Legal(legal)
	if !legal.Has(a) {
		return fmt.Errorf("move %s is not legal there", text)
	}
	s.Apply(a)
	return nil
}
