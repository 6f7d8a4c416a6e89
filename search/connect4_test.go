package search

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/connect4"
	"github.com/canopy-go/canopy/games/connect4/solver"
)

// c4Wins returns positions from the reference file whose recorded score
// says the player to move wins within maxStones of its own stones (score
// s = 22 - n/2 - stones, i.e. the larger the closer the win); immediate
// wins (one stone) are left out.
func c4Wins(t *testing.T, file string, maxStones, limit int) []string {
	f, err := os.Open(filepath.Join(dataDir(t), "connect4", file))
	if err != nil {
		t.Skipf("reference file: %v", err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() && len(out) < limit {
		fields := strings.Fields(sc.Text())
		if len(fields) != 2 {
			continue
		}
		score, err := strconv.Atoi(fields[1])
		if err != nil || score <= 0 {
			continue
		}
		n := len(fields[0])
		// Winning with the k-th own stone from now scores (43-n)/2 - k + 1.
		if k := (connect4.Cells+1-n)/2 - score + 1; k >= 2 && k <= maxStones {
			out = append(out, fields[0])
		}
	}
	return out
}

// With enough simulations UCT plays a winning move (solver score > 0) in
// positions the reference file scores as forced short wins.
func TestConnect4FindsForcedWins(t *testing.T) {
	g := games.MustNew("connect4")
	limit := 12
	if testing.Short() {
		limit = 4
	}
	pos := c4Wins(t, "solver_L3_R1.txt", 3, limit)
	if len(pos) == 0 {
		t.Skip("no short forced wins in the reference file")
	}
	sol := solver.New()
	for i, moves := range pos {
		s, err := g.ParseState(moves)
		if err != nil {
			t.Fatalf("%s: %v", moves, err)
		}
		p := s.(*connect4.State).Position()
		if got := sol.Solve(p); got <= 0 {
			t.Fatalf("%s: solver says %d, file says win", moves, got)
		}
		o := DefaultOptions()
		o.Sims = 30000
		if i%2 == 1 {
			o.Rule = UCB1Tuned
		}
		a := newAgent(t, g, o, uint64(i))
		act, err := a.Act(context.Background(), s, s.CurrentPlayer())
		if err != nil {
			t.Fatal(err)
		}
		if sc := sol.ScoreMove(p, int(act)); sc <= 0 {
			t.Errorf("%s (%v): chose column %d with solver score %d; scores %v", moves, o.Rule, act+1, sc, sol.Analyze(p))
		}
	}
}
