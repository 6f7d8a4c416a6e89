package spec

import (
	"strings"
	"testing"
	"time"
)

func TestRoleApply(t *testing.T) {
	var dir float64
	var n int
	base := Table{Float("dir", &dir, 0, 0, 10, "root noise alpha"), Int("n", &n, 3, 1, 9, "rows")}
	r := Role{Name: "self-play", Of: "az", Overrides: []Override{{Key: "dir", Default: "1", Why: "self-play explores"}}}
	tab := r.Apply(base)
	if dir != 0 {
		t.Fatalf("Apply stored %g; it must not touch the values", dir)
	}
	if base[0].Default != "0" || strings.Contains(base[0].Help, "[") {
		t.Fatalf("Apply changed the base table: %+v", base[0])
	}
	tab.Reset()
	if dir != 1 || n != 3 {
		t.Fatalf("Reset after Apply: dir %g n %d, want 1 and 3", dir, n)
	}
	if got, want := tab[0].Usage(), "root noise alpha [self-play default 1, az 0: self-play explores] ([0, 10])"; got != want {
		t.Errorf("help %q, want %q", got, want)
	}
	role, of, why, ok := OverrideNote(tab[0].Usage())
	if !ok || role != "self-play" || of != "az" || why != "self-play explores" {
		t.Errorf("OverrideNote = %q %q %q %v", role, of, why, ok)
	}
	if _, _, _, ok := OverrideNote(tab[1].Usage()); ok {
		t.Error("an option without override reads as one")
	}
	// A role of a role: the note of the last one is read.
	z := Role{Name: "zero", Of: "self-play", Overrides: []Override{{Key: "dir", Default: "2", Why: "more noise"}}}.Apply(tab)
	if role, of, _, _ := OverrideNote(z[0].Usage()); role != "zero" || of != "self-play" || z[0].Default != "2" {
		t.Errorf("role of a role: %q %q default %s (%s)", role, of, z[0].Default, z[0].Usage())
	}
	for _, bad := range []Role{
		{Name: "x", Of: "y", Overrides: []Override{{Key: "nope", Default: "1", Why: "w"}}},
		{Name: "x", Of: "y", Overrides: []Override{{Key: "dir", Default: "1"}}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%+v: no panic", bad)
				}
			}()
			bad.Apply(base)
		}()
	}
	if got := base.Only("n", "dir").Keys(); strings.Join(got, ",") != "n,dir" {
		t.Errorf("Only = %v", got)
	}
}

func TestNotListText(t *testing.T) {
	var no bool
	var l []string
	var d time.Duration
	tab := Table{Not("reuse", &no, true, "keep the tree"), List("b", &l, []string{"a", "b:x=1,y=2"}, ";", SplitSpecs, "specs"),
		Duration("d", &d, time.Second, time.Minute, "interval")}
	tab.Reset()
	if no || strings.Join(l, "|") != "a|b:x=1,y=2" {
		t.Fatalf("defaults: noreuse %v, list %q", no, l)
	}
	if err := tab.Set("reuse", "false"); err != nil || !no {
		t.Fatalf("reuse=false: %v, stored %v", err, no)
	}
	if v := tab.Values()["reuse"]; v != "false" {
		t.Errorf("reuse reads back %q", v)
	}
	if err := tab.Set("reuse", "maybe"); err == nil {
		t.Error("reuse=maybe accepted")
	}
	if err := tab.Set("b", "random,mcts:sims=10,c=2;onestep"); err != nil || strings.Join(l, "|") != "random|mcts:sims=10,c=2|onestep" {
		t.Errorf("list: %v, %q", err, l)
	}
	if err := tab.Set("b", ""); err != nil || l != nil {
		t.Errorf("empty list: %v, %q", err, l)
	}
}

func TestInterval(t *testing.T) {
	var x float64
	tab := Table{Interval("lr", &x, 0.5, "(0, 1]", "rate")}
	for v, ok := range map[string]bool{"0": false, "1e-300": true, "1": true, "1.0000001": false, "-1": false, "NaN": false, "Inf": false, "x": false} {
		if err := tab.Set("lr", v); (err == nil) != ok {
			t.Errorf("lr=%s: %v, want ok %v", v, err, ok)
		}
	}
	tab = Table{Interval("m", &x, 0, "[0, 1)", "momentum")}
	if tab.Set("m", "0") != nil || tab.Set("m", "1") == nil {
		t.Error("[0, 1): 0 refused or 1 accepted")
	}
	if tab[0].Usage() != "momentum ([0, 1))" {
		t.Errorf("usage %q", tab[0].Usage())
	}
	for _, bad := range []struct {
		rng string
		def float64
	}{{"0, 1", 0.5}, {"(1, 0]", 0.5}, {"(0, 1]", 0}, {"[a, 1]", 0.5}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Interval(%q, default %g): no panic", bad.rng, bad.def)
				}
			}()
			Interval("k", &x, bad.def, bad.rng, "")
		}()
	}
}
