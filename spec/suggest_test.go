package spec

import "testing"

func TestSuggest(t *testing.T) {
	games := []string{"connect4", "connect4d", "hex", "sequence", "strands", "sushigo", "sushigo-seq", "tetrislink", "tictactoe"}
	for _, c := range []struct {
		name  string
		known []string
		want  string
	}{
		{"conect4", games, "connect4"},  // a deletion
		{"connect5", games, "connect4"}, // a substitution
		{"sequnece", games, "sequence"}, // a transposition
		{"Hex", games, "hex"},           // case only
		{"tetris", games, ""},           // a prefix is not a misspelling (4 edits)
		{"chess", games, ""},            // nothing close
		{"hex", games, ""},              // exact: no suggestion
		{"sim", []string{"sims", "c"}, "sims"},
		{"smis", []string{"sims", "time"}, "sims"},
		{"x", []string{"sims", "time"}, ""},
		{"", games, ""},
	} {
		got := Suggest(c.name, c.known)
		want := ""
		if c.want != "" {
			want = ` (did you mean "` + c.want + `"?)`
		}
		if got != want {
			t.Errorf("Suggest(%q) = %q, want %q", c.name, got, want)
		}
	}
	// Distances checked by hand.
	for _, c := range []struct {
		a, b string
		d    int
	}{{"", "abc", 3}, {"kitten", "sitting", 3}, {"ab", "ba", 1}, {"abc", "abc", 0}, {"ca", "abc", 3}} {
		if d := editDistance([]rune(c.a), []rune(c.b)); d != c.d {
			t.Errorf("editDistance(%q, %q) = %d, want %d", c.a, c.b, d, c.d)
		}
	}
}

// The distance is a metric on any input (symmetric, zero only for equal
// strings), and Suggest never suggests the name itself.
func FuzzSuggest(f *testing.F) {
	f.Add("conect4", "connect4")
	f.Add("", "x")
	f.Add("ü", "u")
	f.Fuzz(func(t *testing.T, a, b string) {
		ra, rb := []rune(a), []rune(b)
		d := editDistance(ra, rb)
		if d != editDistance(rb, ra) {
			t.Fatalf("distance(%q, %q) = %d, not symmetric", a, b, d)
		}
		if (d == 0) != (a == b) && string(ra) == a && string(rb) == b {
			t.Fatalf("distance(%q, %q) = %d", a, b, d)
		}
		if d > max(len(ra), len(rb)) {
			t.Fatalf("distance(%q, %q) = %d exceeds the longer length", a, b, d)
		}
		if best, ok := Closest(a, []string{b}); ok && best == a {
			t.Fatalf("Closest suggested %q for itself", a)
		}
	})
}
