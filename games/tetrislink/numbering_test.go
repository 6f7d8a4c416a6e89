package tetrislink

import (
	"strings"
	"testing"
)

// Human output numbers players as the CLI does everywhere (--player, "player
// 0 (random) plays ...", "player 1 wins"): from 0.
func TestDrawNumbersPlayersFromZero(t *testing.T) {
	g, err := New(3)
	if err != nil {
		t.Fatal(err)
	}
	d := g.NewInitialState().(*State).Draw(-1)
	for _, want := range []string{"player 0 (X)", "player 1 (O)", "player 2 (A)"} {
		if !strings.Contains(d, want) {
			t.Errorf("board panel lacks %q:\n%s", want, d)
		}
	}
	if strings.Contains(d, "player 3") {
		t.Errorf("board panel numbers players from 1:\n%s", d)
	}
}
