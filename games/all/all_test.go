package all

import (
	"testing"

	"github.com/canopy-go/canopy/games"
	"github.com/canopy-go/canopy/games/gametest"
)

// Every registered game must build with its default options and pass a
// short run of the conformance suite (the games' own tests run it at
// length with their option variants).
func TestEveryGameConforms(t *testing.T) {
	regs := games.Registered()
	if len(regs) < 9 {
		t.Fatalf("only %d games registered", len(regs))
	}
	for _, r := range regs {
		t.Run(r.Name, func(t *testing.T) {
			g, err := games.New(r.Name)
			if err != nil {
				t.Fatal(err)
			}
			gametest.Run(t, g, gametest.Options{Games: 3})
		})
	}
}
