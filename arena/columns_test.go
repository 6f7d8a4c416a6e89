package arena

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
)

func nearly(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 1e-9 {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func TestOrdinal(t *testing.T) {
	for _, c := range []struct {
		returns []float64
		want    []float64
	}{
		{[]float64{1, -1}, []float64{1, 2}},
		{[]float64{0, 0}, []float64{1.5, 1.5}},
		{[]float64{3, 3, 1, 0}, []float64{1.5, 1.5, 3, 4}},
		{[]float64{0, 5, 5, 5}, []float64{4, 2, 2, 2}},
		{[]float64{2, 2, 2, 2}, []float64{2.5, 2.5, 2.5, 2.5}},
		{[]float64{-1, 0.5, 0.25}, []float64{3, 1, 2}},
	} {
		for s, w := range c.want {
			if got := Ordinal(c.returns, s); got != w {
				t.Errorf("Ordinal(%v, %d) = %v, want %v", c.returns, s, got, w)
			}
		}
	}
}

// Three agents at a 3-player table over three hand-scored games; every
// expected figure is worked out by hand in the comments.
func TestSummariesHandBuilt(t *testing.T) {
	results := []GameResult{
		// A sole winner, B second, C last.
		{Seats: []int{0, 1, 2}, Returns: []float64{1, 0, -1}, Moves: []int{10, 10, 9}, Think: []float64{1.0, 0.5, 0.9}},
		// B (seat 0) and C (seat 1) tie for first, A (seat 2) last.
		{Seats: []int{1, 2, 0}, Returns: []float64{1, 1, -1}, Moves: []int{5, 5, 5}, Think: []float64{0.5, 0.25, 0.5}},
		// Everyone ties; no times recorded.
		{Seats: []int{2, 0, 1}, Returns: []float64{0, 0, 0}},
	}
	got, err := Summaries([]string{"A", "B", "C"}, results)
	if err != nil {
		t.Fatal(err)
	}
	type want struct {
		sole, shared, pw, pd, pl int
		pair, ord                float64
		moves                    int
		moveTime                 float64
	}
	for a, w := range []want{
		// A: ordinals 1, 3, 2; comparisons won 2+0+0, drawn 0+0+2, lost 0+2+0;
		// pair shares 1, 0, 1/2; moves 10+5 in 1.0+0.5 s.
		{1, 1, 2, 2, 2, 0.5, 2, 15, 1.5 / 15},
		// B: ordinals 2, 1.5, 2; won 1+1+0, drawn 0+1+2, lost 1+0+0; shares 1/2, 3/4, 1/2;
		// moves 10+5 in 0.5+0.5 s.
		{0, 2, 2, 3, 1, (0.5 + 0.75 + 0.5) / 3, 5.5 / 3, 15, 1.0 / 15},
		// C: ordinals 3, 1.5, 2; won 0+1+0, drawn 0+1+2, lost 2+0+0; shares 0, 3/4, 1/2;
		// moves 9+5 in 0.9+0.25 s.
		{0, 2, 1, 3, 2, 1.25 / 3, 6.5 / 3, 14, 1.15 / 14},
	} {
		g := got[a]
		if g.Games != 3 || g.SoleWins != w.sole || g.SharedWins != w.shared || g.PairWins != w.pw || g.PairDraws != w.pd || g.PairLosses != w.pl || g.Moves != w.moves {
			t.Errorf("%s: %+v, want games 3, sole %d, shared %d, pairs %d-%d-%d, moves %d", g.Agent, g, w.sole, w.shared, w.pw, w.pd, w.pl, w.moves)
		}
		nearly(t, g.Agent+" pair score", g.PairScore.Value, w.pair)
		nearly(t, g.Agent+" mean ordinal", g.MeanOrdinal.Value, w.ord)
		nearly(t, g.Agent+" move time", g.MoveTime, w.moveTime)
		nearly(t, g.Agent+" sole win rate", g.SoleWinRate.Value, float64(w.sole)/3)
		// Intervals: Wilson's of the summed shares over 3 games, for the
		// ordinal on (o-1)/2 and mapped back.
		lo, hi := bookWilson(w.pair*3, 3)
		nearly(t, g.Agent+" pair lo", g.PairScore.Lo, lo)
		nearly(t, g.Agent+" pair hi", g.PairScore.Hi, hi)
		lo, hi = bookWilson((w.ord-1)/2*3, 3)
		nearly(t, g.Agent+" ordinal lo", g.MeanOrdinal.Lo, 1+2*lo)
		nearly(t, g.Agent+" ordinal hi", g.MeanOrdinal.Hi, 1+2*hi)
	}
	// By seat: A won in seat 0 (game 1), lost in seat 2 (game 2) and
	// drew in seat 1 (game 3).
	if a := got[0]; len(a.Seats) != 3 || a.Seats[0].Games != 1 || a.Seats[0].SoleWins != 1 || a.Seats[0].PairScore.Value != 1 ||
		a.Seats[1].Games != 1 || a.Seats[1].SoleWins != 0 || a.Seats[1].PairScore.Value != 0.5 ||
		a.Seats[2].Games != 1 || a.Seats[2].SoleWins != 0 || a.Seats[2].PairScore.Value != 0 {
		t.Errorf("A by seat: %+v", a.Seats)
	}
	// The positions of a game sum to 1+2+3 whatever the ties.
	var total float64
	for _, g := range got {
		total += g.MeanOrdinal.Value * float64(g.Games)
	}
	nearly(t, "sum of ordinals", total, 6*3)
	if _, err := Summaries([]string{"A", "B"}, []GameResult{{Seats: []int{0, 5}, Returns: []float64{1, 0}}}); err == nil {
		t.Error("an agent index out of range was accepted")
	}
}

// In a two-player game the columns are the classical ones: a sole win is a
// win, the pair score is (wins + draws/2)/games as in the pairwise table,
// and the mean ordinal is 2 minus it (study 003's figures satisfy this).
func TestSummariesTwoPlayers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var results []GameResult
	for i := range 200 {
		r := []float64{1, -1}
		switch rng.IntN(3) {
		case 1:
			r = []float64{-1, 1}
		case 2:
			r = []float64{0, 0}
		}
		results = append(results, GameResult{Seats: []int{i % 2, 1 - i%2}, Returns: r})
	}
	sums, err := Summaries([]string{"x", "y"}, results)
	if err != nil {
		t.Fatal(err)
	}
	outs := make([]Outcome, len(results))
	for i, r := range results {
		outs[i] = Outcome{Agents: r.Seats, Returns: r.Returns}
	}
	table, err := PairwiseTable(2, outs)
	if err != nil {
		t.Fatal(err)
	}
	for a, s := range sums {
		p := table[a][1-a]
		if s.SoleWins != p.Wins || s.SharedWins != p.Draws || s.PairWins != p.Wins || s.PairDraws != p.Draws || s.PairLosses != p.Losses {
			t.Errorf("%s: %+v, pairwise table %+v", s.Agent, s, p)
		}
		nearly(t, s.Agent+" pair score", s.PairScore.Value, p.Score.Value)
		nearly(t, s.Agent+" mean ordinal", s.MeanOrdinal.Value, 2-p.Score.Value)
		if s.MoveTime != 0 || s.Moves != 0 {
			t.Errorf("%s: time %v over %d moves, want none recorded", s.Agent, s.MoveTime, s.Moves)
		}
	}
}

// A tournament records every decision's time: per agent the moves add up
// to the games' decisions, and the times are positive.
func TestTournamentMoveTimes(t *testing.T) {
	g := games.MustNew("tictactoe")
	res, err := Tournament(context.Background(), g, TournamentConfig{Agents: []string{"random", "onestep"}, Games: 6, Seed: 3, Parallel: 1, Bootstrap: -1})
	if err != nil {
		t.Fatal(err)
	}
	decisions := 0
	for _, r := range res.Games {
		decisions += r.Length
	}
	moves := 0
	for _, s := range res.PerAgent {
		moves += s.Moves
		if s.Games != 6 || s.Moves == 0 || !(s.MoveTime > 0) {
			t.Errorf("%s: %d games, %d moves, %v s per move", s.Agent, s.Games, s.Moves, s.MoveTime)
		}
	}
	if moves != decisions {
		t.Errorf("moves per agent add up to %d, the games have %d decisions", moves, decisions)
	}
}

// A finished game's log carries its summary, checked when read back.
func TestLogSummary(t *testing.T) {
	l, rec := playLogged(t, "tetrislink:players=3", 6)
	if l.Summary == nil {
		t.Fatal("no summary in a finished game's log")
	}
	for p := range rec.Returns {
		if l.Summary.Ordinals[p] != Ordinal(rec.Returns, p) || l.Summary.Moves[p] != rec.Moves[p] || !(l.Summary.MoveTimeMS[p] >= 0) {
			t.Errorf("player %d: summary %+v, record returns %v moves %v", p, l.Summary, rec.Returns, rec.Moves)
		}
	}
	var buf bytes.Buffer
	if err := WriteLog(&buf, l); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	if _, _, err := ReadLog(strings.NewReader(good)); err != nil {
		t.Fatal(err)
	}
	bad := *l
	sum := *l.Summary
	bad.Summary = &sum
	sum.Ordinals = append([]float64(nil), l.Summary.Ordinals...)
	sum.Ordinals[0] += 1
	buf.Reset()
	WriteLog(&buf, &bad)
	if _, _, err := ReadLog(&buf); err == nil || !strings.Contains(err.Error(), "ordinal") {
		t.Errorf("wrong ordinal: error %v", err)
	}
	sum.Ordinals = l.Summary.Ordinals
	sum.Moves = append([]int(nil), l.Summary.Moves...)
	sum.Moves[1]++
	buf.Reset()
	WriteLog(&buf, &bad)
	if _, _, err := ReadLog(&buf); err == nil || !strings.Contains(err.Error(), "decisions for player 1") {
		t.Errorf("wrong move count: error %v", err)
	}
}

// bookWilson is the Wilson score interval (95%) for k successes in n
// trials, written out from Wilson (1927).
func bookWilson(k float64, n int) (lo, hi float64) {
	z, fn := 1.959963984540054, float64(n)
	p := k / fn
	centre := (p + z*z/(2*fn)) / (1 + z*z/fn)
	half := z / (1 + z*z/fn) * math.Sqrt(p*(1-p)/fn+z*z/(4*fn*fn))
	return max(0, centre-half), min(1, centre+half)
}
