package connect4_test

import (
	"fmt"

	"github.com/canopy-go/canopy/games"
	_ "github.com/canopy-go/canopy/games/connect4"
)

func Example() {
	g := games.MustNew("connect4")
	s, err := g.ParseState("4453") // Pons' notation: columns 1..7
	if err != nil {
		panic(err)
	}
	fmt.Print(s.(games.Drawer).Draw(-1))
	// Output:
	//  1 2 3 4 5 6 7
	// |. . . . . . .|
	// |. . . . . . .|
	// |. . . . . . .|
	// |. . . . . . .|
	// |. . . O . . .|
	// |. . O X X . .|
	// X to move
}
