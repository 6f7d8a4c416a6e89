package games

import (
	"strings"
	"testing"
)

func TestNewSymmetryRejectsNonPermutations(t *testing.T) {
	for _, tc := range []struct {
		obs, act []int
		want     string
	}{
		{[]int{0, 0}, []int{0}, "observation map: two elements map to 0"},
		{[]int{1, 0}, []int{0, 2}, "action map: element 1 maps to 2"},
		{[]int{-1, 0}, []int{0}, "observation map: element 0 maps to -1"},
	} {
		if _, err := NewSymmetry("bad", tc.obs, tc.act); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewSymmetry(%v, %v): %v, want an error containing %q", tc.obs, tc.act, err, tc.want)
		}
	}
	if _, err := NewBoardSymmetry("off", []int{1, 2, 2}, 1, func(r, c int) (int, int) { return r, c + 1 },
		func(a Action) Action { return a }); err == nil || !strings.Contains(err.Error(), "off the 2x2 board") {
		t.Errorf("cell map off the board: %v", err)
	}
}

func TestBoardSymmetryMaps(t *testing.T) {
	// A 2-plane 2x3 board mirrored left-right; 3 actions reversed.
	s, err := NewBoardSymmetry("mirror", []int{2, 2, 3}, 3, func(r, c int) (int, int) { return r, 2 - c },
		func(a Action) Action { return 2 - a })
	if err != nil {
		t.Fatal(err)
	}
	src := []float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}
	dst := make([]float32, len(src))
	s.Observation(dst, src)
	want := []float32{3, 2, 1, 6, 5, 4, 9, 8, 7, 12, 11, 10}
	for i := range want {
		if dst[i] != want[i] {
			t.Fatalf("observation %v, want %v", dst, want)
		}
	}
	pol := make([]float32, 3)
	s.Policy(pol, []float32{0.5, 0.3, 0.2})
	if pol[0] != 0.2 || pol[2] != 0.5 || s.Action(0) != 2 {
		t.Errorf("policy %v, action 0 -> %d", pol, s.Action(0))
	}
	psrc := []float32{0.5, 0.3, 0.2}
	if n := testing.AllocsPerRun(100, func() { s.Observation(dst, src); s.Policy(pol, psrc) }); n != 0 {
		t.Errorf("%v allocations per call, want 0", n)
	}
}
