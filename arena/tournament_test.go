package arena

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/tetrislink"
	_ "github.com/canopy-go/canopy/games/tictactoe"
)

func TestScheduleBalanced(t *testing.T) {
	for _, tc := range []struct{ n, k, games, tables int }{
		{2, 2, 4, 1}, {2, 3, 2, 3}, {2, 5, 6, 10}, {3, 3, 3, 1}, {3, 5, 6, 10}, {4, 6, 4, 15}, {4, 4, 8, 1},
	} {
		sched, err := Schedule(tc.n, tc.k, tc.games)
		if err != nil {
			t.Fatal(err)
		}
		if len(sched) != tc.tables*tc.games {
			t.Fatalf("%+v: %d games, want %d", tc, len(sched), tc.tables*tc.games)
		}
		seat := make([][]int, tc.k) // seat[a][s]: games agent a played in seat s
		for a := range seat {
			seat[a] = make([]int, tc.n)
		}
		meet := map[[2]int]int{}
		for _, g := range sched {
			for s, a := range g {
				seat[a][s]++
				for _, b := range g[s+1:] {
					if a == b {
						t.Fatalf("%+v: agent %d twice in %v", tc, a, g)
					}
					meet[[2]int{min(a, b), max(a, b)}]++
				}
			}
		}
		// Each agent is in C(k-1, n-1) tables and takes each seat games/n
		// times per table.
		per := binom(tc.k-1, tc.n-1) * tc.games / tc.n
		for a := range seat {
			for s := range seat[a] {
				if seat[a][s] != per {
					t.Errorf("%+v: agent %d in seat %d %d times, want %d", tc, a, s, seat[a][s], per)
				}
			}
		}
		if len(meet) != binom(tc.k, 2) {
			t.Errorf("%+v: %d pairs met, want %d", tc, len(meet), binom(tc.k, 2))
		}
		for p, c := range meet {
			if want := binom(tc.k-2, tc.n-2) * tc.games; c != want {
				t.Errorf("%+v: pair %v met %d times, want %d", tc, p, c, want)
			}
		}
	}
	// Two players: seats alternate, the lower index first.
	sched, _ := Schedule(2, 2, 3)
	if want := [][]int{{0, 1}, {1, 0}, {0, 1}}; !reflect.DeepEqual(sched, want) {
		t.Errorf("schedule %v, want %v", sched, want)
	}
	for _, bad := range [][3]int{{1, 3, 2}, {3, 2, 2}, {2, 3, 0}} {
		if _, err := Schedule(bad[0], bad[1], bad[2]); err == nil {
			t.Errorf("Schedule%v accepted", bad)
		}
	}
}

func binom(n, k int) int {
	r := 1
	for i := range k {
		r = r * (n - i) / (i + 1)
	}
	return r
}

func TestTournamentTicTacToe(t *testing.T) {
	g, err := games.New("tictactoe")
	if err != nil {
		t.Fatal(err)
	}
	cfg := TournamentConfig{Agents: []string{"random", "onestep", "random"}, Games: 60, Seed: 5, Parallel: 1, Bootstrap: 50}
	calls := 0
	cfg.Progress = func(done int) {
		calls++
		if done != calls {
			t.Errorf("progress %d after %d calls", done, calls)
		}
	}
	r1, err := Tournament(context.Background(), g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if calls != 180 || r1.TotalGames != 180 {
		t.Errorf("progress calls %d, games %d, want 180", calls, r1.TotalGames)
	}
	cfg.Parallel, cfg.Progress = 4, nil
	r2, err := Tournament(context.Background(), g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(withoutTimes(r1), withoutTimes(r2)) {
		t.Error("results depend on Parallel")
	}
	// onestep takes immediate wins, so it must outscore random (an
	// assumption about the baseline, not about the arena) and come first
	// in every rating.
	if s := r1.Pairwise[1][0].Score; s == nil || s.Lo <= 0.5 {
		t.Errorf("onestep vs random score %+v, want clearly above 50%%", s)
	}
	for _, other := range []int{0, 2} {
		if r1.Elo[1].Value <= r1.Elo[other].Value || r1.BradleyTerry[1].Value <= r1.BradleyTerry[other].Value || r1.ILSR[1] <= r1.ILSR[other] {
			t.Errorf("onestep not rated above agent %d: %+v %+v %v", other, r1.Elo, r1.BradleyTerry, r1.ILSR)
		}
	}
	for a := range 3 {
		if p := r1.Pairwise[a][(a+1)%3]; p.Games != 60 || p.Wins+p.Draws+p.Losses != 60 {
			t.Errorf("pair %d: %+v", a, p)
		}
		// Tic-tac-toe lasts 5 to 9 moves.
		if l := r1.Length[a]; l.N != 120 || l.Min < 5 || l.Max > 9 {
			t.Errorf("agent %d lengths %+v", a, l)
		}
	}
	// Games recorded in schedule order with the scheduled seats.
	sched, _ := Schedule(2, 3, 60)
	for i, gr := range r1.Games {
		if !reflect.DeepEqual(gr.Seats, sched[i]) {
			t.Fatalf("game %d seats %v, want %v", i, gr.Seats, sched[i])
		}
	}
}

func TestTournamentFreeForAll(t *testing.T) {
	g, err := games.New("tetrislink:players=3")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Tournament(context.Background(), g, TournamentConfig{
		Agents: []string{"random", "random", "random", "random"}, Games: 3, Seed: 2, Bootstrap: 20,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.TotalGames != 4*3 {
		t.Errorf("%d games, want 12", res.TotalGames)
	}
	for a := range 4 {
		for b := range 4 {
			// Every pair shares C(2,1) = 2 tables of 3 games.
			if p := res.Pairwise[a][b]; a != b && p.Games != 6 {
				t.Errorf("pair %d,%d met %d times, want 6", a, b, p.Games)
			}
		}
	}
	if len(res.Elo) != 4 || len(res.BradleyTerry) != 4 || len(res.ILSR) != 4 {
		t.Errorf("ratings missing: %+v", res)
	}
}

func TestTournamentErrors(t *testing.T) {
	g, _ := games.New("tictactoe")
	ctx := context.Background()
	for _, tc := range []struct {
		cfg  TournamentConfig
		want string
	}{
		{TournamentConfig{Agents: []string{"random"}, Games: 2}, "at least 2 agents"},
		{TournamentConfig{Agents: []string{"random", "nosuchagent"}, Games: 2}, "nosuchagent"},
		{TournamentConfig{Agents: []string{"random", "random"}, Games: 0}, "positive"},
	} {
		if _, err := Tournament(ctx, g, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err %v, want it to mention %q", tc.cfg, err, tc.want)
		}
	}
	g3, _ := games.New("tetrislink:players=3")
	if _, err := Tournament(ctx, g3, TournamentConfig{Agents: []string{"random", "random"}, Games: 1}); err == nil || !strings.Contains(err.Error(), "at least 3 agents") {
		t.Errorf("too few agents for FFA: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Tournament(cctx, g, TournamentConfig{Agents: []string{"random", "random"}, Games: 50}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err %v", err)
	}
}

func BenchmarkTournamentTicTacToe(b *testing.B) {
	g, _ := games.New("tictactoe")
	cfg := TournamentConfig{Agents: []string{"random", "onestep", "random", "onestep"}, Games: 50, Seed: 1, Bootstrap: 200}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		res, err := Tournament(context.Background(), g, cfg)
		if err != nil {
			b.Fatal(err)
		}
		n += res.TotalGames
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "games/s")
}

// withoutTimes returns a copy of r without the measured times (wall-clock
// time per move), the only part of a result that may differ between runs.
func withoutTimes(r *TournamentResult) *TournamentResult {
	c := *r
	c.Games = make([]GameResult, len(r.Games))
	for i, g := range r.Games {
		g.Think = nil
		c.Games[i] = g
	}
	c.PerAgent = append([]AgentSummary(nil), r.PerAgent...)
	for i := range c.PerAgent {
		c.PerAgent[i].MoveTime = 0
	}
	return &c
}

// OnGame sees every finished game once, with its schedule index, and its
// error stops the tournament.
func TestTournamentOnGame(t *testing.T) {
	g, _ := games.New("tictactoe")
	seen := make(chan int, 16)
	cfg := TournamentConfig{Agents: []string{"random", "onestep"}, Games: 8, Seed: 2, Parallel: 3, Bootstrap: -1,
		OnGame: func(i int, rec *Record, _ uint64) error {
			if len(rec.Actions) == 0 {
				t.Errorf("game %d: empty record", i)
			}
			seen <- i
			return nil
		}}
	if _, err := Tournament(context.Background(), g, cfg); err != nil {
		t.Fatal(err)
	}
	close(seen)
	got := map[int]bool{}
	for i := range seen {
		if got[i] {
			t.Fatalf("game %d reported twice", i)
		}
		got[i] = true
	}
	if len(got) != 8 {
		t.Fatalf("OnGame saw %d games, want 8", len(got))
	}
	stop := errors.New("disk full")
	cfg.OnGame = func(int, *Record, uint64) error { return stop }
	res, err := Tournament(context.Background(), g, cfg)
	if !errors.Is(err, stop) {
		t.Fatalf("err = %v, want the OnGame error", err)
	}
	if res != nil && !res.Partial {
		t.Fatal("a stopped tournament's result is not marked partial")
	}
}
