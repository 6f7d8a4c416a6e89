package strands

import (
	"fmt"
	"testing"

	"github.com/canopy-go/canopy/games/gametest"
)

func BenchmarkRandomPlayout(b *testing.B) {
	for _, size := range []int{4, 5, 6} {
		g, _ := New(size)
		b.Run(fmt.Sprint("size=", size), func(b *testing.B) { gametest.BenchPlayout(b, g) })
	}
}

// BenchmarkApply: the cost of Apply, the final group comparison included.
func BenchmarkApply(b *testing.B) { g, _ := New(6); gametest.BenchApply(b, g) }

func BenchmarkLegal(b *testing.B) { g, _ := New(6); gametest.BenchLegal(b, g) }
