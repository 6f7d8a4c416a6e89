package solver_test

import (
	"fmt"

	"github.com/canopy-go/canopy/games/connect4"
	"github.com/canopy-go/canopy/games/connect4/solver"
)

func ExampleSolver_Analyze() {
	// X has three stones on the bottom row (columns 2-4) and is to move:
	// columns 1 and 5 win with X's 4th stone, scoring 22-4 = 18.
	p, err := connect4.ParsePosition("223344")
	if err != nil {
		panic(err)
	}
	s := solver.New()
	fmt.Println(s.Solve(p))
	sc := s.Analyze(p)
	fmt.Println(sc[0], sc[4])
	// Output:
	// 18
	// 18 18
}
