package web

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/connect4d"
	"github.com/canopy-go/canopy/games/sequence"
	"github.com/canopy-go/canopy/games/strands"
	"github.com/canopy-go/canopy/games/sushigo"
	"github.com/canopy-go/canopy/games/tetrislink"
)

// positions returns a few random positions of spec (the initial one, some
// midgame ones and a terminal one), reproducible from the seed.
func positions(t *testing.T, spec string, seed uint64) []games.State {
	t.Helper()
	g, err := games.New(spec)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	mask := games.NewMask(g.NumActions())
	joint := make([]games.Action, g.NumPlayers())
	var out []games.State
	for game := range 3 {
		s := g.NewInitialState()
		stop := []int{0, 9, 10000}[game] + rng.IntN(20)
		for i := 0; i < stop && !s.IsTerminal(); i++ {
			games.RandomStep(s, rng, mask, joint)
			if i%7 == 3 {
				out = append(out, s.Clone())
			}
		}
		out = append(out, s)
	}
	return out
}

// renderFor renders s for view with every waiting player's legal moves on
// offer, as the server does for a game between people.
func renderFor(s games.State, view int) stateJSON {
	var waiting []int
	switch p := s.CurrentPlayer(); {
	case p >= 0:
		waiting = []int{p}
	case p == games.SimultaneousPlayer:
		for i := range s.Game().NumPlayers() {
			waiting = append(waiting, i)
		}
	}
	legal := func(p int, m games.Mask) {
		if ss, ok := s.(games.SimultaneousState); ok && s.CurrentPlayer() == games.SimultaneousPlayer {
			ss.LegalFor(p, m)
			return
		}
		s.Legal(m)
	}
	return render(s, view, waiting, nil, legal, nil, games.NoAction)
}

// checkGrid checks the shape of b and that every legal move on offer that
// the board takes sits on an empty cell of its own.
func checkGrid(t *testing.T, st stateJSON, kind string, rows, cols int) {
	t.Helper()
	b := st.Board
	if b == nil || b.Kind != kind || b.Rows != rows || b.Cols != cols || len(b.Cells) != rows || len(b.Actions) != rows {
		t.Fatalf("board %+v, want a %dx%d %s board", b, rows, cols, kind)
	}
	for r := range rows {
		if len(b.Cells[r]) != cols || len(b.Actions[r]) != cols {
			t.Fatalf("row %d: %d cells, %d actions, want %d", r, len(b.Cells[r]), len(b.Actions[r]), cols)
		}
	}
}

// legalIDs are the ids of every move on offer.
func legalIDs(st stateJSON) map[int]bool {
	m := map[int]bool{}
	for _, l := range st.Legal {
		for _, a := range l.Actions {
			m[a.ID] = true
		}
	}
	return m
}

func stones(b *games.Board) (n int) {
	for _, row := range b.Cells {
		for _, v := range row {
			if v >= 0 {
				n++
			}
		}
	}
	return n
}

func TestBoardConnect4d(t *testing.T) {
	for _, spec := range []string{"connect4d:d=2", "connect4d"} {
		for _, s := range positions(t, spec, 1) {
			d := s.Game().(*connect4d.Game).D()
			st := renderFor(s, -1)
			checkGrid(t, st, "connect4d", connect4d.Rows, connect4d.Cols*d)
			b := st.Board
			if b.Boards != d || stones(b) != s.MoveNumber() {
				t.Fatalf("%s: %d boards, %d stones; want %d, %d", spec, b.Boards, stones(b), d, s.MoveNumber())
			}
			if want := s.(*connect4d.State).StepInTurn(); !s.IsTerminal() && b.Active != want || s.IsTerminal() && b.Active != -1 {
				t.Fatalf("active board %d, want %d (terminal %v)", b.Active, want, s.IsTerminal())
			}
			for a := range legalIDs(st) {
				if a/connect4d.Cols != b.Active || b.Actions[0][a] != a || b.Cells[0][a] != -1 {
					t.Fatalf("%s: legal %d (%s) is not a free column of the active board %d", spec, a, s.ActionString(games.Action(a)), b.Active)
				}
			}
		}
	}
}

func TestBoardStrands(t *testing.T) {
	for _, spec := range []string{"strands:size=4", "strands:size=5", "strands"} {
		for _, s := range positions(t, spec, 2) {
			bd := s.Game().(*strands.Game).Board()
			st := renderFor(s, -1)
			checkGrid(t, st, "strands", bd.W, bd.W)
			b := st.Board
			cells := map[int]bool{}
			for r := range b.Rows {
				for c := range b.Cols {
					a := b.Actions[r][c]
					if a < 0 {
						if b.Cells[r][c] != -1 || b.Labels[r][c] != "" {
							t.Fatalf("off-board cell (%d,%d) has a stone or label", r, c)
						}
						continue
					}
					cells[a] = true
					if l := b.Labels[r][c]; len(l) != 1 || l[0] < '1' || l[0] > '6' {
						t.Fatalf("cell %d label %q", a, l)
					}
					if s.ActionString(games.Action(a)) != string(rune('a'+c))+itoa(r+1) {
						t.Fatalf("cell %d at (%d,%d) is %s", a, r, c, s.ActionString(games.Action(a)))
					}
				}
			}
			if len(cells) != bd.N || stones(b) != s.MoveNumber() {
				t.Fatalf("%s: %d cells, %d stones; want %d, %d", spec, len(cells), stones(b), bd.N, s.MoveNumber())
			}
			for a := range legalIDs(st) {
				if int(bd.X[a]) >= b.Rows || b.Actions[bd.X[a]][bd.Y[a]] != a || b.Cells[bd.X[a]][bd.Y[a]] != -1 {
					t.Fatalf("legal %d is not a free cell", a)
				}
			}
		}
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func TestBoardTetrisLink(t *testing.T) {
	for _, spec := range []string{"tetrislink:players=2", "tetrislink:players=4"} {
		for _, s := range positions(t, spec, 3) {
			np := s.Game().NumPlayers()
			st := renderFor(s, -1)
			checkGrid(t, st, "tetrislink", tetrislink.Height, tetrislink.Width)
			b := st.Board
			if stones(b) != 4*s.MoveNumber() || len(b.Players) != np {
				t.Fatalf("%d cells filled, %d players; want %d, %d", stones(b), len(b.Players), 4*s.MoveNumber(), np)
			}
			left := 0
			for _, p := range b.Players {
				left += p.HandCount
			}
			if left != np*tetrislink.NumShapes*tetrislink.PiecesEach-s.MoveNumber() {
				t.Fatalf("%d pieces left after %d placed", left, s.MoveNumber())
			}
			ids := legalIDs(st)
			if len(b.Drops) != len(ids) {
				t.Fatalf("%d drops for %d legal moves", len(b.Drops), len(ids))
			}
			for _, d := range b.Drops {
				if !ids[d.ID] || len(d.Cells) != 4 || !strings.HasPrefix(d.Text, d.Orient+"@") {
					t.Fatalf("drop %+v", d)
				}
				for _, rc := range d.Cells {
					if b.Cells[rc[0]][rc[1]] != -1 {
						t.Fatalf("drop %s covers a full cell", d.Text)
					}
				}
			}
		}
	}
}

// checkResampled checks that the view of player v is the same for every
// state the game says v cannot tell from s: nothing hidden reaches it.
func checkResampled(t *testing.T, s games.State, v int, rng *rand.Rand) {
	t.Helper()
	want, _ := json.Marshal(renderFor(s, v))
	for range 3 {
		o := s.Clone()
		s.(games.Resampler).Resample(v, rng, o)
		got, _ := json.Marshal(renderFor(o, v))
		if string(got) != string(want) {
			t.Fatalf("player %d's view depends on hidden cards:\n%s\n%s", v, want, got)
		}
	}
}

func TestBoardSequence(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, spec := range []string{"sequence", "sequence:players=3"} {
		for _, s := range positions(t, spec, 4) {
			_ = s.(*sequence.State)
			np := s.Game().NumPlayers()
			for v := -1; v < np; v++ {
				st := renderFor(s, v)
				checkGrid(t, st, "sequence", 10, 10)
				b := st.Board
				if len(b.Players) != np || b.Labels[0][0] != "*" || b.Labels[9][9] != "*" || b.Labels[0][1] != "2S" {
					t.Fatalf("players %d, faces %v", len(b.Players), b.Labels[0])
				}
				for _, p := range b.Players {
					if shown := v < 0 || p.Player == v; shown == p.Hidden || !shown && p.Hand != nil || p.HandCount != len(p.Hand) && shown {
						t.Fatalf("view %d: player %d hand %v hidden %v (%d cards)", v, p.Player, p.Hand, p.Hidden, p.HandCount)
					}
				}
				for _, l := range st.Legal {
					if v >= 0 && l.Player != v {
						t.Fatalf("view %d lists player %d's moves", v, l.Player)
					}
				}
				ids := legalIDs(st)
				for r := range 10 {
					for c := range 10 {
						if a := b.Actions[r][c]; a >= 0 {
							if !ids[a] || a%100 != r*10+c || b.Cells[r][c] != -1 || b.Marks[r][c] != 1 {
								t.Fatalf("cell %d,%d takes %d (%s)", r, c, a, s.ActionString(games.Action(a)))
							}
						}
					}
				}
				if v >= 0 && !s.IsTerminal() {
					checkResampled(t, s, v, rng)
				}
			}
		}
	}
}

func TestBoardSushiGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, spec := range []string{"sushigo:players=2", "sushigo:players=4", "sushigo-seq:players=3"} {
		for _, s := range positions(t, spec, 5) {
			sg := s.(*sushigo.State)
			np := s.Game().NumPlayers()
			for v := -1; v < np; v++ {
				st := renderFor(s, v)
				b := st.Board
				if b == nil || b.Kind != "sushigo" || len(b.Players) != np {
					t.Fatalf("board %+v", b)
				}
				for _, p := range b.Players {
					knows := v < 0 || sg.Knows(v, p.Player)
					if knows == p.Hidden || p.HandCount != sg.Hand(p.Player).Total() || knows && len(p.Hand) != p.HandCount || !knows && p.Hand != nil {
						t.Fatalf("view %d: player %d hand %v hidden %v (%d cards)", v, p.Player, p.Hand, p.Hidden, p.HandCount)
					}
					n := len(p.Table) // a nigiri on its wasabi is one chip for two cards
					for _, c := range p.Table {
						if strings.HasPrefix(c, "wasabi+") {
							n++
						}
					}
					if n != sg.Table(p.Player).Total() {
						t.Fatalf("player %d: table %v, want %d cards", p.Player, p.Table, sg.Table(p.Player).Total())
					}
					for i, a := range p.HandActions {
						if s.CurrentPlayer() != games.ChancePlayer && s.ActionString(games.Action(a)) != p.Hand[i] {
							t.Fatalf("hand card %s picks %s", p.Hand[i], s.ActionString(games.Action(a)))
						}
					}
				}
				if v >= 0 && !s.IsTerminal() {
					checkResampled(t, s, v, rng)
				}
			}
		}
	}
}

// TestHiddenHistory: a player's view of a game between a person and an
// agent shows neither the dealt cards nor a pick the trick has not
// revealed, nor the agent's legal moves.
func TestHiddenHistory(t *testing.T) {
	_, hs := testServer(t, Config{})
	st := create(t, hs, "sushigo-seq:players=2", "random", "human")
	if code, msg := call(t, hs, "POST", "/api/games/"+st.ID+"/agent", nil, &st); code != 200 {
		t.Fatalf("agent: %d %s", code, msg)
	}
	if st.View != 1 || len(st.History) == 0 || st.History[len(st.History)-1] != "p0:hidden" {
		t.Fatalf("view %d, history %v: want player 0's pick hidden", st.View, st.History)
	}
	for _, h := range st.History[:len(st.History)-1] {
		if h != "chance" {
			t.Fatalf("history %v shows a dealt card", st.History)
		}
	}
	if len(st.Legal) != 1 || st.Legal[0].Player != 1 || st.Board.Players[0].Hand != nil || st.Board.Players[0].Note != "has chosen" {
		t.Fatalf("legal %v, player 0 %+v", st.Legal, st.Board.Players[0])
	}
}
