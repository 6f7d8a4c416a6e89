package connect4d

import (
	"fmt"
	"testing"

	"github.com/canopy-go/canopy/games/gametest"
)

func BenchmarkRandomPlayout(b *testing.B) {
	for _, d := range []int{2, 5, 8} {
		g, _ := New(d)
		b.Run(fmt.Sprint("d=", d), func(b *testing.B) { gametest.BenchPlayout(b, g) })
	}
}

// BenchmarkApply: the cost of Apply, win test included.
func BenchmarkApply(b *testing.B) { g, _ := New(5); gametest.BenchApply(b, g) }

func BenchmarkLegal(b *testing.B) { g, _ := New(5); gametest.BenchLegal(b, g) }
