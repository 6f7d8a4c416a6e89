package multi

import "github.com/canopy-go/canopy/games"

// TurnSearcher is a Planner that also returns the improved policy history
// of the turn it planned last (study 004, section III-A: TURN-SELECTION
// returns the turn T = [a_1, ..., a_d] and the history [pi_1, ..., pi_d]),
// which AlphaZero self-play records as the policy targets of the turn's
// positions (Algorithm 1: every state s_j visited is stored with pi_j).
// BB (MCTS-V and MCTS-BB) and EMCTS implement it; OEP, which keeps no
// statistics per action, does not.
//
// Self-play with a TurnSearcher, per turn from state s: PlanTurn(ctx, s),
// then PolicyHistory; the j-th row is the target of the state reached
// from s by the turn's first j actions (the observation is taken from
// that state's mover, as for any position). selfplay.PlayTurns plays
// and records whole games so.
type TurnSearcher interface {
	Planner
	// PolicyHistory appends one row per atomic action of the last turn
	// planned, in playing order, to dst and returns it: Game.NumActions
	// values indexed by action id, the policy target at the state before
	// that action. A row is zero on the actions illegal at its state and
	// sums to 1 (up to rounding).
	PolicyHistory(dst []float32) []float32
}

// TurnValuer is a TurnSearcher that also values the state before each
// atomic action of the last turn, for the value targets that mix the
// outcome with the search's value (selfplay's RootQ, train's QMix).
type TurnValuer interface {
	TurnSearcher
	// ValueHistory appends one value per atomic action of the last turn
	// planned, in playing order, to dst and returns it: the search's
	// value in [-1, 1] of the state before that action, for its mover.
	ValueHistory(dst []float32) []float32
}

var (
	_ TurnValuer   = (*BB)(nil)
	_ TurnSearcher = (*EMCTS)(nil)
)

// PolicyHistory implements TurnSearcher with the study's Eq. 1 (Algorithms
// 2 and 3): the row of each action is the visit distribution of the
// children of the node it was chosen from: for MCTS-BB the root of its
// phase, after that phase's search (with the visits of the subtree kept
// from earlier phases), for MCTS-V the node reached by the walk down the
// tree. Where that node has no visited child (MCTS-V's walk beyond the
// searched tree, or a search cancelled before its first simulation) the
// row is uniform over the legal actions, the distribution the action was
// then drawn from. Explain's Score of an action is its entry in its row
// wherever a child was visited.
func (b *BB) PolicyHistory(dst []float32) []float32 { return append(dst, b.hist...) }

// ValueHistory implements TurnValuer: the value of each action's row is
// the node it was chosen from, the visit-weighted mean Q of that node's
// children for the mover (search.MeanQ) after its phase's search. Where
// that node has no visited child (MCTS-V's walk beyond the searched tree)
// it is the value of the turn's previous action, the nearest node above
// it that was searched (0 for a turn whose first node was not searched).
func (b *BB) ValueHistory(dst []float32) []float32 { return append(dst, b.values...) }

// visitRow appends the visit distribution of b.stats over the game's
// actions to b.hist, or the uniform distribution over the legal actions
// of s when no action was visited.
func (b *BB) visitRow(s games.State) {
	n := b.g.NumActions()
	start := len(b.hist)
	b.hist = append(b.hist, make([]float32, n)...)
	row := b.hist[start:]
	total := 0
	for _, st := range b.stats {
		total += st.Visits
	}
	if total > 0 {
		for _, st := range b.stats {
			row[st.Action] = float32(float64(st.Visits) / float64(total))
		}
		return
	}
	s.Legal(b.mask)
	k := float32(b.mask.Count())
	for a := range b.mask.All() {
		row[a] = 1 / k
	}
}

// HistoryCount says how EMCTS counts its policy targets (see
// EMCTS.PolicyHistory).
type HistoryCount uint8

const (
	HistoryPaper HistoryCount = iota // the study's Eq. 2: the mutations' visits
	HistoryCode                      // the study's published code: also L0, repairs, keeps (credited to the root's sequence)
	HistoryNode                      // as HistoryCode, keeps credited to the kept node's own sequence
	HistoryEvals                     // as HistoryCode without the keeps' credit, plus each evaluated sequence's actions once
)

// historyNames are the emcts option hist's values, indexed by HistoryCount.
var historyNames = []string{"paper", "code", "node", "evals"}

// PolicyHistory implements TurnSearcher with the study's Eq. 2 (Algorithm
// 4): the row of the action at position i of the last turn is the
// distribution of the visits N(m) of the mutations m = (i, a) over a,
// summed over every edge of the tree that sets position i to a (the
// Pi-hat(m) that Algorithm 4 increments at each backup through m). The
// keep mutation, which sets no position, does not count, as in Eq. 2.
//
// Two choices the study leaves open: visits of actions that are illegal
// at the turn's own state before position i (possible where an earlier
// action of the turn changes what is legal, as in Strands; never in
// Connect4d, whose i-th action is on board i) are dropped, so that a row
// is a distribution over legal actions; and a position none of whose
// legal mutations was visited (its action kept from the root sequence
// L0 throughout) gets all the mass on the action played.
// Explain's Score counts the same mutations without either choice.
//
// Eq. 2 counts the mutations tried, not the sequences kept: an action
// that the search kept by keep mutations gets no count, and may get less
// mass than mutations it tried and rejected. e.History chooses:
//   - HistoryPaper (emcts option hist=paper, the default): Eq. 2;
//   - HistoryCode (hist=code): the study's published code (MegaZero,
//     EMCTS.pyx), which adds each action of L0 and of every repair once,
//     and each keep mutation as 1/H of a visit of every action of the
//     root's sequence (H its length);
//   - HistoryNode (hist=node, Canopy's, not the study's): as HistoryCode,
//     but a keep mutation credits the sequence of the node it keeps;
//   - HistoryEvals (hist=evals, Canopy's): as HistoryCode without the
//     keeps' credit, plus the actions of every sequence evaluated, once.
//
// On Connect4d the paper's targets did not teach the network in 17
// iterations where MCTS-V's did; the code's taught EMCTS-BB but not
// EMCTS-V (docs/RESULTS.md, section 8). EMCTS-V's root stays at L0, so
// under HistoryCode every keep credits L0's actions while the turn played
// is the sequence at the end of the most visited path: with random
// rollouts on the empty board (seeds 1-10, 250 evaluations) the argmax of
// every one of the 50 rows is L0's action, and the played action's in 13
// (Eq. 2: 14, HistoryNode: 18, HistoryEvals: 21). With the network of
// iteration 17 of that EMCTS-V run as evaluator (6 positions, 30 rows)
// the played action is the argmax of 12 rows under Eq. 2, 25 under
// HistoryCode, 28 under HistoryNode and 26 under HistoryEvals; with its
// untrained network 10, 19, 19 and 25 (TestEMCTSTargetAgreement, a gated
// harness, prints these tables). TestEMCTSHistoryCounts recomputes every
// counting from the finished tree.
func (e *EMCTS) PolicyHistory(dst []float32) []float32 {
	n := e.g.NumActions()
	start := len(dst)
	dst = append(dst, make([]float32, n*len(e.last))...)
	hist := dst[start:]
	for k := range e.visits {
		x := &e.visits[k]
		if ed := &e.edges[x.edge]; ed.pos >= 0 && int(ed.pos) < len(e.last) {
			hist[int(ed.pos)*n+int(ed.act)] += float32(x.n)
		}
	}
	if e.History != HistoryPaper {
		for i := range min(len(e.extra)/n, len(e.last)) {
			for a, c := range e.extra[i*n : (i+1)*n] {
				hist[i*n+a] += c
			}
		}
	}
	e.root0.CloneInto(e.work)
	for i, played := range e.last {
		row := hist[i*n : (i+1)*n]
		e.work.Legal(e.mask)
		var sum float64
		for a := range row {
			if !e.mask.Has(games.Action(a)) {
				row[a] = 0
			}
			sum += float64(row[a])
		}
		if sum > 0 {
			for a := range row {
				row[a] = float32(float64(row[a]) / sum)
			}
		} else {
			row[played] = 1
		}
		e.work.Apply(played)
	}
	return dst
}
