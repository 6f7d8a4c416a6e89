package kernels

import "testing"

// TestTilesForAVX512 pins the AVX-512 tile choice: the least padding of
// n, then the widest strips. It needs no AVX-512 (it only reads tables).
func TestTilesForAVX512(t *testing.T) {
	for _, c := range []struct{ n, nr int }{
		{1, 32}, {16, 32}, {32, 32}, {40, 48}, {48, 48}, {64, 64}, {96, 48}, {128, 64}, {144, 48}, {190, 64},
	} {
		if got := avx512Impl.tilesFor(c.n).nr; got != c.nr {
			t.Errorf("tilesFor(%d): %d-column strips, want %d", c.n, got, c.nr)
		}
	}
	if got := avx2Impl.tilesFor(48).nr; got != 16 {
		t.Errorf("AVX2 tilesFor(48): %d-column strips, want 16", got)
	}
}

// TestTilesForTable checks that the widths tabulated at init (byWidth)
// answer as pickTiles computes, on every implementation and variant this
// CPU runs, across the table's end.
func TestTilesForTable(t *testing.T) {
	for _, im := range append(append([]*impl{}, impls...), variants...) {
		if len(im.tiles) > 0 && len(im.byWidth) != tableWidths {
			t.Errorf("%s: %d widths tabulated, want %d", im.name, len(im.byWidth), tableWidths)
		}
		for n := 0; n < tableWidths+100; n++ {
			if got, want := im.tilesFor(n), im.pickTiles(n); got != want {
				t.Fatalf("%s: tilesFor(%d) = %v, pickTiles %v", im.name, n, got, want)
			}
		}
	}
}
