package tetrislink

import (
	"reflect"
	"runtime"
	"testing"
)

// TestTuneDeterministic: Tune's result depends on its seed only, not on how
// many goroutines play the games; with no iterations the tuned mean is the
// user weights, scored against themselves.
func TestTuneDeterministic(t *testing.T) {
	g, err := New(2)
	if err != nil {
		t.Fatal(err)
	}
	c := TuneConfig{Games: 4, Iters: 2, Pop: 3, FinalGames: 4, Seed: 9}
	a := Tune(g, c, nil)
	prev := runtime.GOMAXPROCS(1)
	b := Tune(g, c, nil)
	runtime.GOMAXPROCS(prev)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("GOMAXPROCS changed the result:\n%+v\n%+v", a, b)
	}
	if len(a.History) != 2 || a.BestIter < 1 {
		t.Errorf("history %+v, best iteration %d", a.History, a.BestIter)
	}
	var lines int
	z := Tune(g, TuneConfig{Games: 2, Pop: 2, FinalGames: 4, Seed: 1}, func(string) { lines++ })
	if z.Mean != UserWeights.String() || lines != 0 || z.BestCandidate != "" {
		t.Errorf("no iterations: mean %s (want the user weights %s), %d progress lines, best %q", z.Mean, UserWeights, lines, z.BestCandidate)
	}
	if z.Rate < 0 || z.Rate > 1 {
		t.Errorf("score rate %v outside [0, 1]", z.Rate)
	}
}
