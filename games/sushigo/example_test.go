package sushigo_test

import (
	"fmt"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/sushigo"
)

// A 2-player position two tricks before the end of round 2, drawn as
// player 0 sees it (player 0 has held player 1's hand, so it knows it),
// and player 1's options: it has chopsticks on its table.
func Example() {
	g := games.MustNew("sushigo:players=2")
	s, err := g.ParseState("round=2 hands=TW/SE table=TSSSD2q/DDDNN13C pudding=1,0 score=20,15 deck=TTTTTTTTTTSSSSSSSSSS")
	if err != nil {
		panic(err)
	}
	fmt.Print(s.(games.Drawer).Draw(0))
	m := games.NewMask(g.NumActions())
	s.(games.SimultaneousState).LegalFor(1, m)
	fmt.Println(games.FormatActions(s, m))
	// Output:
	// Sushi Go! round 2, trick 9 of 10
	// P0 score  20 pudding 1 | table TSSSD2q      | hand TW
	// P1 score  15 pudding 0 | table DDD13NNC     | hand SE
	// deck 20 cards
	// sashimi egg chop:sashimi+egg
}
