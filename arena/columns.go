package arena

// The columns the studies report per agent (study 003, Table II: win
// rate, mean ordinal and time per move; RESULTS.md's sole and pairwise
// wins), computed from the same game results as the ratings.

// AgentSummary is one agent's results over all its games.
type AgentSummary struct {
	Agent string `json:"agent"`
	Games int    `json:"games"`
	// SoleWins counts the games where the agent's return was strictly
	// higher than every other seat's; SharedWins those where it tied for
	// the highest return with other seats. SoleWinRate is SoleWins/Games
	// with its 95% Wilson interval.
	SoleWins    int      `json:"sole_wins"`
	SharedWins  int      `json:"shared_wins"`
	SoleWinRate Interval `json:"sole_win_rate"`
	// Pairwise counts the agent's comparisons with every other seat of
	// its games: a higher return is a win, an equal one a draw. In a
	// two-player game they are its wins, draws and losses.
	PairWins   int `json:"pair_wins"`
	PairDraws  int `json:"pair_draws"`
	PairLosses int `json:"pair_losses"`
	// PairScore is the mean over the agent's games of its share of the
	// comparisons won (draws half), with the 95% Wilson interval of the
	// sum of the shares over the games (see shareInterval). For two
	// players it is the score (wins + draws/2)/games of the pairwise
	// table, with the same interval.
	PairScore Interval `json:"pair_score"`
	// MeanOrdinal is the mean finishing position, 1 = best, over the
	// agent's games, with a 95% interval (shareInterval of the positions
	// mapped to [0, 1], (o-1)/(n-1) for n seats, mapped back). Tied seats
	// share the mean of the positions they span: 1 + (number of seats
	// with a higher return) + (number of other seats with an equal
	// return)/2, so two players drawing both finish 1.5, and in a
	// two-player game MeanOrdinal = 2 - PairScore.
	MeanOrdinal Interval `json:"mean_ordinal"`
	// Moves is the number of decisions the agent made and MoveTime their
	// mean wall-clock time in seconds (0 when no game recorded times).
	Moves    int     `json:"moves"`
	MoveTime float64 `json:"move_time_s"`
	// Seats[s] is the agent's record in seat s (0 moves first): games,
	// sole wins and pairwise score, for games with a first-move advantage
	// (Hex without the swap rule).
	Seats []SeatSummary `json:"seats"`
}

// SeatSummary is an agent's record in one seat.
type SeatSummary struct {
	Games     int      `json:"games"`
	SoleWins  int      `json:"sole_wins"`
	PairScore Interval `json:"pair_score"`
}

// Ordinal returns the finishing position of seat s (1 = best) among
// returns, tied seats sharing the mean of the positions they span.
func Ordinal(returns []float64, s int) float64 {
	higher, equal := 0, 0
	for i, r := range returns {
		switch {
		case i == s:
		case r > returns[s]:
			higher++
		case r == returns[s]:
			equal++
		}
	}
	return 1 + float64(higher) + float64(equal)/2
}

// shareInterval accumulates per-game shares x in [0, 1] for their mean
// with a 95% interval: Wilson's interval of sum(x) successes in n
// trials. It is the usual interval when every x is 0 or 1 (a two-player
// game without draws), counts a draw as half a win as the pairwise table
// does, and for other shares errs on the wide side, since a variable in
// [0, 1] with mean p has variance at most p(1-p); unlike a normal
// interval over games it does not collapse to a point when every game
// ends alike.
type shareInterval struct {
	sum float64
	n   int
}

func (m *shareInterval) add(x float64) { m.sum, m.n = m.sum+x, m.n+1 }

func (m *shareInterval) interval() Interval {
	if m.n == 0 {
		return Interval{}
	}
	return Wilson(m.sum, m.n)
}

// Summaries returns one AgentSummary per agent (k agents, named by names)
// from game results. Results without Moves/Think leave the time columns
// at zero.
func Summaries(names []string, results []GameResult) ([]AgentSummary, error) {
	k := len(names)
	out := make([]AgentSummary, k)
	pair := make([]shareInterval, k)
	ord := make([]shareInterval, k) // (ordinal-1)/(seats-1)
	seats := make([]int, k)
	think := make([]float64, k)
	seatPair := make([][]shareInterval, k)
	for i := range out {
		out[i].Agent = names[i]
	}
	for _, r := range results {
		if err := (Outcome{Agents: r.Seats, Returns: r.Returns}).validate(k); err != nil {
			return nil, err
		}
		for s, a := range r.Seats {
			sum := &out[a]
			sum.Games++
			won, drew := 0, 0
			for o, ro := range r.Returns {
				switch {
				case o == s:
				case r.Returns[s] > ro:
					won++
				case r.Returns[s] == ro:
					drew++
				}
			}
			others := len(r.Returns) - 1
			sum.PairWins += won
			sum.PairDraws += drew
			sum.PairLosses += others - won - drew
			share := (float64(won) + float64(drew)/2) / float64(others)
			pair[a].add(share)
			for len(sum.Seats) <= s {
				sum.Seats = append(sum.Seats, SeatSummary{})
				seatPair[a] = append(seatPair[a], shareInterval{})
			}
			sum.Seats[s].Games++
			seatPair[a][s].add(share)
			switch {
			case won == others:
				sum.SoleWins++
				sum.Seats[s].SoleWins++
			case won+drew == others:
				sum.SharedWins++
			}
			ord[a].add((Ordinal(r.Returns, s) - 1) / float64(others))
			seats[a] = max(seats[a], len(r.Returns)) // the same for every game of a tournament
			if s < len(r.Moves) && s < len(r.Think) {
				sum.Moves += r.Moves[s]
				think[a] += r.Think[s]
			}
		}
	}
	for a := range out {
		sum := &out[a]
		if sum.Games > 0 {
			sum.SoleWinRate = Wilson(float64(sum.SoleWins), sum.Games)
		}
		sum.PairScore = pair[a].interval()
		for s := range sum.Seats {
			sum.Seats[s].PairScore = seatPair[a][s].interval()
		}
		if iv := ord[a].interval(); sum.Games > 0 {
			span := float64(seats[a] - 1)
			sum.MeanOrdinal = Interval{Value: 1 + span*iv.Value, Lo: 1 + span*iv.Lo, Hi: 1 + span*iv.Hi}
		}
		if sum.Moves > 0 {
			sum.MoveTime = think[a] / float64(sum.Moves)
		}
	}
	return out, nil
}
