package tetrislink

import (
	"testing"

	"github.com/canopy-go/canopy/games/gametest"
)

// The rules are the outside truth: the mirror must map random games onto
// games with the same legal drops, observations and scores.
func TestMirrorFollowsTheRules(t *testing.T) {
	for players := 2; players <= MaxPlayers; players++ {
		g, err := New(players)
		if err != nil {
			t.Fatal(err)
		}
		gametest.Symmetries(t, g, []string{"mirror"}, 20, uint64(players))
	}
}

// Spot checks from the pictures: a Z is a mirrored S, a J a mirrored L, and
// a horizontal I at the left edge lands at the right edge.
func TestMirrorOfPieces(t *testing.T) {
	g, _ := New(2)
	s := g.Symmetries()[0]
	for _, c := range []struct{ from, to string }{
		{"S0@1", "S2@8"}, {"S1@1", "S3@9"}, {"L0@1", "L4@9"}, {"T1@3", "T3@7"}, {"I0@1", "I0@7"}, {"O0@5", "O0@5"},
	} {
		st := g.NewState()
		a, err := st.ParseAction(c.from)
		if err != nil {
			t.Fatal(err)
		}
		if got := st.ActionString(s.Action(a)); got != c.to {
			t.Errorf("mirror of %s = %s, want %s", c.from, got, c.to)
		}
	}
}
