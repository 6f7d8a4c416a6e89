package plots

import (
	"context"
	"fmt"
	"github.com/canopy-go/canopy/agent"
	"strconv"
	"strings"
	"testing"

	"github.com/canopy-go/canopy/arena"
	"github.com/canopy-go/canopy/games"
)

// seqHand is a Sequence game written by hand: the deal (player 0 gets the
// spades 2-8, player 1 AH KH QH 2D 3D 4D 5D, one card at a time from
// player 0), then 2S@b10, AH@f9, 3S@c10, KH@g9 with a card drawn after
// each. Unfinished. Rows of the board from the top: 10..1; b10 is row 0
// column 1, f9 row 1 column 5.
func seqHand(p0, p1 string) string {
	var moves []string
	deal := []string{"2S", "AH", "3S", "KH", "4S", "QH", "5S", "2D", "6S", "3D", "7S", "4D", "8S", "5D"}
	for _, c := range deal {
		moves = append(moves, fmt.Sprintf(`{"player":-1,"action":%q}`, c))
	}
	for i, m := range []struct{ play, draw string }{{"2S@b10", "9S"}, {"AH@f9", "9D"}, {"3S@c10", "10S"}, {"KH@g9", "KS"}} {
		moves = append(moves, fmt.Sprintf(`{"player":%d,"action":%q}`, i%2, m.play), fmt.Sprintf(`{"player":-1,"action":%q}`, m.draw))
	}
	return fmt.Sprintf(`{"game":"sequence","players":[%q,%q],"moves":[%s]}`, p0, p1, strings.Join(moves, ","))
}

func TestSequencePlacementsByHand(t *testing.T) {
	logs, err := ParseLogs([]byte(seqHand("mcts", "ppo")+"\n"+seqHand("ppo", "mcts")), "s.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	cell := func(r, c int) int { return r*10 + c }
	b10, c10, f9, g9 := cell(0, 1), cell(0, 2), cell(1, 5), cell(1, 6)
	pl, err := SequencePlacements(logs, ByAgent)
	if err != nil {
		t.Fatal(err)
	}
	// Each agent sat in each seat once: both placed on all four squares.
	want := map[int]int{b10: 1, c10: 1, f9: 1, g9: 1}
	if len(pl.Groups) != 2 || pl.Groups[0] != "mcts" || pl.Groups[1] != "ppo" {
		t.Fatalf("groups %v, want mcts, ppo", pl.Groups)
	}
	for g := range pl.Groups {
		for sq, k := range pl.Counts[g] {
			if k != want[sq] {
				t.Errorf("%s: %d chips on square %d, want %d", pl.Groups[g], k, sq, want[sq])
			}
		}
		if pl.Games[g] != 2 || pl.Total(g) != 4 {
			t.Errorf("%s: %d games, %d chips; want 2 and 4", pl.Groups[g], pl.Games[g], pl.Total(g))
		}
	}
	pl, err = SequencePlacements(logs, BySeat)
	if err != nil {
		t.Fatal(err)
	}
	seatWant := []map[int]int{{b10: 2, c10: 2}, {f9: 2, g9: 2}}
	for g := range seatWant {
		for sq, k := range pl.Counts[g] {
			if k != seatWant[g][sq] {
				t.Errorf("player %d: %d chips on square %d, want %d", g, k, sq, seatWant[g][sq])
			}
		}
	}
	if pl.RowNames[0] != "10" || pl.ColNames[9] != "j" {
		t.Errorf("row and column names %v %v", pl.RowNames, pl.ColNames)
	}
	ttt, err := ParseLogs([]byte(xWins5), "t.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := SequencePlacements(append(logs, ttt...), ByAgent); err == nil || !strings.Contains(err.Error(), "log 3 is a game of tictactoe") {
		t.Errorf("a tictactoe log among sequence logs: %v", err)
	}
}

// Random games with jacks: the counts agree with the action texts
// ("CARD@SQUARE"; one-eyed jacks JS and JH remove chips, "@dead"
// exchanges a card, "pass" passes), and the drawn heatmap writes each
// non-zero count in its cell.
func TestSequencePlacementsRandomGames(t *testing.T) {
	g, err := games.New("sequence")
	if err != nil {
		t.Fatal(err)
	}
	var logs []*arena.Log
	for i := range 4 {
		specs := []string{"random", "onestep"}
		if i%2 == 1 {
			specs[0], specs[1] = specs[1], specs[0]
		}
		ags, err := arena.NewAgents(g, specs, agent.Env{Seed: uint64(i)})
		if err != nil {
			t.Fatal(err)
		}
		rec, err := arena.PlayGame(context.Background(), g, ags, specs, uint64(100+i))
		arena.CloseAgents(ags)
		if err != nil {
			t.Fatal(err)
		}
		l, err := arena.LogFromRecord(g, rec, 0)
		if err != nil {
			t.Fatal(err)
		}
		logs = append(logs, l)
	}
	want := map[string][]int{"random": make([]int, 100), "onestep": make([]int, 100)}
	for _, l := range logs {
		for _, m := range l.Moves {
			card, sq, ok := strings.Cut(m.Action, "@")
			if m.Player < 0 || !ok || sq == "dead" || card == "JS" || card == "JH" {
				continue
			}
			rank, err := strconv.Atoi(sq[1:])
			if err != nil || sq[0] < 'a' || sq[0] > 'j' || rank < 1 || rank > 10 {
				t.Fatalf("move %q: not a square", m.Action)
			}
			want[l.Players[m.Player]][(10-rank)*10+int(sq[0]-'a')]++
		}
	}
	pl, err := SequencePlacements(logs, ByAgent)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for g, name := range pl.Groups {
		for sq, k := range pl.Counts[g] {
			if k != want[name][sq] {
				t.Errorf("%s: %d chips on square %d, the moves say %d", name, k, sq, want[name][sq])
			}
			if k > 0 {
				labels = append(labels, strconv.Itoa(k))
			}
		}
	}
	doc := render(t, PlacementFigure("sequence", pl))
	var got []string
	for _, x := range doc.texts {
		if strings.Contains(x.style, fmt.Sprintf("font-size:%dpx", cellLabelSize)) {
			got = append(got, x.s)
		}
	}
	if !sameMultiset(got, labels) {
		t.Errorf("cell labels %v, want the non-zero counts %v", got, labels)
	}
	for _, name := range pl.Groups {
		if doc.textContaining(": "+name) != 1 {
			t.Errorf("no panel title for %s", name)
		}
	}
}

func sameMultiset(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	n := map[string]int{}
	for _, x := range a {
		n[x]++
	}
	for _, x := range b {
		n[x]--
	}
	for _, v := range n {
		if v != 0 {
			return false
		}
	}
	return true
}
